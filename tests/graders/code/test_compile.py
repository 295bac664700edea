"""What a build costs: the precompiled ``bits/stdc++.h`` and the build cache, by what they do
(which header the compiler read, which builds ran), never by how long anything took."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

from truegrade.graders.code import CodeGrader
from truegrade.graders.code._compile import (
    BUILD_CACHE,
    ensure_pch,
    pch_dirs,
    pch_root,
    pch_status,
    with_pch,
)
from truegrade.graders.code._languages import LANGUAGES, toolchain
from truegrade.graders.code._spec import StdioCase
from truegrade.graders.code._stdio import StdioSettings, _build, run_stdio_program
from truegrade.sandbox import ExecLimits, Sandbox

CPP = LANGUAGES["cpp"]
GXX = pytest.mark.system_tool("g++", package="g++")
SETTINGS = StdioSettings(
    time_limit_s=2,
    memory_mb=256,
    stack_mb=64,
    compile_timeout_s=60,
    compile_memory_mb=2048,
    compare="lines",
)
STDCXX = (
    "#include <bits/stdc++.h>\nusing namespace std;\n"
    "int main(){long a,b;cin>>a>>b;vector<long> v{a,b};\n"
    "cout<<accumulate(v.begin(),v.end(),0L)<<'\\n';}\n"
)
CSTDIO = (
    '#include <stdio.h>\nint main(){long a,b;if(scanf("%ld %ld",&a,&b)==2)printf("%ld\\n",a+b);}\n'
)
TESTS = [StdioCase("1 2\n", "3\n"), StdioCase("5 7\n", "12\n")]
_MAKE = (
    "from truegrade.graders.code import CodeGrader\n"
    "from truegrade.graders.code._compile import ensure_pch\n"
    "print(ensure_pch(CodeGrader.from_options({}).sandbox_config()))\n"
)


@pytest.fixture(scope="module")
def pch_root_dir():
    """A cache of its own (not under /tmp, which the sandbox's scratch directory covers), its
    header made by two processes racing, as a batch's workers would; removed at the end."""
    root = tempfile.mkdtemp(prefix="truegrade-pch-test-", dir="/var/tmp")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TRUEGRADE_PCH_DIR", root)
        yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def made(pch_root_dir):
    """(the header's directory, the grader's sandbox configuration)."""
    if shutil.which("g++") is None:
        pytest.skip("needs g++ (Debian package g++)")
    racers = [
        subprocess.Popen([sys.executable, "-c", _MAKE], stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    said = [racer.communicate(timeout=300)[0].strip() for racer in racers]
    config = CodeGrader.from_options({}).sandbox_config()
    return said, config


@pytest.fixture
def cache():
    BUILD_CACHE.clear()
    yield BUILD_CACHE
    BUILD_CACHE.clear()


@GXX
def test_racing_workers_make_one_header_atomically(made, pch_root_dir):
    said, config = made
    assert said[0] == said[1] != "None"
    directory = said[0]
    assert os.path.dirname(directory) == pch_root_dir and pch_root_dir in config.read_only_dirs
    assert os.path.isfile(os.path.join(directory, "bits", "stdc++.h.gch"))
    left = sorted(os.listdir(pch_root_dir))
    assert [n for n in left if not n.endswith(".lock")] == [os.path.basename(directory)]
    assert ensure_pch(config) == directory  # found, not made again
    assert pch_status() == (True, f"ready: {directory}/bits/stdc++.h.gch")


@GXX
def test_a_program_including_bits_stdcxx_uses_the_precompiled_header(made):
    said, config = made
    chain = toolchain(CPP, STDCXX, 256)
    assert not isinstance(chain, str) and chain.build is not None
    argv = with_pch(CPP, chain.build, config)
    assert argv == [chain.build[0], "-I", said[0], *chain.build[1:]]  # the builds' own flags
    shown = [argv[0], "-H", "-Winvalid-pch", *argv[1:]]  # which headers gcc read, and why not
    with Sandbox(config) as box:
        built = box.build(
            {"main.cpp": STDCXX.encode()},
            shown,
            keep=chain.keep,
            timeout_s=60,
            env=chain.env,
            limits=ExecLimits(data_mb=2048),
        )
        assert built.ok, built.build.stderr
        # '!': a valid precompiled header was used in place of the header itself
        assert f"! {said[0]}/bits/stdc++.h.gch" in built.build.stderr.splitlines()
        assert "not used because" not in built.build.stderr
        assert built.exec(chain.run, "2 3\n", timeout_s=5, env=chain.env).stdout == "5\n"


@GXX
@pytest.mark.parametrize(
    "source",
    [STDCXX, CSTDIO, "#define _GLIBCXX_DEBUG 1\n" + STDCXX],
    ids=["bits-stdcxx", "no-bits-stdcxx", "invalidated-by-a-macro"],
)
def test_every_program_builds_and_runs_the_same_with_the_header_there(made, cache, source):
    _, config = made
    with Sandbox(config) as box:
        verdicts = run_stdio_program(
            box, lambda: box, CPP, source, TESTS, SETTINGS, time.monotonic() + 60
        )
    assert [v.verdict for v in verdicts] == ["accepted", "accepted"], verdicts


@GXX
def test_the_grader_passes_and_fails_cpp_with_the_header_there(made):
    grader = CodeGrader.from_options({"call_timeout_s": 2})
    tests = [{"stdin": "1 2\n", "stdout": "3\n"}, {"stdin": "5 7", "stdout": "12"}]
    for source, passed in ((STDCXX, True), (STDCXX.replace("a,b};", "a,-b};"), False)):
        row = {"response": f"```cpp\n{source}```", "reference": {"language": "cpp", "stdio": tests}}
        grade = grader.grade(row)
        assert grade.passed is passed and grade.error is None, grade.explanation


def test_no_header_is_used_where_it_is_turned_off_or_cannot_be_seen(monkeypatch):
    chain = toolchain(CPP, "", 256)
    argv = ["/usr/bin/g++", "-O2", "-o", "main", "main.cpp"]
    monkeypatch.setenv("TRUEGRADE_PCH_DIR", "")
    assert pch_root() is None and pch_dirs() == ()
    config = CodeGrader.from_options({}).sandbox_config()
    assert with_pch(CPP, argv, config) == argv and ensure_pch(config) is None
    assert pch_status()[0] is False
    if not isinstance(chain, str):
        assert "turned off" in pch_status()[1]
    monkeypatch.setenv("TRUEGRADE_PCH_DIR", "/tmp/truegrade-pch")
    assert pch_dirs() == ()  # the sandbox's scratch tmpfs would cover it
    monkeypatch.delenv("TRUEGRADE_PCH_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", "/var/cache/x")
    assert pch_root() == "/var/cache/x/truegrade/pch"
    for other in ("c", "java", "rust", "go"):  # C++ only
        assert with_pch(LANGUAGES[other], argv, config) == argv


def _built(box, source, language=CPP, settings=SETTINGS, extra=None):
    executable, _, _, why = _build(box, language, source, settings, extra or {})
    return executable, why


@GXX
def test_an_identical_program_is_built_once_per_process(cache):
    config = CodeGrader.from_options({}).sandbox_config()
    with Sandbox(config) as box:
        first, _ = _built(box, CSTDIO)
        again, _ = _built(box, CSTDIO)
        assert first is not None and again is not None
        assert not first.cached and again.cached
        assert (cache.hits, cache.misses) == (1, 1)
        changed = [
            _built(box, CSTDIO.replace("a+b", "b+a"))[0],  # the source
            _built(box, CSTDIO, language=LANGUAGES["c"])[0],  # the compiler and its flags
            _built(box, CSTDIO, extra={"extra.h": "#define X\n"})[0],  # an extra file
            _built(box, CSTDIO, settings=_with(compile_memory_mb=1024))[0],  # the limits
        ]
        assert all(e is not None and not e.cached for e in changed)
        assert (cache.hits, cache.misses) == (1, 5)


def _with(**changes):
    from dataclasses import replace

    return replace(SETTINGS, **changes)


@GXX
def test_a_cached_programs_runs_are_as_independent_as_a_fresh_ones(cache):
    # each run looks for what an earlier one left, leaves a file, and tries to spoil its binary
    source = (
        '#include <bits/stdc++.h>\nint main(){bool seen=std::ifstream("seen").good();'
        'std::ofstream("seen")<<1;std::ofstream("main")<<"x";long a,b;std::cin>>a>>b;'
        "std::cout<<(seen?-1:a+b)<<'\\n';}\n"
    )
    config = CodeGrader.from_options({}).sandbox_config()
    with Sandbox(config) as box:
        for _ in range(2):  # built, then from the cache
            verdicts = run_stdio_program(
                box, lambda: box, CPP, source, TESTS * 2, SETTINGS, time.monotonic() + 60
            )
            assert [v.verdict for v in verdicts] == ["accepted"] * 4, verdicts
    assert (cache.hits, cache.misses) == (1, 1)


@GXX
def test_a_program_that_does_not_compile_is_compiled_again_and_fails_again(cache):
    config = CodeGrader.from_options({}).sandbox_config()
    with Sandbox(config) as box:
        for _ in range(2):
            executable, why = _built(box, "int main( { return 0; }\n")
            assert executable is None and "exit status" in why and "error" in why
    assert (cache.hits, cache.misses, len(cache)) == (0, 2, 0)
