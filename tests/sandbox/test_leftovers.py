"""Nothing a task leaves reaches the next one: whatever a hostile program does to the scratch
directory (directories it cannot be listed or emptied through, trees too deep for a path,
strange names, symlinks out, the directory's own mode, times and extended attributes), the next
task finds it empty and as it was, and honest programs after it run as they do alone.

Each hostile program runs under bubblewrap, bubblewrap without Landlock and the native
fallback, as in the escape suite; the probe that follows looks for the leftovers from inside.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from tests.sandbox.helpers import BWRAP
from truegrade.graders.code._languages import language_named, toolchain
from truegrade.sandbox import Sandbox, SandboxConfig
from truegrade.sandbox._kernel import landlock_abi

TIMEOUT_S = 10.0

PLANT_PYTHON = {
    "chmod 000 and 0500": """
        import os
        os.makedirs("a/b/c")
        with open("a/b/c/secret", "w") as handle:
            handle.write("SECRET")
        os.chmod("a/b/c", 0o000)
        os.chmod("a/b", 0o500)
        os.chmod("a", 0o000)
        os.makedirs("ro/inner")
        open("ro/inner/secret", "w").close()
        os.chmod("ro/inner", 0o500)
        os.chmod("ro", 0o500)
        """,
    "a tree too deep for a path": """
        import os
        for _ in range(2500):  # 5000 characters, past PATH_MAX; 2500 calls, past recursion
            os.mkdir("d")
            os.chdir("d")
            os.chmod("..", 0o500)
        with open("secret", "w") as handle:
            handle.write("SECRET")
        os.chmod(".", 0o000)
        """,
    "a wide directory": """
        import os
        os.mkdir("wide")
        for i in range(3000):
            open(f"wide/{i}", "w").close()
        os.chmod("wide", 0o000)
        """,
    "names": """
        import os
        for name in ["-rf", "a\\nb", " ", "..." , "x" * 255, "\\u00e9t\\u00e9"]:
            with open(name, "w") as handle:
                handle.write("SECRET")
        fd = os.open(b"\\xff\\xfe-not-utf8", os.O_WRONLY | os.O_CREAT, 0o644)
        os.close(fd)
        os.mkdir(b"\\xffdir")
        open(b"\\xffdir/secret", "w").close()
        os.chmod(b"\\xffdir", 0)
        """,
    "symlinks and special files": """
        import os
        os.symlink("/", "root")
        os.symlink("/usr", "usr")
        os.symlink("loop2", "loop1")
        os.symlink("loop1", "loop2")
        os.mkdir("locked")
        os.symlink("/usr/bin", "locked/bin")
        os.symlink("..", "locked/up")
        open("locked/secret", "w").close()
        os.link("locked/secret", "hardlink")
        os.chmod("locked", 0)
        os.mkfifo("fifo")
        os.symlink("/tmp", "self")
        """,
    "the directory's own mode, times and attributes": """
        import os
        open("secret", "w").close()
        os.setxattr(".", "user.counter", b"41")
        os.utime(".", (12345, 12345))
        os.chmod(".", 0o500)
        """,
}

PROBE = """
import json, os
found = []
def walk(fd, where):
    for entry in os.scandir(fd):
        found.append(where + entry.name)
