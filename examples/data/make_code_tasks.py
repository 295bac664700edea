"""Generate ``code_tasks.jsonl``: small function-writing tasks with HumanEval-style tests.

Each row has a ``prompt`` (signature and docstring with examples), a ``reference`` test spec
(``entry_point`` and a ``check(candidate)`` function with more cases than the prompt shows) and
the ``canonical_solution`` in ``metadata``. Written for this project.
"""

from __future__ import annotations

import json
from pathlib import Path

TASKS = [
    (
        "running_max",
        '''def running_max(values: list[int]) -> list[int]:
    """Return the running maximum of a list.
    >>> running_max([1, 3, 2])
    [1, 3, 3]
    """
''',
        "    out, best = [], None\n"
        "    for v in values:\n"
        "        best = v if best is None or v > best else best\n"
        "        out.append(best)\n"
        "    return out\n",
        """def check(candidate):
    assert candidate([1, 3, 2]) == [1, 3, 3]
    assert candidate([]) == []
    assert candidate([5, 4, 6, 1]) == [5, 5, 6, 6]
    assert candidate([-2, -3]) == [-2, -2]
""",
    ),
    (
        "count_vowels",
        '''def count_vowels(text: str) -> int:
    """Count the vowels (a, e, i, o, u, either case) in a string.
    >>> count_vowels("Hello")
    2
    """
''',
        "    return sum(1 for ch in text.lower() if ch in 'aeiou')\n",
        """def check(candidate):
    assert candidate("Hello") == 2
    assert candidate("") == 0
    assert candidate("AEIOUxyz") == 5
    assert candidate("rhythm") == 0
""",
    ),
    (
        "is_palindrome",
        '''def is_palindrome(text: str) -> bool:
    """True when the text reads the same backwards, ignoring case and non-letters.
    >>> is_palindrome("Abba")
    True
    """
''',
        "    letters = [c.lower() for c in text if c.isalpha()]\n"
        "    return letters == letters[::-1]\n",
        """def check(candidate):
    assert candidate("Abba") is True
    assert candidate("A man, a plan, a canal: Panama") is True
    assert candidate("abc") is False
    assert candidate("") is True
""",
    ),
    (
        "mean_of",
        '''def mean_of(values: list[float]) -> float:
    """The arithmetic mean of a non-empty list.
    >>> mean_of([1, 2, 3])
    2.0
    """
''',
        "    return sum(values) / len(values)\n",
        """def check(candidate):
    assert abs(candidate([1, 2, 3]) - 2.0) < 1e-9
    assert abs(candidate([0.5]) - 0.5) < 1e-9
    assert abs(candidate([-1, 1, 4]) - 4 / 3) < 1e-9
""",
    ),
    (
        "digits_sum",
        '''def digits_sum(n: int) -> int:
    """Sum of the decimal digits of a non-negative integer.
    >>> digits_sum(123)
    6
    """
''',
        "    return sum(int(d) for d in str(n))\n",
        """def check(candidate):
    assert candidate(123) == 6
    assert candidate(0) == 0
    assert candidate(9999) == 36
    assert candidate(1000001) == 2
""",
    ),
    (
        "chunk",
        '''def chunk(values: list[int], size: int) -> list[list[int]]:
    """Split a list into consecutive chunks of at most `size` items.
    >>> chunk([1, 2, 3], 2)
    [[1, 2], [3]]
    """
''',
        "    return [values[i:i + size] for i in range(0, len(values), size)]\n",
        """def check(candidate):
    assert candidate([1, 2, 3], 2) == [[1, 2], [3]]
    assert candidate([], 3) == []
    assert candidate([1, 2, 3, 4], 4) == [[1, 2, 3, 4]]
    assert candidate([1, 2, 3, 4, 5], 1) == [[1], [2], [3], [4], [5]]
""",
    ),
    (
        "word_lengths",
        '''def word_lengths(sentence: str) -> dict[str, int]:
    """Map each distinct word of a space-separated sentence to its length.
    >>> word_lengths("a bb")
    {'a': 1, 'bb': 2}
    """
''',
        "    return {w: len(w) for w in sentence.split()}\n",
        """def check(candidate):
    assert candidate("a bb") == {"a": 1, "bb": 2}
    assert candidate("") == {}
    assert candidate("go go gone") == {"go": 2, "gone": 4}
""",
    ),
    (
        "fizzbuzz",
        '''def fizzbuzz(n: int) -> str:
    """"Fizz" for multiples of 3, "Buzz" for 5, "FizzBuzz" for both, else the number.
    >>> fizzbuzz(3)
    'Fizz'
    """
''',
        "    if n % 15 == 0:\n        return 'FizzBuzz'\n"
        "    if n % 3 == 0:\n        return 'Fizz'\n"
        "    if n % 5 == 0:\n        return 'Buzz'\n"
        "    return str(n)\n",
        """def check(candidate):
    assert candidate(3) == "Fizz"
    assert candidate(10) == "Buzz"
    assert candidate(30) == "FizzBuzz"
    assert candidate(7) == "7"
""",
    ),
]


def main() -> None:
    rows = [
        {
            "id": name,
            "prompt": prompt,
            "reference": {"entry_point": name, "check": check},
            "metadata": {"canonical_solution": solution},
        }
        for name, prompt, solution, check in TASKS
    ]
    out = Path(__file__).with_name("code_tasks.jsonl")
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    print(f"wrote {len(rows)} tasks to {out}")


if __name__ == "__main__":
    main()
