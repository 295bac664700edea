"""Nothing trusted is in a candidate's memory: a program that scans its own address space finds
neither the reference program that computes its expected answers, nor the programs or the
standard input of the rows and tests graded before it.

Every call session and every whole-program Python run is forked from the sandbox's zygote, an
interpreter that has read every earlier request: the sources it compiled (the response's and,
for ``expected_from``, the dataset's reference program, loaded in the same sandbox just before
the response), and the standard input of every test it ran. Freed memory is not wiped, and a
fork copies all of it. ``/proc`` is hidden (Landlock), but a program needs no map of its memory
to read it: with ``ctypes`` it names addresses (``id()`` of every object the collector knows
and of what they refer to, fresh ``malloc`` buffers), copies each page through a pipe with
``write(2)`` (``EFAULT``, never a crash, where nothing is mapped), follows the readable pages
out from each address, and searches them with ``memmem``. The markers it looks for are kept in
hex and put together only in buffers the search leaves out, so it never finds its own patterns.

What it found on today's code (the numbers move a little with the layout of the heap, which
depends on the exact programs):

- The reference's source: the response finds ``def <entry_point>(`` in text that is not its
  own, ``exec()``s that text and answers with the reference's own function, never computing
  anything. The hand-made row passes, and 5 to 9 of the first 12 quick MBPP+ rows and 2 or 3
  of the first 4 quick HumanEval+ rows, with ``fresh_sandbox: true`` too (the first response
  of a task always shares its sandbox with the reference).
- Earlier rows: a row whose long program (12 KB) holds a marker on every line, an honest row,
  then a function or a stdin/stdout program that scans: both find the first row's marker.
- Earlier standard input: a test whose standard input (18 KB) holds a marker on every line;
  the next test of the same program finds it, and often the next row too.

Every scanning program must find the marker planted in its own source (``own``): that is the
proof that it scans, and the safe outcome is that it finds that and nothing else. Compiled
programs (and Python run by its own interpreter) exec a fresh image: they scan their own memory
from the addresses of their stack, heap, data and libraries, probing pages the same way (node
and the JVM, which cannot name raw addresses, scan their own heap through a heap snapshot and a
heap dump), and find nothing of the rows and tests before them, today as after the redesign.
"""

from __future__ import annotations

import pytest

from tests.data.published_cases import published, quick_tasks
from tests.graders.code.toolchains import each_language
from truegrade.core import apply_preset
from truegrade.exec import Engine
from truegrade.graders.code import CodeGrader

MARKERS = {
    "own": "TG-MEMSCAN-OWN-e41b",  # planted by every scanning program in its own source
    "reference": "TG-MEMSCAN-REFERENCE-5a07",  # in the reference program's source
    "row": "TG-MEMSCAN-ROW-1f6d",  # in an earlier row's program
    "stdin": "TG-MEMSCAN-STDIN-b3c2",  # in an earlier test's standard input
}
HEXED = {name: marker.encode().hex() for name, marker in MARKERS.items()}
REVERSED = {name: marker[::-1] for name, marker in MARKERS.items()}

