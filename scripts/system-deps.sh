#!/usr/bin/env bash
# The system packages `make demo` and `make test` need, in one list. Checking takes a fraction
# of a second. What is missing is installed with apt when this runs as root on a machine that
# has apt (CI, a fresh container); anywhere else the script stops, before anything is built or
# tested, with one line that names the missing packages and the command that installs them.
#
# usage: scripts/system-deps.sh [demo|test]     (default: test; PYTHON picks the interpreter)
set -euo pipefail

goal=${1:-test}
python=${PYTHON:-python3}
case $goal in
    demo | test) ;;
    *) echo "usage: $0 [demo|test]" >&2; exit 2 ;;
esac

has() { command -v "$1" >/dev/null 2>&1; }
has_venv() { "$python" -c 'import venv, ensurepip' 2>/dev/null; }
has_library() {
    local cache
    cache=$(ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null || true)
    [[ $cache == *"$1"* ]]
}
has_rustc() { [[ -x /usr/bin/rustc ]]; }
has_browser() { has chromium || has chromium-browser || has google-chrome; }

# Debian package | the goals that need it | how to tell it is there | what for
PACKAGES=(
    "python3-venv demo,test has_venv"                # the .venv make creates
    "make         demo,test has make"                # runs the two commands
    "bubblewrap   test      has bwrap"               # the code grader's sandbox, tested layer by layer
    "libseccomp2  test      has_library libseccomp.so.2"  # the sandbox's system-call filter
    "chromium     test      has_browser"             # renders the grader card in a test
    "util-linux   test      has taskset"             # pins a process to one core in an engine test
    "g++          demo,test has g++"                 # C and C++ stdin/stdout programs
    "default-jdk-headless test has javac"            # Java programs
    "nodejs       test      has node"                # JavaScript programs
    "golang-go    test      has go"                  # Go programs
    "rustc        test      has_rustc"               # Rust programs (Debian's, not a home toolchain)
    "pypy3        test      has pypy3"               # Python as Kattis runs it (problem packages)
    "git          demo,test has git"                 # reads and applies repository tasks' patches
    "patch        demo,test has patch"               # the SWE-bench-style harness's fuzzy apply
)

missing_packages() {
    local line package goals check
    for line in "${PACKAGES[@]}"; do
        read -r package goals check <<<"$line"
        [[ ,$goals, == *,$goal,* ]] || continue
        # shellcheck disable=SC2086  # the check is a function name and its arguments
        $check || printf '%s\n' "$package"
    done
}

mapfile -t missing < <(missing_packages)
((${#missing[@]} == 0)) && exit 0

if [[ $(id -u) == 0 ]] && has apt-get; then
    echo "system-deps: installing ${missing[*]} (needed by make $goal) with apt-get" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
    mapfile -t missing < <(missing_packages)
    ((${#missing[@]} == 0)) && exit 0
    echo "system-deps: apt-get ran, and make $goal still cannot find ${missing[*]}" >&2
    exit 1
fi

if has apt-get; then
    command="sudo apt-get install -y ${missing[*]}"
else
    command="your package manager (Debian names: ${missing[*]})"
fi
echo "system-deps: make $goal needs ${missing[*]}, missing here; install with: $command" >&2
exit 1
