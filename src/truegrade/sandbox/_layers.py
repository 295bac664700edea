"""Which isolation layers hold, as observed from inside a running sandbox.

Nothing here is assumed from the flags the launcher passed: every line comes from what the
zygote saw about itself (its uid, capabilities, namespaces, PID) and from probes it ran in
throw-away children (a TCP connect, a socket and a fork under the filters), compared with the
harness's own view of the host.
"""

from __future__ import annotations

import functools
import subprocess
from dataclasses import dataclass

from truegrade.sandbox._kernel import namespaces
from truegrade.sandbox._launch import SCRATCH, bwrap_path
from truegrade.sandbox._sandbox import Sandbox, SandboxError

__all__ = ["Layer", "layers"]


@dataclass(frozen=True)
class Layer:
    """One isolation layer and whether it holds here.

    Attributes:
        name: What it is ("user namespace", "seccomp"...).
        active: Whether it is in force, as observed.
        detail: What was observed.
        hint: How to get it, when it is missing.
    """

    name: str
    active: bool
    detail: str
    hint: str = ""


@functools.lru_cache(maxsize=1)
def _bwrap_version() -> str:
    path = bwrap_path()
    if path is None:
        return ""
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return path
    return f"{out.stdout.strip() or 'bubblewrap'} ({path})"


def _caps_empty(value: str | None) -> bool:
    try:
        return value is not None and int(value, 16) == 0
    except ValueError:
        return False