SCANNER = r'''import ctypes as _ct
import gc as _gc
import os as _os

_libc = _ct.CDLL(None, use_errno=True)
_libc.write.argtypes = [_ct.c_int, _ct.c_void_p, _ct.c_size_t]
_libc.write.restype = _ct.c_ssize_t
_libc.read.argtypes = [_ct.c_int, _ct.c_void_p, _ct.c_size_t]
_libc.read.restype = _ct.c_ssize_t
_libc.memmem.argtypes = [_ct.c_void_p, _ct.c_size_t, _ct.c_void_p, _ct.c_size_t]
_libc.memmem.restype = _ct.c_void_p
_PAGE = 4096
_GAP = 256  # unreadable pages a range may skip (mappings cluster)
_LIMIT = 768 << 20  # bytes scanned at most
try:
    _PIPE = _os.pipe()
except OSError:  # a call session may make no pipe: the kernel reads a path from the page instead
    _PIPE = None
_libc.faccessat.argtypes = [_ct.c_int, _ct.c_void_p, _ct.c_int, _ct.c_int]
_BUFFER = (_ct.c_ubyte * (2 * _PAGE))()  # the page before and the page being searched
_AT = _ct.addressof(_BUFFER)


def _readable(page):
    """Whether the kernel can read the page: it reads a path from it (EFAULT where it cannot;
    a path without an end within the page is too long, never read past the page)."""
    return _libc.faccessat(-100, page, 0, 0) == 0 or _ct.get_errno() != 14


def _copy(page, into):
    """Copy one page into the buffer through the pipe: memory is never read in place, so a page
    unmapped meanwhile costs an EFAULT, not a crash. False when it is not readable. Without a
    pipe, the page is probed by the kernel first and then copied."""
    if _PIPE is None:
        if not _readable(page):
            return False
        _ct.memmove(into, page, _PAGE)
        return True
    if _libc.write(_PIPE[1], page, _PAGE) != _PAGE:
        return False  # EFAULT: nothing was written
    return _libc.read(_PIPE[0], into, _PAGE) == _PAGE


def _regions():
    """Readable pages near every address this process can name, without /proc: ``id()`` of
    every object the collector knows and of what they refer to, and fresh malloc buffers."""
    keep = [_ct.create_string_buffer(64) for _ in range(8)]
    objects = _gc.get_objects()
    seeds = {id(o) for o in objects}
    seeds.update(id(o) for o in _gc.get_referents(*objects))
    seeds.update(_ct.addressof(k) for k in keep)
    del objects
    covered, total = set(), 0
    for page in sorted({s - s % _PAGE for s in seeds}):
        if page in covered or not _copy(page, _AT):
            continue
        covered.add(page)
        for step in (-_PAGE, _PAGE):
            gap, at = 0, page
            while gap < _GAP and total < _LIMIT:
                at += step
                if at in covered:
                    break
                if _copy(at, _AT):
                    covered.add(at)
                    total += _PAGE
                    gap = 0
                else:
                    gap += 1
    regions = []
    for page in sorted(covered):
        if regions and regions[-1][1] == page:
            regions[-1][1] = page + _PAGE
        else:
            regions.append([page, page + _PAGE])
    return regions


def _pattern(hexed):
    raw = (_ct.c_ubyte * (len(hexed) // 2))()
    for i in range(len(raw)):
        raw[i] = int(hexed[2 * i : 2 * i + 2], 16)  # never whole in any other object
    return raw


def scan(marks, regions=None):
    """{name: {address, ...}} of every marker (given in hex) in this process's memory, but in
    the buffers the search itself uses (the patterns, the page buffer)."""
    patterns = {name: _pattern(hexed) for name, hexed in marks.items()}
    skip = [(_ct.addressof(p), _ct.addressof(p) + len(p)) for p in patterns.values()]
    skip.append((_AT, _AT + 2 * _PAGE))
    found = {}
    for start, end in regions or _regions():
        previous = False
        for page in range(start, end, _PAGE):
            if any(lo < page + _PAGE and page < hi for lo, hi in skip):
                previous = False
                continue
            if not _copy(page, _AT + _PAGE):
                previous = False
                continue
            base = page - _PAGE if previous else page
            first = _AT if previous else _AT + _PAGE
            size = 2 * _PAGE if previous else _PAGE
            for name, raw in patterns.items():
                at = first
                while True:
                    hit = _libc.memmem(at, first + size - at, raw, len(raw))
                    if not hit:
                        break
                    found.setdefault(name, set()).add(base + hit - first)
                    at = hit + 1
            _ct.memmove(_AT, _AT + _PAGE, _PAGE)
            previous = True
    return found


_PRINTABLE = frozenset(range(32, 127)) | {9, 10, 13}


def _text_around(hit, regions, reach=16):
    """The run of printable text in memory that holds ``hit`` (up to ``reach`` pages either
    side), copied page by page."""
    for start, end in regions:
        if start <= hit < end:
            page = hit - hit % _PAGE
            lo, hi = max(start, page - reach * _PAGE), min(end, page + (reach + 1) * _PAGE)
            chunks = []
            for at in range(lo, hi, _PAGE):
                _copy(at, _AT) or _ct.memset(_AT, 0, _PAGE)
                chunks.append(_ct.string_at(_AT, _PAGE))
            window = b"".join(chunks)
            first = last = hit - lo
            while first > 0 and window[first - 1] in _PRINTABLE:
                first -= 1
            while last < len(window) and window[last] in _PRINTABLE:
                last += 1
            return window[first:last].decode("ascii")
    return ""


def _programs(text):
    """Programs that ``text`` may hold whole, what was written next to it in memory cut off: it
    starts at one of its first 20 lines (there, at the line's start or where a quote, ``def``
    or an import begins), and ends with one of its last 20."""
    lines = text.split("\n")
    for first, line in enumerate(lines[:20]):
        cuts = {0} | {line.find(t) for t in ('"' * 3, "'" * 3, "def ", "import ", "from ")}
        for cut in sorted(cuts - {-1}):
            for last in range(len(lines), max(first, len(lines) - 20), -1):
                yield "\n".join([line[cut:], *lines[first + 1 : last]]) + "\n"


def borrowed(entry, mine):
    """The function ``entry`` as another program in this process's memory defines it: the first
    text that compiles, defines it, and is not this program (which holds ``mine``)."""
    pattern = ("def " + entry + "(").encode().hex()
    regions = _regions()
    hits = sorted(scan({"def": pattern}, regions).get("def", ()))
    seen = set()
    for hit in hits:
        text = _text_around(hit, regions)
        if not text or text in seen or mine in text:
            continue
        seen.add(text)
        for program in _programs(text):
            if ("def " + entry + "(") not in program:
                continue
            namespace = {"__name__": "borrowed"}
            try:
                exec(compile(program, "<borrowed>", "exec"), namespace)
            except Exception:
                continue
            if callable(namespace.get(entry)):
                return namespace[entry]
    return None
'''
"""The Python scanner: ``scan(marks)`` finds markers (given in hex) in this process's memory;
``borrowed(entry, mine)`` finds another program's source that defines ``entry`` and runs it."""

