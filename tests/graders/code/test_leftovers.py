"""A hostile row leaves nothing for the rows graded after it in the same sandbox: programs of
every language lock directories (``chmod 000`` / ``0500``) around a file and plant symlinks,
and in the same batch, on the same sandbox, honest rows grade as they do alone and a row that
looks for the leftovers (the file, the compiled binary, the directory's own attributes) finds
nothing."""

from __future__ import annotations

import pytest

from tests.graders.code.toolchains import each_language
from tests.sandbox.helpers import BWRAP
from truegrade.exec import Engine
from truegrade.graders.code import CodeGrader
from truegrade.sandbox._kernel import landlock_abi

TESTS = [{"stdin": "1 2\n", "stdout": "3\n"}, {"stdin": "5 7\n", "stdout": "12\n"}]

HOSTILE = {
    "python": """import os
os.makedirs("h/d", exist_ok=True)
open("h/d/secret", "w").write("SECRET")
os.symlink("/usr", "h/usr")
os.chmod("h/d", 0o000)
os.chmod("h", 0o500)
os.chmod(".", 0o500)
print(sum(map(int, input().split())))
""",
    "c": r"""#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
int main(void) {
    mkdir("h", 0700); mkdir("h/d", 0700);
    FILE *f = fopen("h/d/secret", "w"); fputs("SECRET", f); fclose(f);
    symlink("/usr", "h/usr");
    chmod("h/d", 0); chmod("h", 0500); chmod(".", 0500);
    long a, b; scanf("%ld %ld", &a, &b); printf("%ld\n", a + b);
    return 0;
}
""",
    "cpp": r"""#include <cstdio>
#include <sys/stat.h>
#include <unistd.h>
int main() {
    mkdir("h", 0700); mkdir("h/d", 0700);
    FILE *f = std::fopen("h/d/secret", "w"); std::fputs("SECRET", f); std::fclose(f);
    symlink("/usr", "h/usr");
    chmod("h/d", 0); chmod("h", 0500); chmod(".", 0500);
    long a, b; std::scanf("%ld %ld", &a, &b); std::printf("%ld\n", a + b);
}
""",
    "java": """import java.nio.file.*;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Scanner;
// hostile: locks its directories around a file
public class Main {
    public static void main(String[] args) throws Exception {
        Files.createDirectories(Paths.get("h/d"));
        Files.writeString(Paths.get("h/d/secret"), "SECRET");
        Files.createSymbolicLink(Paths.get("h/usr"), Paths.get("/usr"));
        Path locked = Paths.get("h/d");
        Files.setPosixFilePermissions(locked, PosixFilePermissions.fromString("---------"));
        Files.setPosixFilePermissions(Paths.get("h"), PosixFilePermissions.fromString("r-x------"));
        Scanner in = new Scanner(System.in);
        System.out.println(in.nextLong() + in.nextLong());
    }
}
""",
    "javascript": """const fs = require('fs');
fs.mkdirSync('h/d', { recursive: true });
fs.writeFileSync('h/d/secret', 'SECRET');
fs.symlinkSync('/usr', 'h/usr');
fs.chmodSync('h/d', 0o000); fs.chmodSync('h', 0o500); fs.chmodSync('.', 0o500);
const t = fs.readFileSync(0, 'utf8').split(/\\s+/).filter(Boolean).map(Number);
console.log(t[0] + t[1]);
""",
    "go": """package main

import (
\t"fmt"
\t"os"
)

func main() {
\tos.MkdirAll("h/d", 0o700)
\tos.WriteFile("h/d/secret", []byte("SECRET"), 0o644)
\tos.Symlink("/usr", "h/usr")
\tos.Chmod("h/d", 0)
\tos.Chmod("h", 0o500)
\tos.Chmod(".", 0o500)
\tvar a, b int64
\tfmt.Scan(&a, &b)
\tfmt.Println(a + b)
}
""",
    "rust": r"""use std::fs;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
fn main() {
    fs::create_dir_all("h/d").unwrap();
    fs::write("h/d/secret", "SECRET").unwrap();
    std::os::unix::fs::symlink("/usr", "h/usr").unwrap();
    fs::set_permissions("h/d", fs::Permissions::from_mode(0)).unwrap();
    fs::set_permissions("h", fs::Permissions::from_mode(0o500)).unwrap();
    fs::set_permissions(".", fs::Permissions::from_mode(0o500)).unwrap();
    let mut s = String::new();
    std::io::stdin().read_to_string(&mut s).unwrap();
    let v: Vec<i64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect();
    println!("{}", v[0] + v[1]);
}
""",
}
HOSTILE["pypy"] = HOSTILE["python"]  # the same program, run by PyPy

HONEST = "print(sum(map(int, input().split())))\n"
HONEST_C = """#include <stdio.h>
int main(void) { long a, b; scanf("%ld %ld", &a, &b); printf("%ld\\n", a + b); }
"""
LOOK = """import os
st = os.stat(".")
left = [n for n in os.listdir(".") if n != "main.py"] + os.listxattr(".")  # but itself
print(sum(map(int, input().split())) if not left and st.st_mode & 0o200 else left)
"""


def _row(language: str, code: str) -> dict:
    return {
        "response": f"```{language}\n{code}```\n",
        "reference": {"language": language, "stdio": TESTS},
    }


@pytest.mark.parametrize("isolation", [pytest.param("bwrap", marks=BWRAP), "native"])
@pytest.mark.parametrize("language", each_language())
def test_a_hostile_row_leaves_nothing_for_the_rows_after_it(isolation, language):
    if isolation == "native" and not landlock_abi():
        pytest.skip("the native fallback refuses to run without Landlock, which this kernel lacks")
    options = {"isolation": isolation, "program_timeout_s": 60, "compile_timeout_s": 60}
    with Engine(workers=1) as engine:  # one worker: one sandbox for the whole batch
        grader = CodeGrader(CodeGrader.Options(**options), engine=engine)
        honest = [_row("python", HONEST), _row("c", HONEST_C)]
        alone = grader.grade_batch(honest)
        rows = [_row(language, HOSTILE[language]), _row("python", LOOK), *honest]
        hostile, look, *after = grader.grade_batch(rows)
    assert hostile.error is None and hostile.passed, hostile.explanation  # removable: no fail
    for by_itself, in_batch in zip(alone, after, strict=True):
        assert in_batch.error is None, in_batch.error
        assert (in_batch.passed, in_batch.score, in_batch.flags) == (
            by_itself.passed,
            by_itself.score,
            by_itself.flags,
        )
        assert in_batch.passed, in_batch.explanation
    assert look.passed, look.explanation  # found nothing the hostile row left
