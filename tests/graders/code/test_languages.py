"""Stdin/stdout programs in every language: each verdict, hostile programs contained, rows read."""

from __future__ import annotations

import json
import re
import secrets
import socket
from pathlib import Path

import pytest

import truegrade
from tests.graders.code.toolchains import each_language
from truegrade.graders.code import CodeGrader

TESTS = [{"stdin": "1 2\n", "stdout": "3\n"}, {"stdin": "5 7", "stdout": "12"}]


@pytest.fixture(scope="module")
def grader() -> CodeGrader:
    return CodeGrader.from_options({"call_timeout_s": 2})


def _grade(grader: CodeGrader, language: str, code: str):
    row = {
        "response": f"Here it is:\n```{language}\n{code}```\n",
        "reference": {"language": language, "stdio": TESTS},
    }
    return grader.grade(row)


@pytest.mark.system_tool("g++", package="g++")
def test_a_compile_error_carries_the_compilers_message(grader):
    grade = _grade(grader, "cpp", "int main( { return 0; }\n")
    assert grade.passed is False and grade.error is None
    assert grade.subscores["compile_error"] == 2.0
    assert "compile_error" in grade.flags
    assert "error" in grade.explanation


def test_dataset_rows_are_read_as_they_are():
    from truegrade.graders.code import parse_spec

    # APPS / TACO: 'input_output' is a JSON string (codeparrot/apps row layout)
    apps = parse_spec({"input_output": '{"inputs": ["1 2\\n"], "outputs": ["3\\n"]}'})
    assert apps.kind == "stdio" and apps.stdio[0].stdout == "3\n"
    # the input_output object itself, as verl's code datasets keep their ground truth
    in_outs = parse_spec('{"inputs": ["1 2\\n"], "outputs": ["3\\n"], "fn_name": null}')
    assert in_outs.kind == "stdio" and in_outs.stdio[0].stdin == "1 2\n"
    call = parse_spec({"inputs": [[1, 2]], "outputs": [3], "fn_name": "add"})
    assert call.kind == "cases" and call.entry_point == "add"
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


def _functional_row(response: str, **extra):
    # livecodebench/code_generation_lite layout: one JSON value per input line, JSON output
    cases = [
        {"input": "[2,7,11,15]\n9", "output": "[0, 1]", "testtype": "functional"},
        {"input": "[3,2,4]\n6", "output": "[1, 2]", "testtype": "functional"},
    ]
    reference = {
        "public_test_cases": json.dumps(cases[:1]),
        "private_test_cases": json.dumps(cases[1:]),
        "metadata": '{"func_name": "twoSum"}',
        **extra,
    }
    return {"response": f"```python\n{response}```\n", "reference": reference}


LEETCODE = """from __future__ import annotations


class Solution:
    def twoSum(self, nums: List[int], target: int) -> List[int]:
        seen = defaultdict(int)
        for i, x in enumerate(nums):
            if target - x in seen:
                return [seen[target - x], i]
            seen[x] = i
        return []
"""


def test_a_livecodebench_functional_row_calls_the_method_of_class_solution(grader):
    # List and defaultdict unimported, as LeetCode's Python and LiveCodeBench provide them
    right = grader.grade(_functional_row(LEETCODE))
    assert right.passed, right.explanation
    assert right.subscores == {"case_0": 1.0, "case_1": 1.0}
    wrong = grader.grade(_functional_row(LEETCODE.replace("seen[target - x], i", "i, i")))
    assert wrong.passed is False and wrong.error is None
    assert "wrong_answer" in wrong.flags
    # a new instance for every call: state kept on the class is caught by the secret order
    counting = (
        "class Solution:\n    n = 0\n    def twoSum(self, nums, target):\n"
        "        Solution.n += 1\n        return [0, 1] if Solution.n == 1 else [1, 2]\n"
    )
    stateful = grader.grade(_functional_row(counting))
    assert stateful.passed is False
    assert {"order_dependent", "wrong_answer"} & set(stateful.flags)


def test_a_livecodebench_functional_row_without_its_method_name_is_an_error(grader):
    row = _functional_row(LEETCODE)
    del row["reference"]["metadata"]
    grade = grader.grade(row)
    assert grade.passed is None and "bad_reference" in grade.flags
    assert "func_name" in grade.error


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