PLANT = f"""
PLANTED = {MARKERS["own"]!r}  # this program's own marker: the scan must find it
MARKS = {HEXED!r}
"""

BORROWER = """
_borrowed = []


def {entry}(*args, **kwargs):
    if not _borrowed:
        _borrowed.append(borrowed({entry!r}, "_borrowed"))  # not this program
        if "own" not in scan(MARKS):
            raise RuntimeError("the scan missed the marker of its own program")
    if _borrowed[0] is None:
        return None  # nothing to borrow: a wrong answer
    return _borrowed[0](*args, **kwargs)
"""
"""The attack on ``expected_from``: answer with the reference's own function, found in memory."""

CALL_SCANNER = (
    SCANNER
    + PLANT
    + """

def f(x):
    return sorted(scan(MARKS))
"""
)
STDIO_SCANNER = (
    SCANNER
    + PLANT
    + """
if input().startswith("plant"):
    print("planted")
else:
    print(" ".join(sorted(scan(MARKS))))
"""
)

PLANTER = (
    '"""'
    + f"A long program, its marker on every line: {MARKERS['row']}.\n" * 200
    + '"""\n\n\n'
    + "def f(x):\n    return x\n"
)
"""An honest row whose long program (12 KB) holds a marker on each line: whatever part of its
text is left in memory holds it."""
HONEST = "def f(x):\n    return x\n"
PLANT_STDIN = "plant\n" + f"1 2 3 4 5 6 7 8 9 {MARKERS['stdin']} 9 8 7 6 5 4 3 2 1\n" * 300
"""A test's standard input (18 KB) with a marker on each line."""
SCAN_TESTS = [{"stdin": "scan\n", "stdout": "own\n"}]
PLANT_THEN_SCAN = [{"stdin": PLANT_STDIN, "stdout": "planted\n"}, *SCAN_TESTS]


def _call_row(program: str, expected: object = 1) -> dict:
    return {
        "response": program,
        "reference": {"entry_point": "f", "cases": [{"args": [1], "expected": expected}]},
    }