def layers(box: Sandbox) -> list[Layer]:
    """The layers of a started sandbox, each as observed.

    Raises:
        SandboxError: the sandbox is not running (start it first).
    """
    hello = box.hello
    details = box.details
    if not hello:
        raise SandboxError("the sandbox is not running; start it first")
    cfg = box.config
    mode = details["mode"]
    status = hello.get("status", {})
    theirs = hello.get("namespaces", {})
    ours = namespaces()

    def separate(name: str) -> bool:
        return bool(theirs.get(name)) and theirs.get(name) != ours.get(name)

    out: list[Layer] = []
    if mode == "bwrap":
        out.append(Layer("bubblewrap", True, _bwrap_version()))
    else:
        out.append(
            Layer(
                "bubblewrap",
                False,
                "not used" + (" (not installed)" if bwrap_path() is None else ""),
                "apt-get install bubblewrap" if bwrap_path() is None else "",
            )
        )
    host_uid = details["host_uid"]
    inner = hello.get("uid")
    out.append(
        Layer(
            "user namespace",
            separate("user") and inner != 0,
            f"uid {inner} inside, host uid {host_uid}"
            if separate("user")
            else "shared with the host",
            "" if separate("user") else "install bubblewrap, or allow user namespaces",
        )
    )
    pid_one = hello.get("pid") == 1
    out.append(
        Layer(
            "PID namespace",
            separate("pid") and pid_one,
            "the zygote is PID 1: tasks cannot signal it, see the grader, or outlive their task"
            if separate("pid") and pid_one
            else "shared with the host: tasks can see host processes",
        )
    )
    net = separate("net") and bool(hello.get("network_blocked"))
    out.append(
        Layer(
            "network",
            net,
            "own network namespace; a TCP connect fails at once"
            if net
            else "a task could reach the network",
        )
    )
    scratch = f"a fresh {cfg.scratch_mb} MiB tmpfs on {SCRATCH} for every task"
    if mode == "bwrap":
        fs = f"read-only system and interpreter, {scratch}, fresh /proc and /dev"
    elif mode == "native":
        fs = f"the host read-only, {scratch}, fresh /proc; what it reads only through Landlock"
    else:
        fs = "the host's filesystem"
    out.append(Layer("mount namespace", separate("mnt"), fs))
    hidden = bool(hello.get("packages_hidden"))
    out.append(
        Layer(
            "standard library only",
            hidden,
            "every site-packages / dist-packages directory (and pip's bundled wheels) is an "
            "empty read-only tmpfs: sys.path tricks find nothing to import"
            if hidden
            else "a program can put the interpreter's site-packages on sys.path",
        )
    )
    out.append(
        Layer(
            "IPC and UTS namespaces",
            separate("ipc") and separate("uts"),
            "own System V IPC and hostname",
        )
    )
    task = hello.get("task_status") or {}
    caps = all(_caps_empty(task.get(key)) for key in ("CapEff", "CapPrm", "CapBnd"))
    out.append(
        Layer(
            "capabilities",
            caps,
            "a task has none, and can regain none (empty bounding set)"
            if caps
            else f"a task's: effective {task.get('CapEff')}, bounding {task.get('CapBnd')}",
        )
    )
    apart = bool(hello.get("task_namespaces")) and bool(hello.get("random_pids"))
    out.append(
        Layer(
            "one process tree per task",
            apart,
            "the zygote's root only forks and never holds a program, an input or an answer; "
            "each call session sets itself up from its own pipes; each whole program has a "
            "supervisor that is PID 1 of its own PID and mount namespaces; every task gets a "
            "fresh tmpfs as its scratch directory and a random PID: no file, process or PID "
            "counter of one task reaches the next"
            if apart
            else "tasks share the sandbox's PID counter and scratch directory",
            "" if apart else "allow user namespaces (the sandbox's root needs one of its own)",
        )
    )
    out.append(
        Layer(
            "no new privileges",
            status.get("NoNewPrivs") == "1" or bool(hello.get("no_new_privs")),
            "set: no exec can gain privileges",
        )
    )
    abi = int(hello.get("landlock_abi") or 0)
    out.append(
        Layer(
            "Landlock",
            abi > 0,
            f"ABI {abi}: reads only the system and the interpreter, writes only in the task's "
            f"own {SCRATCH}, "
            "no /proc" + (", no TCP bind or connect" if abi >= 4 else "")
            if abi
            else "not applied",
            "" if abi else "needs Linux >= 5.13 with Landlock enabled",
        )
    )
    seccomp = bool(hello.get("seccomp_enforced")) and bool(hello.get("function_filter_enforced"))
    out.append(
        Layer(
            "seccomp",
            seccomp,
            "verified: sockets (but Unix ones), ptrace, process_vm_readv, mount, new namespaces "
            "and IPC are refused (a socket kills a Python program, and is an error for an "
            "executed one); function calls run under an allow-list (no process, file, pipe, "
            "socket or signal; nothing peeks at the calls queued for them)"
            if seccomp
            else details.get("seccomp_note") or "the filter did not hold in the probe",
            "" if seccomp else "pip install pyseccomp; apt-get install libseccomp2",
        )
    )
    out.append(
        Layer(
            "resource limits",
            True,
            f"address space {cfg.memory_mb} MiB, files {cfg.file_size_mb} MiB, "
            f"{cfg.open_files} descriptors, no core dumps, CPU time per task",
        )
    )
    if details.get("memory_cgroup"):
        memory = Layer(
            "memory per task",
            True,
            "a whole program's processes together, shared and anonymous mappings and the files "
            f"it writes included: memory cgroup {details['memory_cgroup']}",
        )
    else:
        memory = Layer(
            "memory per task",
            False,
            "each process of a whole program has its own memory limit, so a program that forks "
            "may use that much per process, and shared mappings are bounded by the address "
            "space only where it is capped (not for Java, Go or JavaScript)",
            "run as root with a writable memory cgroup",
        )
    out.append(memory)
    if details.get("cgroup"):
        pids = Layer("process limit", True, f"pids cgroup, pids.max = {details['cgroup_max']}")
    elif host_uid != 0:
        pids = Layer("process limit", True, f"RLIMIT_NPROC = {cfg.max_processes} (non-root uid)")
    else:
        pids = Layer(
            "process limit",
            False,
            "running as root without a writable pids cgroup: RLIMIT_NPROC does not bind root "
            "(function calls still cannot create processes)",
            "give root a writable pids cgroup, or run as a non-root user",
        )
    out.append(pids)
    out.append(
        Layer(
            "output caps",
            True,
            f"{cfg.output_bytes:,} bytes per returned value and per output stream",
        )
    )
    out.append(
        Layer(
            "not dumpable",
            hello.get("dumpable") == 0,
            "no process of the sandbox can be traced or have its memory read",
        )
    )
    out.append(
        Layer(
            "deadlines",
            True,
            "every task is killed at its deadline"
            + (", with everything else in the sandbox" if pid_one else " (its process group)"),
        )
    )
    return out