# One program per language whose first stdin token picks what it does, so that it is built once
# and one batch of tests walks through every verdict, each hostile act followed by a test that
# must still pass. A hostile act that gets through prints the test's expected output (so an
# escape is ``accepted``); one that is stopped ends in an error exit or a kill.
DISPATCH = {
    "c": r"""#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
static char a[8][4096];
int main(){char m[64];int n=0;if(scanf("%63s",m)!=1)return 4;
while(n<8&&scanf("%4095s",a[n])==1)n++;
if(!strcmp(m,"add")){printf("%ld\n",atol(a[0])+atol(a[1]));return 0;}
if(!strcmp(m,"wrong")){printf("%ld\n",atol(a[0])-atol(a[1]));return 0;}
if(!strcmp(m,"slow")){volatile long x=0;for(;;)x++;}
if(!strcmp(m,"crash")){volatile int*p=0;return *p;}
if(!strcmp(m,"memory")){size_t s=1UL<<30;volatile char*p=malloc(s);
for(size_t i=0;i<s;i+=4096)p[i]=1;printf("%d\n",p[s-4096]);return 0;}
if(!strcmp(m,"fork")){for(;;)fork();}
if(!strcmp(m,"net")){int s=socket(AF_INET,SOCK_STREAM,0);if(s<0)return 3;
struct sockaddr_in d={0};d.sin_family=AF_INET;d.sin_port=htons(atoi(a[0]));
d.sin_addr.s_addr=htonl(0x7f000001);if(connect(s,(struct sockaddr*)&d,sizeof d))return 3;
puts("CONNECTED");return 0;}
if(!strcmp(m,"write")){for(int i=0;i<n;i++){FILE*f=fopen(a[i],"w");
if(f){fputs("x",f);fclose(f);puts("WROTE");return 0;}}return 3;}
if(!strcmp(m,"read")){FILE*f=fopen(a[0],"r");if(!f)return 3;int c;
while((c=fgetc(f))!=EOF)putchar(c);return 0;}
return 4;}
""",
    "cpp": r"""#include <bits/stdc++.h>
#include <unistd.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
using namespace std;
int main(){vector<string> t;string w;while(cin>>w)t.push_back(w);const string&m=t.at(0);
if(m=="add"){cout<<stol(t[1])+stol(t[2])<<'\n';return 0;}
if(m=="wrong"){cout<<stol(t[1])-stol(t[2])<<'\n';return 0;}
if(m=="slow"){volatile long x=0;for(;;)x++;}
if(m=="crash"){abort();}
if(m=="memory"){vector<char> v(1UL<<30,1);cout<<int(v.back())<<'\n';return 0;}
if(m=="fork"){for(;;)fork();}
if(m=="net"){int s=socket(AF_INET,SOCK_STREAM,0);if(s<0)return 3;sockaddr_in d{};
d.sin_family=AF_INET;d.sin_port=htons(stoi(t[1]));d.sin_addr.s_addr=htonl(0x7f000001);
if(connect(s,(sockaddr*)&d,sizeof d))return 3;cout<<"CONNECTED\n";return 0;}
if(m=="write"){for(size_t i=1;i<t.size();i++){ofstream f(t[i]);
if(f){f<<"x";cout<<"WROTE\n";return 0;}}return 3;}
if(m=="read"){ifstream f(t[1]);if(!f)return 3;cout<<f.rdbuf();return 0;}
return 4;}
""",
    "python": """import os, socket, sys
t = sys.stdin.read().split()
m = t[0]
if m == "add":
    print(int(t[1]) + int(t[2]))
elif m == "wrong":
    print(int(t[1]) - int(t[2]))
elif m == "slow":
    while True:
        pass
elif m == "crash":
    print(1 // 0)
elif m == "memory":
    print(len(bytearray(1 << 30)))
elif m == "fork":
    while True:
        try:
            os.fork()
        except OSError:
            pass
elif m == "net":
    try:
        socket.create_connection(("127.0.0.1", int(t[1])), timeout=1)
    except OSError:
        sys.exit(3)
    print("CONNECTED")
elif m == "write":
    for p in t[1:]:
        try:
            open(p, "w").write("x")
        except OSError:
            continue
        print("WROTE")
        sys.exit(0)
    sys.exit(3)
elif m == "read":
    try:
        print(open(t[1]).read(), end="")
    except OSError:
        sys.exit(3)
else:
    sys.exit(4)
""",
    "java": r"""import java.io.*;import java.nio.file.*;
public class Main{
static void spin(){for(;;){}}
public static void main(String[] x)throws Exception{
String[] t=new String(System.in.readAllBytes()).trim().split("\\s+");
switch(t[0]){
case "add": System.out.println(Long.parseLong(t[1])+Long.parseLong(t[2])); break;
case "wrong": System.out.println(Long.parseLong(t[1])-Long.parseLong(t[2])); break;
case "slow": spin(); break;
case "crash": Object o=null; System.out.println(o.hashCode()); break;
case "memory": long[] a=new long[1<<28]; a[1]=1; System.out.println(a[1]); break;
case "fork": for(;;){try{new ProcessBuilder("/bin/sh","-c",":(){ :|:& };:").start();}
  catch(Exception e){}}
case "net": try(java.net.Socket s=new java.net.Socket("127.0.0.1",Integer.parseInt(t[1]))){
  System.out.println("CONNECTED");}catch(IOException e){System.exit(3);} break;
case "write": for(int i=1;i<t.length;i++){try{Files.writeString(Path.of(t[i]),"x");
  System.out.println("WROTE");return;}catch(Exception e){}} System.exit(3);
case "read": try{System.out.print(Files.readString(Path.of(t[1])));}
  catch(Exception e){System.exit(3);} break;
default: System.exit(4);
}}}
""",
    "javascript": r"""const fs = require('fs');
const t = fs.readFileSync(0, 'utf8').trim().split(/\s+/);
switch (t[0]) {
  case 'add': console.log(Number(t[1]) + Number(t[2])); break;
  case 'wrong': console.log(Number(t[1]) - Number(t[2])); break;
  case 'slow': for (;;) {}
  case 'crash': null.x; break;
  case 'memory': { const a = []; for (;;) a.push(new Array(1e6).fill(1.5)); }
  case 'fork': { const cp = require('child_process');
    for (;;) { try { cp.spawnSync('/bin/sh', ['-c', ':(){ :|:& };:']); } catch (e) {} } }
  case 'net': { const s = require('net').connect(Number(t[1]), '127.0.0.1',
      () => { console.log('CONNECTED'); s.end(); });
    s.on('error', () => process.exit(3)); break; }
  case 'write': for (const p of t.slice(1)) {
      try { fs.writeFileSync(p, 'x'); console.log('WROTE'); process.exit(0); } catch (e) {} }
    process.exit(3);
  case 'read': try { process.stdout.write(fs.readFileSync(t[1], 'utf8')); }
    catch (e) { process.exit(3); } break;
  default: process.exit(4);
}
""",
    "go": """package main

import (
\t"fmt"
\t"io"
\t"net"
\t"os"
\t"os/exec"
\t"strconv"
\t"strings"
)

func main() {
\tb, _ := io.ReadAll(os.Stdin)
\tt := strings.Fields(string(b))
\tnum := func(i int) int64 { v, _ := strconv.ParseInt(t[i], 10, 64); return v }
\tswitch t[0] {
\tcase "add":
\t\tfmt.Println(num(1) + num(2))
\tcase "wrong":
\t\tfmt.Println(num(1) - num(2))
\tcase "slow":
\t\tfor {
\t\t}
\tcase "crash":
\t\tvar m map[string]int
\t\tm["x"] = 1
\tcase "memory":
\t\tv := make([]byte, 1<<30)
\t\tfor i := range v {
\t\t\tv[i] = 1
\t\t}
\t\tfmt.Println(v[len(v)-1])
\tcase "fork":
\t\tfor {
\t\t\texec.Command("/bin/sh", "-c", ":(){ :|:& };:").Start()
\t\t}
\tcase "net":
\t\tc, err := net.Dial("tcp", "127.0.0.1:"+t[1])
\t\tif err != nil {
\t\t\tos.Exit(3)
\t\t}
\t\tc.Close()
\t\tfmt.Println("CONNECTED")
\tcase "write":
\t\tfor _, p := range t[1:] {
\t\t\tif os.WriteFile(p, []byte("x"), 0o644) == nil {
\t\t\t\tfmt.Println("WROTE")
\t\t\t\treturn
\t\t\t}
\t\t}
\t\tos.Exit(3)
\tcase "read":
\t\td, err := os.ReadFile(t[1])
\t\tif err != nil {
\t\t\tos.Exit(3)
\t\t}
\t\tos.Stdout.Write(d)
\tdefault:
\t\tos.Exit(4)
\t}
}
""",
    "rust": r"""use std::io::*;
extern "C" { fn fork() -> i32; }
fn main() {
    let mut s = String::new();
    stdin().read_to_string(&mut s).unwrap();
    let t: Vec<&str> = s.split_whitespace().collect();
    let num = |i: usize| -> i64 { t[i].parse().unwrap() };
    match t[0] {
        "add" => println!("{}", num(1) + num(2)),
        "wrong" => println!("{}", num(1) - num(2)),
        "slow" => { let mut x = 1u64; loop { x = x.wrapping_mul(3); if x == 0 { println!(); } } }
        "crash" => { let v: Vec<i64> = Vec::new(); println!("{}", v[t.len()]); }
        "memory" => { let v = vec![1u8; 1 << 30]; println!("{}", v[v.len() - 1]); }
        "fork" => loop { unsafe { fork(); } },
        "net" => match std::net::TcpStream::connect(("127.0.0.1", num(1) as u16)) {
            Ok(_) => println!("CONNECTED"),
            Err(_) => std::process::exit(3),
        },
        "write" => {
            for p in &t[1..] {
                if std::fs::write(p, "x").is_ok() { println!("WROTE"); return; }
            }
            std::process::exit(3)
        }
        "read" => match std::fs::read_to_string(t[1]) {
            Ok(x) => print!("{}", x),
            Err(_) => std::process::exit(3),
        },
        _ => std::process::exit(4),
    }
}
""",
}