root = os.open("/tmp", os.O_RDONLY)
walk(root, "/tmp/")
st = os.stat("/tmp")
print(json.dumps({
    "entries": found,
    "xattrs": os.listxattr("/tmp"),
    "mode": st.st_mode & 0o7777,
    "mtime": st.st_mtime,
    "writable": os.access("/tmp", os.W_OK),
}))
"""

C_PLANT = r"""
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
int main(void) {
    mkdir("hide", 0700);
    mkdir("hide/deep", 0700);
    FILE *f = fopen("hide/deep/secret", "w");
    fputs("SECRET", f);
    fclose(f);
    symlink("/usr", "hide/usr");
    chmod("hide/deep", 0);
    chmod("hide", 0);
    chmod(".", 0500);
    int a, b;
    if (scanf("%d %d", &a, &b) == 2) printf("%d\n", a + b);
    return 0;
}
"""

C_HONEST = r"""
#include <stdio.h>
int main(void) {
    int a, b;
    if (scanf("%d %d", &a, &b) == 2) printf("%d\n", a + b);
    return 0;
}
"""


def _probe(box):
    result = box.load(PROBE).run("", timeout_s=TIMEOUT_S)
    assert result.status == "exited" and result.exit_code == 0, result
    return json.loads(result.stdout)


def _clean(box, before):
    seen = _probe(box)
    assert seen["entries"] == [], seen
    assert seen["xattrs"] == [] and seen["mode"] == before["mode"] and seen["writable"], seen
    assert seen["mtime"] != 12345


@pytest.mark.parametrize("trick", list(PLANT_PYTHON))
def test_what_a_python_program_leaves_is_gone_for_the_next(box, trick):
    before = _probe(box)
    starts = box.starts
    planted = box.load(textwrap.dedent(PLANT_PYTHON[trick]) + "print('planted')\n")
    result = planted.run("", timeout_s=TIMEOUT_S)
    assert (result.status, result.stdout) == ("exited", "planted\n"), result
    honest = box.load("print(sum(map(int, input().split())))").run("2 3", timeout_s=TIMEOUT_S)
    assert (honest.status, honest.stdout) == ("exited", "5\n"), honest
    _clean(box, before)
    assert box.starts == starts  # emptied in place, not by a restart


@pytest.mark.system_tool("gcc", package="gcc")
def test_what_a_compiled_program_leaves_is_gone_for_the_next(box):
    before = _probe(box)
    chain = toolchain(language_named("c"), C_PLANT, 256)
    assert not isinstance(chain, str), chain

    def build(source):
        built = box.build(
            {"main.c": source.encode()}, chain.build, keep=chain.keep, timeout_s=60, env=chain.env
        )
        assert built.ok, built.build
        return built

    hostile = build(C_PLANT)
    for _ in range(2):  # its second run does not see its first run's files either
        ran = hostile.exec(chain.run, "1 2", timeout_s=TIMEOUT_S, env=chain.env)
        assert (ran.status, ran.stdout) == ("exited", "3\n"), ran
    honest = build(C_HONEST)
    ran = honest.exec(chain.run, "5 7", timeout_s=TIMEOUT_S, env=chain.env)
    assert (ran.status, ran.stdout) == ("exited", "12\n"), ran
    _clean(box, before)  # neither file nor binary of the hostile build


FLOOD = """
import os
os.mkdir("flood")
for i in range(3000):
    open(f"flood/{i}", "w").close()
os.chmod("flood", 0)
print("planted")
"""


@pytest.mark.parametrize("isolation", [pytest.param("bwrap", marks=BWRAP), "native"])
def test_a_flood_of_files_goes_with_its_tmpfs_and_no_restart(isolation):
    if isolation == "native" and not landlock_abi():
        pytest.skip("the native fallback refuses to run without Landlock, which this kernel lacks")
    # each task gets a tmpfs of its own, unmounted after it: what it left is never walked,
    # so no amount of it can take longer to remove than the task took to make
    config = SandboxConfig(isolation=isolation, output_bytes=1 << 16)
    with Sandbox(config) as box:
        before = _probe(box)
        program = box.load(FLOOD)
        starts = box.starts
        for _ in range(2):
            ran = program.run("", timeout_s=TIMEOUT_S)
            assert (ran.status, ran.stdout) == ("exited", "planted\n"), ran
        honest = box.load("print(sum(map(int, input().split())))").run("2 3", timeout_s=5)
        assert (honest.status, honest.stdout) == ("exited", "5\n"), honest
        assert box.starts == starts
        _clean(box, before)