def _stdio_row(program: str, tests: list[dict], language: str | None = None) -> dict:
    spec: dict = {"stdio": tests}
    if language is not None:
        spec["language"] = language
        program = f"```{language}\n{program}```\n"
    return {"response": program, "reference": spec}


def _one_sandbox(**options: object) -> tuple[Engine, CodeGrader]:
    """A grader whose rows all run in one sandbox, one after another (one worker)."""
    engine = Engine(workers=1)
    options = {"call_timeout_s": 20, "program_timeout_s": 120, **options}
    return engine, CodeGrader(CodeGrader.Options(**options), engine=engine)


# The same scan in every language a stdin/stdout program may be written in: the first line of
# standard input says whether to plant (say "planted") or to scan (print the names found).
# Markers are kept in hex (@NAME@ below), or reversed where the search is by the language's own
# code (node, the JVM), and never put together outside the buffers the search leaves out.
COMPILED = {
    "c": r"""#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <stdint.h>

/* planted in plain text; what is looked for is kept in hex and decoded at run time, so that
   only the decoded buffers (left out of the search) hold it whole */
static const char PLANTED[] = "TG-MEMSCAN-OWN-e41b";
static const char *NAMES[] = {"own", "row", "stdin"};
static const char *HEXED[] = {"@OWN@", "@ROW@", "@STDIN@"};
#define MARKS 3
#define PAGE 4096UL
#define LIMIT (768UL << 20)

extern char **environ;
static int probe[2];
static uintptr_t lo[64], hi[64];
static int regions;
static unsigned long total;

static int readable(uintptr_t page) {
    char c;
    if (write(probe[1], (const void *)page, 1) != 1) return 0;
    return read(probe[0], &c, 1) == 1;
}

static int covered(uintptr_t page) {
    for (int i = 0; i < regions; i++)
        if (lo[i] <= page && page < hi[i]) return 1;
    return 0;
}

/* the run of readable pages around an address (no /proc: write(2) from an unreadable page
   fails with EFAULT) */
static void region(const void *seed) {
    uintptr_t page = (uintptr_t)seed & ~(PAGE - 1);
    if (regions == 64 || covered(page) || !readable(page)) return;
    uintptr_t a = page, b = page + PAGE;
    while (a >= PAGE && total < LIMIT && !covered(a - PAGE) && readable(a - PAGE))
        a -= PAGE, total += PAGE;
    while (total < LIMIT && !covered(b) && readable(b)) b += PAGE, total += PAGE;
    lo[regions] = a, hi[regions] = b, regions++;
}

int main(int argc, char **argv) {
    char line[64] = "";
    if (!fgets(line, sizeof line, stdin)) return 1;
    if (strncmp(line, "plant", 5) == 0) {
        puts("planted");
        return 0;
    }
    if (pipe(probe)) return 2;
    unsigned char *pattern[MARKS];
    size_t length[MARKS];
    for (int m = 0; m < MARKS; m++) {
        length[m] = strlen(HEXED[m]) / 2;
        pattern[m] = (unsigned char *)malloc(length[m]);
        for (size_t i = 0; i < length[m]; i++) {
            unsigned v;
            sscanf(HEXED[m] + 2 * i, "%2x", &v);
            pattern[m][i] = (unsigned char)v;
        }
    }
    int local = argc;
    void *small = malloc(64), *large = malloc(1 << 20);
    const void *seeds[] = {&local, line, small, large, PLANTED, HEXED, environ, *environ,
                           argv[0], (void *)&printf, (void *)stdin, pattern[0]};
    for (size_t s = 0; s < sizeof seeds / sizeof *seeds; s++) region(seeds[s]);
    int found[MARKS] = {0};
    for (int r = 0; r < regions; r++)
        for (int m = 0; m < MARKS; m++) {
            const unsigned char *at = (const unsigned char *)lo[r];
            const unsigned char *end = (const unsigned char *)hi[r];
            while (at < end) {
                const unsigned char *hit =
                (const unsigned char *)memmem(at, end - at, pattern[m], length[m]);
                if (!hit) break;
                int mine = 0;
                for (int k = 0; k < MARKS; k++)
                    mine |= hit >= pattern[k] && hit < pattern[k] + length[k];
                found[m] |= !mine;
                at = hit + 1;
            }
        }
    const char *sep = "";
    for (int m = 0; m < MARKS; m++)
        if (found[m]) printf("%s%s", sep, NAMES[m]), sep = " ";
    printf("\n");
    free(small);
    free(large);
    return 0;
}
""",
    "rust": r"""use std::io::BufRead;

// planted in plain text; what is looked for is kept in hex and decoded at run time
static PLANTED: &str = "TG-MEMSCAN-OWN-e41b";
const MARKS: [(&str, &str); 3] = [("own", "@OWN@"), ("row", "@ROW@"), ("stdin", "@STDIN@")];
const PAGE: usize = 4096;
const LIMIT: usize = 768 << 20;

extern "C" {
    fn pipe(fds: *mut i32) -> i32;
    fn write(fd: i32, buf: *const u8, count: usize) -> isize;
    fn read(fd: i32, buf: *mut u8, count: usize) -> isize;
    fn memmem(hay: *const u8, len: usize, needle: *const u8, needle_len: usize) -> *const u8;
}

struct Memory {
    probe: [i32; 2],
    regions: Vec<(usize, usize)>,
    total: usize,
}

impl Memory {
    // no /proc: write(2) from an unreadable page fails with EFAULT
    fn readable(&self, page: usize) -> bool {
        let mut c = 0u8;
        unsafe {
            write(self.probe[1], page as *const u8, 1) == 1 && read(self.probe[0], &mut c, 1) == 1
        }
    }

    fn covered(&self, page: usize) -> bool {
        self.regions.iter().any(|&(a, b)| a <= page && page < b)
    }

    fn region(&mut self, seed: usize) {
        let page = seed & !(PAGE - 1);
        if self.covered(page) || !self.readable(page) {
            return;
        }
        let (mut a, mut b) = (page, page + PAGE);
        while a >= PAGE && self.total < LIMIT && !self.covered(a - PAGE) && self.readable(a - PAGE)
        {
            a -= PAGE;
            self.total += PAGE;
        }
        while self.total < LIMIT && !self.covered(b) && self.readable(b) {
            b += PAGE;
            self.total += PAGE;
        }
        self.regions.push((a, b));
    }
}

fn main() {
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).unwrap();
    if line.starts_with("plant") {
        println!("planted");
        return;
    }
    let patterns: Vec<Vec<u8>> = MARKS
        .iter()
        .map(|(_, hexed)| {
            let byte = |i: usize| u8::from_str_radix(&hexed[2 * i..2 * i + 2], 16).unwrap();
            (0..hexed.len() / 2).map(byte).collect()
        })
        .collect();
    let mut memory = Memory { probe: [0; 2], regions: Vec::new(), total: 0 };
    unsafe { assert_eq!(pipe(memory.probe.as_mut_ptr()), 0) };
    let local = 0u64;
    let boxed = Box::new([0u8; 64]);
    let large = vec![0u8; 1 << 20];
    let seeds = [
        &local as *const u64 as usize,
        boxed.as_ptr() as usize,
        large.as_ptr() as usize,
        line.as_ptr() as usize,
        PLANTED.as_ptr() as usize,
        patterns[0].as_ptr() as usize,
        main as *const () as usize,
    ];
    for seed in seeds {
        memory.region(seed);
    }
    let mut found = Vec::new();
    for (m, pattern) in patterns.iter().enumerate() {
        let mut seen = false;
        for &(a, b) in &memory.regions {
            let mut at = a;
            while at < b {
                let (needle, size) = (pattern.as_ptr(), pattern.len());
                let hit = unsafe { memmem(at as *const u8, b - at, needle, size) } as usize;
                if hit == 0 {
                    break;
                }
                let start = |p: &Vec<u8>| p.as_ptr() as usize;
                let inside = |p: &Vec<u8>| (start(p)..start(p) + p.len()).contains(&hit);
                let mine = patterns.iter().any(inside);
                seen |= !mine;
                at = hit + 1;
            }
        }
        if seen {
            found.push(MARKS[m].0);
        }
    }
    println!("{}", found.join(" "));
}
""",
    "go": """package main

import (
\t"bufio"
\t"bytes"
\t"encoding/hex"
\t"fmt"
\t"os"
\t"reflect"
\t"strings"
\t"syscall"
\t"unsafe"
)

// planted in plain text; what is looked for is kept in hex and decoded at run time
var planted = "TG-MEMSCAN-OWN-e41b"

var marks = [][2]string{{"own", "@OWN@"}, {"row", "@ROW@"}, {"stdin", "@STDIN@"}}

const page = 4096
const limit = 768 << 20

var probe [2]int
var regions [][2]uintptr
var total uintptr

// no /proc: write(2) from an unreadable page fails with EFAULT
func readable(at uintptr) bool {
\t_, _, errno := syscall.Syscall(syscall.SYS_WRITE, uintptr(probe[1]), at, 1)
\tif errno != 0 {
\t\treturn false
\t}
\tvar c [1]byte
\tsyscall.Read(probe[0], c[:])
\treturn true
}

func covered(at uintptr) bool {
\tfor _, r := range regions {
\t\tif r[0] <= at && at < r[1] {
\t\t\treturn true
\t\t}
\t}
\treturn false
}

func region(seed uintptr) {
\tat := seed &^ (page - 1)
\tif covered(at) || !readable(at) {
\t\treturn
\t}
\ta, b := at, at+page
\tfor a >= page && total < limit && !covered(a-page) && readable(a-page) {
\t\ta -= page
\t\ttotal += page
\t}
\tfor total < limit && !covered(b) && readable(b) {
\t\tb += page
\t\ttotal += page
\t}
\tregions = append(regions, [2]uintptr{a, b})
}

func main() {
\tline, _ := bufio.NewReader(os.Stdin).ReadString('\\n')
\tif strings.HasPrefix(line, "plant") {
\t\tfmt.Println("planted")
\t\treturn
\t}
\tpatterns := make([][]byte, len(marks))
\tfor i, m := range marks {
\t\tpatterns[i], _ = hex.DecodeString(m[1])
\t}
\tif err := syscall.Pipe(probe[:]); err != nil {
\t\tpanic(err)
\t}
\tlocal := 0
\tlarge := make([]byte, 1<<20)
\tseeds := []uintptr{
\t\tuintptr(unsafe.Pointer(&local)),
\t\tuintptr(unsafe.Pointer(&large[0])),
\t\t(*reflect.StringHeader)(unsafe.Pointer(&planted)).Data,
\t\tuintptr(unsafe.Pointer(&patterns[0][0])),
\t\t(*reflect.StringHeader)(unsafe.Pointer(&line)).Data,
\t}
\tfor _, seed := range seeds {
\t\tregion(seed)
\t}
\tvar found []string
\tfor i, pattern := range patterns {
\t\tseen := false
\t\tfor _, r := range regions {
\t\t\tmemory := unsafe.Slice((*byte)(unsafe.Pointer(r[0])), int(r[1]-r[0]))
\t\t\tfor at := 0; at < len(memory); {
\t\t\t\thit := bytes.Index(memory[at:], pattern)
\t\t\t\tif hit < 0 {
\t\t\t\t\tbreak
\t\t\t\t}
\t\t\t\taddress := r[0] + uintptr(at+hit)
\t\t\t\tmine := false
\t\t\t\tfor _, p := range patterns {
\t\t\t\t\tstart := uintptr(unsafe.Pointer(&p[0]))
\t\t\t\t\tmine = mine || (start <= address && address < start+uintptr(len(p)))
\t\t\t\t}
\t\t\t\tseen = seen || !mine
\t\t\t\tat += hit + 1
\t\t\t}
\t\t}
\t\tif seen {
\t\t\tfound = append(found, marks[i][0])
\t\t}
\t}
\tfmt.Println(strings.Join(found, " "))
}
""",
    "javascript": """const fs = require('fs');
const v8 = require('v8');

// planted in plain text; what is looked for is kept reversed, and never put back together
const PLANTED = 'TG-MEMSCAN-OWN-e41b';
const MARKS = [['own', '@OWN@'], ['row', '@ROW@'], ['stdin', '@STDIN@']];

// whether text holds the string whose reverse is reversed, without ever making that string
function holds(text, reversed) {
  const n = reversed.length;
  const first = reversed[n - 1];
  for (let i = text.indexOf(first); i >= 0 && i + n <= text.length;
       i = text.indexOf(first, i + 1)) {
    let j = 1;
    while (j < n && text[i + j] === reversed[n - 1 - j]) j++;
    if (j === n) return true;
  }
  return false;
}

const line = fs.readFileSync(0, 'utf8');
if (line.startsWith('plant')) {
  console.log('planted');
} else {
  // what node can see of its own memory: every string of its heap, in a snapshot of it
  const path = v8.writeHeapSnapshot('heap.heapsnapshot');
  const strings = JSON.parse(fs.readFileSync(path, 'utf8')).strings;
  const found = MARKS.filter(([, reversed]) => strings.some((s) => holds(s, reversed)));
  console.log(found.map(([name]) => name).join(' ') + (PLANTED ? '' : '!'));
}
""",
    "java": """import com.sun.management.HotSpotDiagnosticMXBean;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

public class Main {
    // planted in plain text; what is looked for is kept reversed, and never put back together
    static String planted = "TG-MEMSCAN-OWN-e41b";
    static final String[][] MARKS = {{"own", "@OWN@"}, {"row", "@ROW@"}, {"stdin", "@STDIN@"}};

    // whether data holds the bytes whose reverse is reversed
    static boolean holds(byte[] data, String reversed) {
        int n = reversed.length();
        for (int i = 0; i + n <= data.length; i++) {
            int j = 0;
            while (j < n && data[i + j] == (byte) reversed.charAt(n - 1 - j)) j++;
            if (j == n) return true;
        }
        return false;
    }

    public static void main(String[] args) throws Exception {
        String line = new BufferedReader(new InputStreamReader(System.in)).readLine();
        if (line != null && line.startsWith("plant")) {
            System.out.println("planted");
            return;
        }
        // what a JVM can see of its own memory: its heap, dumped
        HotSpotDiagnosticMXBean bean =
            ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
        bean.dumpHeap("heap.hprof", false);
        byte[] dump = Files.readAllBytes(Paths.get("heap.hprof"));
        List<String> found = new ArrayList<>();
        for (String[] mark : MARKS) if (holds(dump, mark[1])) found.add(mark[0]);
        System.out.println(String.join(" ", found) + (planted.isEmpty() ? "!" : ""));
    }
}
""",
}
COMPILED["cpp"] = COMPILED["c"]  # written to compile as both