DISPATCH["pypy"] = DISPATCH["python"]  # the same program, run by PyPy


@pytest.fixture(scope="module")
def listener():
    """A TCP server on the host's loopback: a sandboxed program must never reach it."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    server.setblocking(False)
    yield server
    server.close()


def _verdicts(grade) -> list[str]:
    return [v for _, v in re.findall(r"\b(stdio_\d+) ([a-z_]+)\b", grade.explanation)]


@pytest.mark.parametrize("language", each_language())
def test_every_verdict_and_every_hostile_act_in_one_batch(language, listener):
    mark = secrets.token_hex(4)
    # host paths outside the sandbox's scratch: the package's own directory, the home, /usr
    targets = [
        Path(truegrade.__file__).parent / f"pwned-{mark}",
        Path.home() / f"pwned-{mark}",
        Path(f"/usr/pwned-{mark}"),
    ]
    here = Path(__file__).read_text()  # these tests, expected outputs included
    grader_file = Path(truegrade.__file__).read_text()
    port = listener.getsockname()[1]
    # C has no out-of-memory report: malloc's NULL is the program's crash
    memory = "runtime_error" if language == "c" else "memory_limit"
    # The others spin on. Go's runtime dies when the process limit refuses it a new OS thread,
    # but when it already holds the threads it needs, every Start just fails and the loop spins
    # on too: which comes first is the scheduler's choice. Either way the bomb fails, contained.
    fork = {"runtime_error", "time_limit"} if language == "go" else "time_limit"
    plan = [
        ("add 1 2", "3", "accepted"),
        ("wrong 1 2", "3", "wrong_answer"),
        ("slow", "0", "time_limit"),
        ("add 5 7", "12", "accepted"),
        ("crash", "0", "runtime_error"),
        ("memory", "1", memory),
        ("add 2 2", "4", "accepted"),
        ("fork", "0", fork),
        ("add 3 4", "7", "accepted"),
        (f"net {port}", "CONNECTED", "runtime_error"),
        ("write " + " ".join(map(str, targets)), "WROTE", "runtime_error"),
        (f"read {__file__}", here, "runtime_error"),
        (f"read {truegrade.__file__}", grader_file, "runtime_error"),
        ("add 40 2", "42", "accepted"),
    ]
    grader = CodeGrader.from_options({"program_timeout_s": 120})
    spec = {
        "language": language,
        "time_limit_s": 2,
        "memory_mb": 128,
        "stdio": [{"stdin": i + "\n", "stdout": o} for i, o, _ in plan],
    }
    grade = grader.grade({"response": f"```{language}\n{DISPATCH[language]}```", "reference": spec})
    assert grade.error is None, grade.error
    got = _verdicts(grade)
    assert len(got) == len(plan), grade.explanation
    for verdict, (stdin, _, want) in zip(got, plan, strict=True):
        assert verdict in (want if isinstance(want, set) else {want}), (stdin, grade.explanation)
    assert grade.score == pytest.approx(5 / len(plan))
    with pytest.raises(BlockingIOError):
        listener.accept()  # no connection ever reached the host
    assert not [t for t in targets if t.exists()]
