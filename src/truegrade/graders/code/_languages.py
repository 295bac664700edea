"""The languages a stdin/stdout program may be written in: how each is built and run.

Each language is a build command (a compiler, or a syntax check for a script) run once per
program in the sandbox's scratch directory, the files that build leaves for the runs, and the
command each test executes. Toolchains are the Debian packages under ``/usr`` (found on
``/usr/bin:/bin`` only, never on the caller's ``PATH``: a compiler in a home directory is not
something the sandbox may expose), resolved to their real paths, because the sandbox sees
neither ``/etc/alternatives`` nor the caller's environment.

Memory rule (one limit ``M`` per test, in MiB):

* C, C++, Rust, Python: the address space is capped at ``M`` (``RLIMIT_AS``), as most judges do;
* Java, Go, JavaScript, PyPy: their runtimes reserve far more address space than they use (a
  JVM's heap and class space, Go's arenas, V8's pointer cage, PyPy's arenas and the stack of
  GC roots it sizes by the recursion limit), so an address-space cap would refuse a correct
  program at start. There the private writable memory is capped (``RLIMIT_DATA``) at ``M``
  plus the runtime's own overhead, and the runtime's heap at ``M`` by its own flag (``-Xmx``,
  ``GOMEMLIMIT``, ``--max-old-space-size``; PyPy has none a judge sets). A JVM's overhead is
  mostly its threads' stacks (a dozen threads, each sized by ``-Xss64m``, about 620 MB of
  private memory before the heap), hence 768 MB: less refuses a correct program at a 256 MB
  limit at start. PyPy's is 2 GB: ``sys.setrecursionlimit(10**6)``, the first line of many
  accepted Kattis programs, makes it reserve about 1.5 GB it never touches, and under an
  address-space cap of 1 GB that line is a ``MemoryError`` (Kattis bounds what a program
  keeps resident). What every process of a test really uses is held to ``M`` plus what the
  runtime itself keeps resident by the task's memory cgroup, whatever is reserved.

A program that runs out gets ``memory_limit`` when the kernel refused the memory (the runtime's
out-of-memory report, or a peak resident size over ``M``), else the crash is a ``runtime_error``.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field

from truegrade.sandbox import ExecLimits

__all__ = ["LANGUAGES", "Language", "Toolchain", "language_named", "read_only_dirs", "toolchain"]

_SEARCH = "/usr/bin:/bin"
_SCRATCH = "/tmp"  # noqa: S108 - the sandbox's private scratch directory, not the host's /tmp
_BASE_ENV = {"PATH": _SEARCH, "LANG": "C.UTF-8", "HOME": _SCRATCH, "TMPDIR": _SCRATCH}


@dataclass(frozen=True)
class Toolchain:
    """A language's commands, resolved on this machine.

    Attributes:
        build: The build command (None: nothing to build).
        run: The command of one test.
        keep: What the build leaves for the runs (``fnmatch`` patterns).
        env: Extra environment of the build and of the runs.
        read_only_dirs: Directories outside ``/usr`` the toolchain needs (read-only).
    """

    build: list[str] | None
    run: list[str]
    keep: list[str]
    env: dict[str, str] = field(default_factory=dict)
    read_only_dirs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Language:
    """One language: its names, its fence tags, its package, how to build and run it.

    Attributes:
        name: The canonical name (``cpp``...).
        aliases: Other names a row or a fence may use (``c++``, ``cc``...).
        package: The Debian package of its toolchain (named when it is missing).
        command: The command that must exist on ``/usr/bin:/bin``.
        reserves_address_space: Capped by ``RLIMIT_DATA`` and a heap flag, not ``RLIMIT_AS``.
        overhead_mb: Memory the runtime itself needs on top of the program's limit.
        resident_mb: Of that, what the runtime itself keeps resident (its code, its collector,
            its threads' stacks) where its heap flag bounds the program: what all of a test's
            processes together may use is the program's limit plus this.
        source_name: The source file's name, given the source.
        resolve: Builds the ``Toolchain`` from the command's real path and the source name.
    """

    name: str
    aliases: tuple[str, ...]
    package: str
    command: str
    source_name: Callable[[str], str]
    resolve: Callable[[str, str, int], Toolchain]
    reserves_address_space: bool = False
    overhead_mb: int = 0
    resident_mb: int = 0
    own_stack: bool = False
    fences: tuple[str, ...] = ()
    """Fence tags its programs may also come under (PyPy runs programs fenced as Python)."""

    def limits(self, memory_mb: int, stack_mb: int) -> ExecLimits:
        """The memory limits of one test (the rule in this module's docstring).

        The stack limit is raised for the main thread's deep recursion, except where the
        runtime sizes its stacks itself (a JVM by ``-Xss``; node, whose threads would each
        reserve that much, as glibc sizes new threads' stacks by this limit).
        """
        stack = None if self.own_stack else stack_mb
        if self.reserves_address_space:
            task = memory_mb + self.resident_mb
            return ExecLimits(data_mb=memory_mb + self.overhead_mb, stack_mb=stack, task_mb=task)
        return ExecLimits(as_mb=memory_mb + self.overhead_mb, stack_mb=stack)


def _fixed(name: str) -> Callable[[str], str]:
    return lambda _source: name


def _gcc(standard: str) -> Callable[[str, str, int], Toolchain]:
    def resolve(compiler: str, source: str, _memory_mb: int) -> Toolchain:
        build = [compiler, f"-std={standard}", "-O2", "-pipe", "-o", "main", source, "-lm"]
        return Toolchain(build, [f"{_SCRATCH}/main"], ["main"])

    return resolve


def _python(interpreter: str, source: str, _memory_mb: int) -> Toolchain:
    """Python as judges run it, ``python main.py``, isolated from the environment (``-I``) and
    writing no bytecode (``-B``). The program runs *with* ``site``: it is what gives a script
    ``exit()`` and ``quit()``, which correct programs end with, and judges run without ``-S``
    (a program calling ``exit()`` would otherwise be a ``NameError``, a run-time error)."""
    check = "import sys; compile(open(sys.argv[1], 'rb').read(), sys.argv[1], 'exec')"
    return Toolchain(
        [interpreter, "-I", "-S", "-B", "-c", check, source],
        [interpreter, "-I", "-B", f"{_SCRATCH}/{source}"],
        [source],
    )


def _pypy(interpreter: str, source: str, memory_mb: int) -> Toolchain:
    """PyPy, as Kattis runs Python 3; its collector's nursery is sized here, since it would read
    the CPU's cache size from ``/proc``, which the sandbox hides (and warn on every run)."""
    chain = _python(interpreter, source, memory_mb)
    return Toolchain(chain.build, chain.run, chain.keep, {"PYPY_GC_NURSERY": "4M"})


def _node(node: str, source: str, memory_mb: int) -> Toolchain:
    return Toolchain(
        [node, "--check", source],
        [node, f"--max-old-space-size={memory_mb}", f"{_SCRATCH}/{source}"],
        [source],
    )


_JAVA_PUBLIC = re.compile(r"\bpublic\s+(?:final\s+|abstract\s+)*class\s+([A-Za-z_$][\w$]*)")
_JAVA_CLASS = re.compile(r"\bclass\s+([A-Za-z_$][\w$]*)")
_JAVA_MAIN = re.compile(r"\bstatic\s+(?:final\s+)?(?:public\s+)?void\s+main\s*\(")


def _java_main_class(source: str) -> str:
    """The class whose ``main`` runs: the last class declared before the first ``main``."""
    found = _JAVA_MAIN.search(source)
    head = source[: found.start()] if found else source
    classes = _JAVA_CLASS.findall(head)
    return classes[-1] if classes else "Main"


def _java_source_name(source: str) -> str:
    public = _JAVA_PUBLIC.search(source)
    return f"{public.group(1) if public else _java_main_class(source)}.java"


def _java(javac: str, source_name: str, memory_mb: int) -> Toolchain:
    home = os.path.dirname(os.path.dirname(javac))
    java = os.path.join(home, "bin", "java")
    config = os.path.realpath(os.path.join(home, "lib", "jvm.cfg"))
    extra = () if config.startswith("/usr/") else (os.path.dirname(config),)
    flags = ["-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:CICompilerCount=1"]
    build = [javac, "-J-Xmx512m", *[f"-J{f}" for f in flags], "-encoding", "UTF-8", "-d", "."]
    main = source_name.removesuffix(".java")
    run = [java, f"-Xmx{memory_mb}m", "-Xss64m", *flags, "-Xshare:auto", "-cp", _SCRATCH, main]
    return Toolchain([*build, source_name], run, ["*.class"], read_only_dirs=extra)


def _go(go: str, source: str, memory_mb: int) -> Toolchain:
    env = {
        "GOCACHE": f"{_SCRATCH}/.cache",
        "GOPATH": f"{_SCRATCH}/.go",
        "GO111MODULE": "off",
        "CGO_ENABLED": "0",
        "GOFLAGS": "",
        "GOTELEMETRY": "off",
        "GOMAXPROCS": "2",
        "GOMEMLIMIT": f"{memory_mb}MiB",
    }
    return Toolchain([go, "build", "-o", "main", source], [f"{_SCRATCH}/main"], ["main"], env)


@functools.lru_cache(maxsize=1)
def _c_compiler() -> str | None:
    found = shutil.which("gcc", path=_SEARCH)
    return os.path.realpath(found) if found else None


def _rust(rustc: str, source: str, _memory_mb: int) -> Toolchain:
    linker = _c_compiler()
    build = [rustc, "--edition", "2021", "-O", "-o", "main", source]
    if linker:  # rustc calls ``cc``, an alternatives link the sandbox cannot see
        build[1:1] = ["-C", f"linker={linker}"]
    return Toolchain(build, [f"{_SCRATCH}/main"], ["main"])


LANGUAGES: dict[str, Language] = {
    lang.name: lang
    for lang in (
        Language("python", ("py", "python3", "py3"), "python3", "python3", _fixed("main.py"),
                 _python),
        Language("pypy", ("pypy3",), "pypy3", "pypy3", _fixed("main.py"), _pypy,
                 reserves_address_space=True, overhead_mb=2048, resident_mb=96,
                 fences=("python", "py", "python3", "py3")),
        Language("cpp", ("c++", "cc", "cxx", "g++", "cpp17"), "g++", "g++", _fixed("main.cpp"),
                 _gcc("gnu++17")),
        Language("c", ("gcc",), "gcc", "gcc", _fixed("main.c"), _gcc("gnu11")),
        Language("java", (), "default-jdk-headless", "javac", _java_source_name, _java,
                 reserves_address_space=True, overhead_mb=768, resident_mb=128, own_stack=True),
        Language("javascript", ("js", "node", "nodejs"), "nodejs", "node", _fixed("main.js"),
                 _node, reserves_address_space=True, overhead_mb=256, resident_mb=96,
                 own_stack=True),
        Language("go", ("golang",), "golang-go", "go", _fixed("main.go"), _go,
                 reserves_address_space=True, overhead_mb=64, resident_mb=32),
        Language("rust", ("rs",), "rustc", "rustc", _fixed("main.rs"), _rust),
    )
}  # fmt: skip
"""Every language, by canonical name."""

_BY_ALIAS = {alias: lang for lang in LANGUAGES.values() for alias in (lang.name, *lang.aliases)}


def language_named(name: str) -> Language | None:
    """The language called ``name`` (case-insensitive, aliases too), or None."""
    return _BY_ALIAS.get(name.strip().lower())


@functools.lru_cache(maxsize=32)
def _command(command: str) -> str | None:
    found = shutil.which(command, path=_SEARCH)
    return os.path.realpath(found) if found else None


def toolchain(language: Language, source: str, memory_mb: int) -> Toolchain | str:
    """The language's commands for ``source``, or why they cannot run here (the package)."""
    command = _command(language.command)
    if command is None:
        return (
            f"no {language.command} on {_SEARCH} to run {language.name} "
            f"(Debian package {language.package}: apt-get install {language.package})"
        )
    chain = language.resolve(command, language.source_name(source), memory_mb)
    return Toolchain(
        chain.build, chain.run, chain.keep, {**_BASE_ENV, **chain.env}, chain.read_only_dirs
    )


def read_only_dirs() -> tuple[str, ...]:
    """The directories outside ``/usr`` that the toolchains installed here need (a JDK's
    configuration in ``/etc``): the sandbox binds them read-only, and nothing else."""
    found: list[str] = []
    for language in LANGUAGES.values():
        chain = toolchain(language, "", 256)
        if not isinstance(chain, str):
            found += [d for d in chain.read_only_dirs if d not in found]
    return tuple(found)