def _compiled(language: str) -> str:
    source = COMPILED[language]
    table = REVERSED if language in ("javascript", "java") else HEXED
    for name in ("own", "row", "stdin"):
        source = source.replace(f"@{name.upper()}@", table[name])
    return source


def test_the_scanner_finds_its_own_marker_and_a_marker_its_own_test_was_given():
    """The scanners work: each finds the marker in its own source, and one given on its own
    standard input (which it read into its memory); that is all they find on their own."""
    engine, grader = _one_sandbox()
    with engine:
        call, stdio = grader.grade_batch(
            [
                _call_row(CALL_SCANNER, ["own"]),
                _stdio_row(
                    STDIO_SCANNER,
                    [{"stdin": "scan " + MARKERS["stdin"] + "\n", "stdout": "own stdin\n"}],
                ),
            ]
        )
    assert call.passed, call.explanation
    assert stdio.passed, stdio.explanation


def _reference_row(fresh_sandbox: bool) -> dict:
    reference = (
        f'"""Sorted distinct items ({MARKERS["reference"]}).\n\n'
        + "The dataset's own program computes what every answer is compared with.\n" * 12
        + '"""\n\n\ndef dedupe(items):\n    seen = set(items)\n    return sorted(seen)\n'
    )
    cases = [{"args": [[3, 1, 3, 2]]}, {"args": [[]]}, {"args": [[5, 5, 4]]}]
    return {
        "response": SCANNER + PLANT + BORROWER.format(entry="dedupe"),
        "reference": {"entry_point": "dedupe", "expected_from": reference, "cases": cases},
    }


