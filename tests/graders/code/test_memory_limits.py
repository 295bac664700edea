"""A stdin/stdout test's memory limit is the task's, not each process's: what all the processes
of one test hold together must stay under it.

Today the limit is a per-process resource limit (``RLIMIT_AS`` for C, C++, Rust and Python,
``RLIMIT_DATA`` for the runtimes that reserve address space), and every program here passes
under a 64 MB limit while its test holds 5 to 8 times that:

- Go maps 512 MB of shared anonymous memory (``MAP_SHARED | MAP_ANON``) and touches every page:
  shared memory is not private data, so ``RLIMIT_DATA`` does not count it, and the runtime's own
  ``GOMEMLIMIT`` knows nothing of a mapping it did not make;
- C (``fork``), Python (``os.fork``) and JavaScript (``child_process``) start children that
  each allocate and touch less than the limit, hold it until all of them do, then exit cleanly.

A judge that measures memory per process is beaten by any program that splits its work (a
memoising search forked eight ways, a table in shared memory). These tests assert the safe
outcome: the attack does not pass (a ``memory_limit``, or the failure of its refused
allocation), while an honest program of the same language that uses half the limit in one
process passes beside it.
"""

from __future__ import annotations

import pytest

from tests.graders.code.toolchains import each_language
from truegrade.graders.code import CodeGrader

LIMIT_MB = 64
TESTS = [{"stdin": "1 2\n", "stdout": "3\n"}]

OVER = {
    # 512 MB of shared anonymous memory, every page touched
    "go": """package main

import (
\t"fmt"
\t"syscall"
)

func main() {
\tvar a, b int64
\tfmt.Scan(&a, &b)
\tsize := 512 << 20
\tflags := syscall.MAP_SHARED | syscall.MAP_ANON
\tmem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, flags)
\tif err != nil {
\t\tpanic(err)
\t}
\tfor i := 0; i < size; i += 4096 {
\t\tmem[i] = 1
\t}
\ttouched := 0
\tfor i := 0; i < size; i += 4096 {
\t\ttouched += int(mem[i])
\t}
\tif touched != size/4096 {
\t\tpanic("lost a page")
\t}
\tfmt.Println(a + b)
}
""",
    # eight children of 48 MB each, all held at once
    "c": r"""#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#define CHILDREN 8
#define EACH (48L << 20)
int main(void) {
    long a, b;
    if (scanf("%ld %ld", &a, &b) != 2) return 1;
    int ready[2], go[2];
    if (pipe(ready) || pipe(go)) return 1;
    for (int i = 0; i < CHILDREN; i++) {
        if (fork() == 0) {
            volatile char *p = malloc(EACH); /* volatile: no store may be optimised away */
            if (!p) _exit(2);
            for (long j = 0; j < EACH; j += 4096) p[j] = 1;
            if (write(ready[1], "r", 1) != 1) _exit(3);
            char c;
            if (read(go[0], &c, 1) != 1) _exit(3); /* held until every child holds its own */
            _exit(p[EACH - 4096] == 1 ? 0 : 3);
        }
    }
    for (int i = 0; i < CHILDREN; i++) {
        char c;
        if (read(ready[0], &c, 1) != 1) return 4;
    }
    for (int i = 0; i < CHILDREN; i++)
        if (write(go[1], "g", 1) != 1) return 4;
    int status, ok = 0;
    while (wait(&status) > 0) ok += WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (ok != CHILDREN) return 5;
    printf("%ld\n", a + b);
    return 0;
}
""",
    # eight children of 40 MB each, all held at once
    "python": """import os

a, b = map(int, input().split())
CHILDREN, EACH = 8, 40 << 20
ready_r, ready_w = os.pipe()
go_r, go_w = os.pipe()
for _ in range(CHILDREN):
    if os.fork() == 0:
        block = bytearray(b"\\1") * EACH
        os.write(ready_w, b"r")
        os.read(go_r, 1)  # held until every child holds its own
        os._exit(0 if block[-1] == 1 else 3)
for _ in range(CHILDREN):
    assert os.read(ready_r, 1) == b"r"
os.write(go_w, b"g" * CHILDREN)
ok = 0
for _ in range(CHILDREN):
    _, status = os.wait()
    ok += os.waitstatus_to_exitcode(status) == 0
assert ok == CHILDREN
print(a + b)
""",
    # three node children of 96 MB each, each under its own limit (node's threads count against
    # the process limit, so three)
    "javascript": """const { spawn } = require('child_process');
const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);
const CHILDREN = 3, EACH = 96 << 20;
const hold = `const b = Buffer.alloc(${EACH}, 1); process.stdout.write('r');
process.stdin.once('data', () => process.exit(b[${EACH} - 1] === 1 ? 0 : 3));`;
let ready = 0, done = 0, ok = 0;
const children = [];
for (let i = 0; i < CHILDREN; i++) {
  const child = spawn(process.execPath, ['-e', hold], { stdio: ['pipe', 'pipe', 'inherit'] });
  children.push(child);
  child.on('error', () => process.exit(6));
  child.stdout.once('data', () => {
    if (++ready === CHILDREN) for (const c of children) c.stdin.write('g');
  });
  child.on('exit', (code) => {
    ok += code === 0;
    if (++done === CHILDREN) {
      if (ok !== CHILDREN) process.exit(5);
      console.log(a + b);
    }
  });
}
""",
}

HALF = {  # one process, half the limit, every page touched
    "go": """package main

import "fmt"

func main() {
\tvar a, b int64
\tfmt.Scan(&a, &b)
\tmem := make([]byte, 32<<20)
\tfor i := range mem {
\t\tmem[i] = 1
\t}
\tfmt.Println(a + b + int64(mem[len(mem)-1]) - 1)
}
""",
    "c": r"""#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void) {
    long a, b;
    if (scanf("%ld %ld", &a, &b) != 2) return 1;
    char *p = malloc(32L << 20);
    if (!p) return 2;
    memset(p, 1, 32L << 20);
    printf("%ld\n", a + b + p[(32L << 20) - 1] - 1);
    return 0;
}
""",
    "python": """a, b = map(int, input().split())
block = bytearray(b"\\1") * (32 << 20)
print(a + b + block[-1] - 1)
""",
    "javascript": """const input = require('fs').readFileSync(0, 'utf8');
const [a, b] = input.trim().split(/\\s+/).map(Number);
const block = Buffer.alloc(32 << 20, 1);
console.log(a + b + block[block.length - 1] - 1);
""",
}


@pytest.fixture(scope="module")
def grader() -> CodeGrader:
    return CodeGrader.from_options({"program_timeout_s": 120})


def _row(language: str, code: str) -> dict:
    spec = {"language": language, "memory_mb": LIMIT_MB, "time_limit_s": 5, "stdio": TESTS}
    return {"response": f"```{language}\n{code}```\n", "reference": spec}


@pytest.mark.parametrize("language", each_language(*OVER))
def test_a_test_whose_processes_together_exceed_its_memory_limit_does_not_pass(grader, language):
    honest, attack = grader.grade_batch(
        [_row(language, HALF[language]), _row(language, OVER[language])]
    )
    assert honest.error is None and honest.passed, honest.explanation
    assert attack.error is None, attack.error
    # the safe outcome: the memory is refused (memory_limit), or the program fails for lack of it
    assert attack.passed is False, attack.explanation
    assert attack.flags[0] in ("memory_limit", "program_crashed", "exit_status"), attack.explanation
