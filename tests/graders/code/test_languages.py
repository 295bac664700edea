"""Stdin/stdout programs in several languages: a right, a wrong, a slow and a crashing one each."""

from __future__ import annotations

import pytest

from truegrade.graders.code import CodeGrader

TESTS = [{"stdin": "1 2\n", "stdout": "3\n"}, {"stdin": "5 7", "stdout": "12"}]

RIGHT = {
    "cpp": "#include <bits/stdc++.h>\nint main(){long a,b;std::cin>>a>>b;std::cout<<a+b<<'\\n';}\n",
    "c": '#include <stdio.h>\nint main(){long a,b;scanf("%ld %ld",&a,&b);printf("%ld\\n",a+b);}\n',
    "python": "a, b = map(int, input().split())\nprint(a + b)\n",
}
WRONG = {
    "cpp": "#include <bits/stdc++.h>\nint main(){long a,b;std::cin>>a>>b;std::cout<<a-b<<'\\n';}\n",
    "c": '#include <stdio.h>\nint main(){printf("0\\n");}\n',
    "python": "print(0)\n",
}
SLOW = {
    "cpp": "int main(){volatile long x=0;for(;;)x++;}\n",
    "c": "int main(){volatile long x=0;for(;;)x++;}\n",
    "python": "while True:\n    pass\n",
}
CRASH = {
    "cpp": "#include <cstdlib>\nint main(){std::abort();}\n",
    "c": "int main(){int *p=0;return *p;}\n",
    "python": "raise SystemExit(3)\n",
}
PACKAGES = {"cpp": ("g++", "g++"), "c": ("gcc", "gcc"), "python": ("python3", "python3")}


@pytest.fixture(scope="module")
def grader() -> CodeGrader:
    return CodeGrader.from_options({"call_timeout_s": 2})


def _grade(grader: CodeGrader, language: str, code: str):
    row = {
        "response": f"Here it is:\n```{language}\n{code}```\n",
        "reference": {"language": language, "stdio": TESTS},
    }
    return grader.grade(row)


@pytest.mark.parametrize(
    "language",
    [
        pytest.param(n, marks=pytest.mark.system_tool(c, package=p))
        for n, (c, p) in PACKAGES.items()
    ],
)
def test_each_kind_of_program_gets_its_verdict(grader, language):
    right = _grade(grader, language, RIGHT[language])
    assert right.passed, right.explanation
    assert right.subscores["accepted"] == 2.0
    wrong = _grade(grader, language, WRONG[language])
    assert wrong.passed is False and wrong.error is None
    assert wrong.subscores["wrong_answer"] == 2.0
    slow = _grade(grader, language, SLOW[language])
    assert slow.subscores.get("time_limit") == 2.0, slow.explanation
    crash = _grade(grader, language, CRASH[language])
    assert crash.subscores.get("runtime_error") == 2.0, crash.explanation


@pytest.mark.system_tool("g++", package="g++")
def test_a_compile_error_carries_the_compilers_message(grader):
    grade = _grade(grader, "cpp", "int main( { return 0; }\n")
    assert grade.passed is False and grade.error is None
    assert grade.subscores["compile_error"] == 2.0
    assert "compile_error" in grade.flags
    assert "error" in grade.explanation


@pytest.mark.system_tool("g++", package="g++")
def test_a_network_connect_and_a_fork_bomb_are_contained(grader):
    net = (
        "#include <sys/socket.h>\n#include <netinet/in.h>\n#include <cstdio>\n"
        "int main(){int s=socket(AF_INET,SOCK_STREAM,0);if(s<0)return 1;"
        "sockaddr_in a{};a.sin_family=AF_INET;a.sin_port=htons(53);a.sin_addr.s_addr=0x01010101;"
        'if(connect(s,(sockaddr*)&a,sizeof a)==0)puts("3");return 2;}\n'
    )
    bomb = "#include <unistd.h>\nint main(){for(;;)fork();}\n"
    for code in (net, bomb):
        grade = _grade(grader, "cpp", code)
        assert grade.passed is False and grade.error is None, grade.explanation