def _borrower_rows() -> list[dict]:
    """The borrowing attack as the response to real rows: the first 12 quick MBPP+ rows and the
    first 4 quick HumanEval+ rows, through their presets."""
    quick = quick_tasks()
    rows = []
    for file, preset, count in (
        ("mbppplus.jsonl.gz", "mbpp", 12),
        ("humanevalplus_small.jsonl.gz", "humaneval", 4),
    ):
        chosen = [row for row in published(file) if row["task_id"] in quick][:count]
        for row in chosen:
            program = SCANNER + PLANT + BORROWER.format(entry=row["entry_point"])
            rows.append(apply_preset({**row, "response": program}, preset))
    return rows


@pytest.mark.slow
@pytest.mark.parametrize("fresh_sandbox", [False, True], ids=["one sandbox", "fresh sandbox"])
def test_the_reference_program_is_not_in_the_memory_of_the_response_it_grades(fresh_sandbox):
    """A response that answers with the reference's own function, found in its memory, gets no
    reward: every row fails with a wrong answer (None: nothing found to borrow), and not with
    an exception, which would mean the scan missed its own program's marker."""
    engine, grader = _one_sandbox(fresh_sandbox=fresh_sandbox, output_bytes=1 << 24)
    rows = [_reference_row(fresh_sandbox), *_borrower_rows()]
    with engine:
        grades = grader.grade_batch(rows)
    passed = [
        row.get("task_id", "hand-made") for row, g in zip(rows, grades, strict=True) if g.passed
    ]
    assert passed == [], f"{len(passed)} of {len(rows)} rows passed by borrowing: {passed}"
    for grade in grades:
        assert grade.error is None, grade.error
        assert grade.flags[0] == "wrong_answer", grade.explanation


