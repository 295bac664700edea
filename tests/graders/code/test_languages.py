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


MORE = {
    "java": (
        "javac",
        "default-jdk-headless",
        "import java.util.*;\npublic class Main{public static void main(String[] x){"
        "Scanner s=new Scanner(System.in);long a=s.nextLong(),b=s.nextLong();"
        "System.out.println(a+%s);}}\n",
    ),
    "javascript": (
        "node",
        "nodejs",
        "const l=require('fs').readFileSync(0,'utf8').trim().split(/\\s+/).map(Number);"
        "console.log(l[0]+%s);\n",
    ),
    "go": (
        "go",
        "golang-go",
        'package main\nimport "fmt"\n'
        "func main(){var a,b int64;fmt.Scan(&a,&b);fmt.Println(a+%s)}\n",
    ),
    "rust": (
        "rustc",
        "rustc",
        "use std::io::*;\nfn main(){let mut s=String::new();stdin().read_to_string(&mut s)"
        ".unwrap();let v:Vec<i64>=s.split_whitespace().map(|x|x.parse().unwrap()).collect();"
        'println!("{}",v[0]+%s);}\n',
    ),
}


@pytest.mark.parametrize(
    "language",
    [pytest.param(n, marks=pytest.mark.system_tool(c, package=p)) for n, (c, p, _) in MORE.items()],
)
def test_right_and_wrong_programs_in_the_other_languages(grader, language):
    template = MORE[language][2]
    second = {"java": "b", "javascript": "l[1]", "go": "b", "rust": "v[1]"}[language]
    right = _grade(grader, language, template % second)
    assert right.passed, right.explanation
    wrong = _grade(grader, language, template % "1")
    assert wrong.subscores.get("wrong_answer") == 2.0, wrong.explanation


def test_dataset_rows_are_read_as_they_are():
    from truegrade.graders.code import parse_spec

    # APPS / TACO: 'input_output' is a JSON string (codeparrot/apps row layout)
    apps = parse_spec({"input_output": '{"inputs": ["1 2\\n"], "outputs": ["3\\n"]}'})
    assert apps.kind == "stdio" and apps.stdio[0].stdout == "3\n"
    # CodeContests (deepmind/code_contests): tests per split, limits, language id 2 = C++
    contests = parse_spec(
        {
            "public_tests": {"input": ["1 2\n"], "output": ["3\n"]},
            "private_tests": {"input": ["5 7\n"], "output": ["12\n"]},
            "generated_tests": {"input": [], "output": []},
            "time_limit": {"seconds": 2, "nanos": 500000000},
            "memory_limit_bytes": 256 * 1024 * 1024,
            "language": 2,
        }
    )
    assert [t.visible for t in contests.stdio] == [True, False]
    assert (contests.time_limit_s, contests.memory_mb, contests.language) == (2.5, 256, "cpp")
    # LiveCodeBench (livecodebench/code_generation_lite): JSON strings of test cases
    lcb = parse_spec(
        {
            "public_test_cases": '[{"input": "1 2\\n", "output": "3\\n", "testtype": "stdin"}]',
            "private_test_cases": "[]",
        }
    )
    assert lcb.stdio[0].stdin == "1 2\n"


@pytest.mark.system_tool("g++", package="g++")
def test_a_special_judge_decides_by_its_exit_status(grader):
    checker = (
        "import sys\nout = open(sys.argv[2]).read().split()\n"
        "ans = open(sys.argv[3]).read().split()\nsys.exit(0 if sorted(out) == sorted(ans) else 1)\n"
    )
    spec = {
        "language": "cpp",
        "stdio": [{"stdin": "", "stdout": "1 2\n"}],
        "checker": {"language": "python", "source": checker},
    }
    any_order = '#include <cstdio>\nint main(){puts("2 1");}\n'
    wrong = '#include <cstdio>\nint main(){puts("2 2");}\n'
    ok = grader.grade({"response": f"```cpp\n{any_order}```", "reference": spec})
    assert ok.passed, ok.explanation
    bad = grader.grade({"response": f"```cpp\n{wrong}```", "reference": spec})
    assert bad.passed is False and bad.error is None, bad.explanation


@pytest.mark.system_tool("g++", package="g++")
def test_a_program_cannot_reach_the_tests_write_outside_or_leave_files_for_the_next_test(grader):
    import truegrade

    # the grader's own files and the host's home are not in the sandbox; /usr is read-only
    snoop = (
        "#include <cstdio>\nint main(){"
        f'if(fopen("{truegrade.__file__}","r"))puts("SEEN");'
        'if(fopen("/usr/pwned","w"))puts("WROTE");'
        'FILE*f=fopen("/tmp/left","r");if(f)puts("LEFT");'
        'f=fopen("/tmp/left","w");if(f){fputs("x",f);fclose(f);}'
        'int a,b;if(scanf("%d %d",&a,&b)==2)printf("%d\\n",a+b);}\n'
    )
    grade = _grade(grader, "cpp", snoop)
    assert grade.passed, grade.explanation  # neither test saw anything the other test wrote


@pytest.mark.system_tool("g++", package="g++")
def test_numeric_tokens_match_within_the_configured_tolerance():
    loose = CodeGrader.from_options({"call_timeout_s": 2, "abs_tol": 1e-6})
    row = {
        "response": '```cpp\n#include <cstdio>\nint main(){printf("%.9f\\n", 1.0/3);}\n```',
        "reference": {"language": "cpp", "stdio": [{"stdin": "", "stdout": "0.3333333\n"}]},
    }
    assert loose.grade(row).passed
    exact = CodeGrader.from_options({"call_timeout_s": 2})
    assert exact.grade(row).passed is False
