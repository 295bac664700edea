"""Generate ``stdio_tasks.jsonl``: small competitive-programming tasks (stdin in, stdout out).

Each item has a statement (``prompt``), a ``reference`` stdio spec in the ``code`` grader's form
(the first tests ``visible``, as a statement's examples are; the rest hidden), its ``language``
(Python or C++), a correct program as ``metadata.canonical_solution``, and labelled responses:
a right program and a wrong one written the way models get such tasks wrong (an off-by-one, a
debug print left in, a misread statement). One item has several right answers per test and a
special judge (``checker``) that decides. Written for this project.
"""

from __future__ import annotations

import json
from pathlib import Path


def _tests(pairs: list[tuple[str, str]], visible: int = 1) -> list[dict[str, object]]:
    return [
        {"stdin": i, "stdout": o, **({"visible": True} if k < visible else {})}
        for k, (i, o) in enumerate(pairs)
    ]


def _statement(text: str, tests: list[dict[str, object]], language: str) -> str:
    shown = [t for t in tests if t.get("visible")]
    examples = "\n\n".join(
        f"Example input:\n{t['stdin']}\nExample output:\n{t['stdout']}" for t in shown
    )
    name = {"python": "Python 3", "cpp": "C++17"}[language]
    return (
        f"{text}\n\n{examples}\n\nWrite a complete {name} program that reads standard input and "
        "writes standard output, in one fenced code block."
    )


MAX_PY = """n = int(input())
values = list(map(int, input().split()))
print(max(values))
"""

PRIME_CPP = """#include <iostream>
int main() {
    long long n;
    std::cin >> n;
    bool prime = n >= 2;
    for (long long d = 2; d * d <= n && prime; ++d)
        if (n % d == 0) prime = false;
    std::cout << (prime ? "YES" : "NO") << "\\n";
}
"""

DISTINCT_PY = """input()
print(len(set(input().split())))
"""

REVERSE_CPP = """#include <iostream>
#include <sstream>
#include <string>
#include <vector>
int main() {
    std::string line, word;
    std::getline(std::cin, line);
    std::istringstream in(line);
    std::vector<std::string> words;
    while (in >> word) words.push_back(word);
    for (size_t i = words.size(); i-- > 0;)
        std::cout << words[i] << (i ? " " : "");
    std::cout << "\\n";
}
"""

PATHS_CPP = """#include <iostream>
#include <vector>
int main() {
    const long long M = 1000000007;
    int r, c;
    std::cin >> r >> c;
    std::vector<long long> row(c + 1, 1);
    for (int i = 1; i <= r; ++i)
        for (int j = 1; j <= c; ++j) row[j] = (row[j] + row[j - 1]) % M;
    std::cout << row[c] << "\\n";
}
"""

DIVISOR_PY = """n = int(input())
d = 2
while d * d <= n and n % d:
    d += 1
print(d if d * d <= n else -1)
"""

# the special judge of the divisor item: any d with 1 < d < n dividing n, or -1 exactly when n
# is prime; one token, nothing else. It reads the test's input, the program's output, the answer.
DIVISOR_CHECKER = """import sys

n = int(open(sys.argv[1]).read().split()[0])
tokens = open(sys.argv[2]).read().split()
answer = int(open(sys.argv[3]).read().split()[0])
if len(tokens) != 1 or not tokens[0].lstrip("-").isdigit():
    sys.exit(1)
got = int(tokens[0])
if answer == -1:
    sys.exit(0 if got == -1 else 1)
sys.exit(0 if 1 < got < n and n % got == 0 else 1)
"""