@pytest.mark.parametrize("scanner", ["function", "stdio"])
def test_an_earlier_rows_program_is_not_in_a_later_rows_memory(scanner):
    """Row 1 plants a marker in its (long) program, row 2 is honest, row 3 scans: it finds its
    own marker and nothing else."""
    later = (
        _call_row(CALL_SCANNER, ["own"])
        if scanner == "function"
        else _stdio_row(STDIO_SCANNER, SCAN_TESTS)
    )
    engine, grader = _one_sandbox()
    with engine:
        planter, honest, scan = grader.grade_batch([_call_row(PLANTER), _call_row(HONEST), later])
    assert planter.passed and honest.passed, (planter.explanation, honest.explanation)
    assert scan.passed, scan.explanation


def test_an_earlier_tests_standard_input_is_not_in_a_later_tests_memory():
    """A test's standard input holds a marker; the next test of the same program, and the next
    row, scan for it and find their own marker only."""
    engine, grader = _one_sandbox()
    with engine:
        same, later = grader.grade_batch(
            [_stdio_row(STDIO_SCANNER, PLANT_THEN_SCAN), _stdio_row(STDIO_SCANNER, SCAN_TESTS)]
        )
    assert (same.passed, later.passed) == (True, True), (same.explanation, later.explanation)


@pytest.mark.slow
@pytest.mark.parametrize(
    "language", each_language("python", "c", "cpp", "rust", "go", "javascript", "java")
)
def test_a_program_of_any_language_finds_nothing_of_earlier_rows_or_tests(language):
    """A long program with a marker is graded first; then, in the same sandbox, a program of
    ``language`` is given a marker on its first test's standard input and scans its own memory
    on the second: it finds its own marker only."""
    source = STDIO_SCANNER if language == "python" else _compiled(language)
    engine, grader = _one_sandbox(compile_timeout_s=120)
    with engine:
        planter, scan = grader.grade_batch(
            [_call_row(PLANTER), _stdio_row(source, PLANT_THEN_SCAN, language)]
        )
    assert planter.passed, planter.explanation
    assert scan.error is None, scan.error
    assert scan.passed, scan.explanation