ITEMS = [
    {
        "id": "max_of_list",
        "language": "python",
        "text": "The first line holds n (1 <= n <= 1000), the second n integers between -10^9 "
        "and 10^9. Print the largest of them.",
        "tests": [
            ("3\n4 9 2\n", "9\n"),
            ("1\n-5\n", "-5\n"),
            ("4\n-3 -1 -7 -2\n", "-1\n"),
            ("5\n10 20 30 40 50\n", "50\n"),
            ("6\n8 8 1 8 0 7\n", "8\n"),
        ],
        "solution": MAX_PY,
        "responses": [
            ("right", True, MAX_PY),
            # a debug print left in: the running maximum on every step, the answer last
            (
                "debug_prints",
                False,
                "n = int(input())\nbest = None\nfor v in map(int, input()"
                ".split()):\n    best = v if best is None or v > best else best\n    print(best)\n",
            ),
            (
                "starts_at_zero",
                False,
                "input()\nbest = 0\nfor v in map(int, input().split()):\n"
                "    best = max(best, v)\nprint(best)\n",
            ),
        ],
    },
    {
        "id": "is_prime",
        "language": "cpp",
        "text": "Read an integer n (1 <= n <= 10^12). Print YES if n is prime, otherwise NO.",
        "tests": [
            ("7\n", "YES\n"),
            ("9\n", "NO\n"),
            ("1\n", "NO\n"),
            ("2\n", "YES\n"),
            ("999999999989\n", "YES\n"),
            ("1000000000000\n", "NO\n"),
        ],
        "solution": PRIME_CPP,
        "responses": [
            ("right", True, PRIME_CPP),
            ("one_is_prime", False, PRIME_CPP.replace("n >= 2", "n >= 1")),
        ],
    },
    {
        "id": "count_distinct",
        "language": "python",
        "text": "The first line holds n (1 <= n <= 10^5), the second n integers. Print how many "
        "distinct values there are.",
        "tests": [
            ("5\n1 2 2 3 3\n", "3\n"),
            ("1\n42\n", "1\n"),
            ("4\n7 7 7 7\n", "1\n"),
            ("6\n1 2 3 4 5 6\n", "6\n"),
            ("5\n-1 1 -1 1 0\n", "3\n"),
        ],
        "solution": DISTINCT_PY,
        "responses": [
            ("right", True, DISTINCT_PY),
            # counts values seen exactly once, a misreading of "distinct"
            (
                "counts_singletons",
                False,
                "from collections import Counter\ninput()\n"
                "c = Counter(input().split())\nprint(sum(1 for v in c.values() if v == 1))\n",
            ),
        ],
    },
    {
        "id": "reverse_words",
        "language": "cpp",
        "text": "Read one line of words separated by single spaces. Print the words in reverse "
        "order, separated by single spaces.",
        "tests": [
            ("one two three\n", "three two one\n"),
            ("solo\n", "solo\n"),
            ("a b\n", "b a\n"),
            ("the quick brown fox\n", "fox brown quick the\n"),
        ],
        "solution": REVERSE_CPP,
        "responses": [
            ("right", True, REVERSE_CPP),
            # reverses the characters, not the words
            (
                "reverses_letters",
                False,
                "#include <iostream>\n#include <string>\n#include "
                "<algorithm>\nint main() {\n    std::string s;\n    std::getline(std::cin, s);\n"
                '    std::reverse(s.begin(), s.end());\n    std::cout << s << "\\n";\n}\n',
            ),
        ],
    },
    {
        "id": "grid_paths",
        "language": "cpp",
        "text": "Read r and c (1 <= r, c <= 1000). Print the number of shortest paths along the "
        "grid lines from one corner of an r by c grid of squares to the opposite corner, "
        "modulo 1000000007.",
        "tests": [
            ("2 2\n", "6\n"),
            ("1 1\n", "2\n"),
            ("3 2\n", "10\n"),
            ("1000 1000\n", "72475738\n"),
            ("10 3\n", "286\n"),
        ],
        "solution": PATHS_CPP,
        "responses": [
            ("right", True, PATHS_CPP),
            # no modulus: overflows on the large grid
            ("no_modulus", False, PATHS_CPP.replace(" % M", "")),
        ],
    },
    {
        "id": "any_divisor",
        "language": "python",
        "text": "Read n (2 <= n <= 10^12). Print any divisor d of n with 1 < d < n, or -1 if n "
        "is prime. Any such divisor is accepted.",
        "tests": [
            ("12\n", "2\n"),
            ("13\n", "-1\n"),
            ("49\n", "7\n"),
            ("1000000000000\n", "2\n"),
            ("999999999989\n", "-1\n"),
            ("221\n", "13\n"),
        ],
        "checker": DIVISOR_CHECKER,
        "solution": DIVISOR_PY,
        "responses": [
            ("right", True, DIVISOR_PY),
            # the largest proper divisor: as right as the smallest, and the judge accepts it
            (
                "largest_divisor",
                True,
                "n = int(input())\nd = 2\nwhile d * d <= n and n % d:\n"
                "    d += 1\nprint(n // d if d * d <= n else -1)\n",
            ),
            ("one_for_primes", False, DIVISOR_PY.replace("else -1", "else 1")),
        ],
    },
]


def rows() -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for item in ITEMS:
        language = str(item["language"])
        tests = _tests(item["tests"])  # type: ignore[arg-type]
        spec: dict[str, object] = {"language": language, "stdio": tests}
        if "checker" in item:
            spec["checker"] = {"language": "python", "source": item["checker"]}
        prompt = _statement(str(item["text"]), tests, language)
        for name, label, program in item["responses"]:  # type: ignore[attr-defined]
            out.append(
                {
                    "id": f"{item['id']}-{name}",
                    "group": item["id"],
                    "prompt": prompt,
                    "reference": spec,
                    "response": f"```{language}\n{program}```",
                    "label": label,
                    "metadata": {"canonical_solution": item["solution"], "kind": name},
                }
            )
    return out


def main() -> None:
    path = Path(__file__).with_name("stdio_tasks.jsonl")
    with path.open("w", encoding="utf-8") as handle:
        for row in rows():
            handle.write(json.dumps(row) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
