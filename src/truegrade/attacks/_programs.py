"""Lookup-table programs in every stdin/stdout language: the one shape stdout attacks need.

A stdout-gaming program does not compute: it reads all of stdin, trims ASCII whitespace from
both ends, prints the output its table holds for that input, and otherwise prints a fixed text
(or stdin itself, for the echo). Written once per language, with every byte of every string
escaped (octal in C, C++ and Java, ``\\xNN`` in JavaScript, Go and Rust), so any table compiles.
The same programs are the audit's probes (a silent program, one printing junk, an echo).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

__all__ = ["STDIO_LANGUAGES", "fenced", "table_program"]

_WS = b" \t\n\r\x0b\x0c"  # what Python's bytes.strip() removes; every template trims the same


def _octal(data: bytes) -> str:
    # every byte outside printable ASCII, and the quote, backslash and '?' (trigraphs), as \ooo
    return "".join(chr(b) if 32 <= b < 127 and chr(b) not in '"\\?' else f"\\{b:03o}" for b in data)


def _hex(data: bytes) -> str:
    return "".join(chr(b) if 32 <= b < 127 and chr(b) not in '"\\' else f"\\x{b:02x}" for b in data)


def _python(table: Sequence[tuple[bytes, bytes]], default: bytes, echo: bool) -> str:
    entries = ",\n".join(f"    {k!r}: {v!r}" for k, v in table)
    fallback = "data" if echo else repr(default)
    return (
        "import sys\n\n"
        f"TABLE = {{\n{entries}\n}}\n"
        "data = sys.stdin.buffer.read()\n"
        f"sys.stdout.buffer.write(TABLE.get(data.strip(), {fallback}))\n"
    )


def _c(table: Sequence[tuple[bytes, bytes]], default: bytes, echo: bool) -> str:
    rows = list(table) or [(b"", b"")]  # C has no empty array; the count stays 0
    keys = ", ".join(f'"{_octal(k)}"' for k, _ in rows)
    key_lengths = ", ".join(str(len(k)) for k, _ in rows)
    values = ", ".join(f'"{_octal(v)}"' for _, v in rows)
    value_lengths = ", ".join(str(len(v)) for _, v in rows)
    fallback = (
        "fwrite(buf, 1, n, stdout);"
        if echo
        else (f'fwrite("{_octal(default)}", 1, {len(default)}, stdout);')
    )
    return f"""#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int ws(unsigned char c) {{ return c == ' ' || (c >= 9 && c <= 13); }}

int main(void) {{
    static const char *K[] = {{{keys}}};
    static const size_t KL[] = {{{key_lengths}}};
    static const char *V[] = {{{values}}};
    static const size_t VL[] = {{{value_lengths}}};
    size_t cap = 1 << 16, n = 0, got;
    char *buf = (char *)malloc(cap);
    while ((got = fread(buf + n, 1, cap - n, stdin)) > 0) {{
        n += got;
        if (n == cap) {{ cap *= 2; buf = (char *)realloc(buf, cap); }}
    }}
    size_t a = 0, b = n;
    while (a < b && ws((unsigned char)buf[a])) a++;
    while (b > a && ws((unsigned char)buf[b - 1])) b--;
    for (size_t i = 0; i < {len(table)}; i++) {{
        if (KL[i] == b - a && memcmp(K[i], buf + a, b - a) == 0) {{
            fwrite(V[i], 1, VL[i], stdout);
            return 0;
        }}
    }}
    {fallback}
    return 0;
}}
"""


def _java(table: Sequence[tuple[bytes, bytes]], default: bytes, echo: bool) -> str:
    entries = ", ".join(f'{{"{_octal(k)}", "{_octal(v)}"}}' for k, v in table)
    fallback = "data" if echo else f'b("{_octal(default)}")'
    return f"""import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

public class Main {{
    static byte[] b(String s) {{ return s.getBytes(StandardCharsets.ISO_8859_1); }}

    static boolean ws(byte c) {{ return c == 32 || (c >= 9 && c <= 13); }}

    public static void main(String[] args) throws IOException {{
        String[][] table = {{{entries}}};
        byte[] data = System.in.readAllBytes();
        int a = 0, e = data.length;
        while (a < e && ws(data[a])) a++;
        while (e > a && ws(data[e - 1])) e--;
        byte[] key = Arrays.copyOfRange(data, a, e);
        byte[] out = {fallback};
        for (String[] kv : table) {{
            if (Arrays.equals(b(kv[0]), key)) {{ out = b(kv[1]); break; }}
        }}
        System.out.write(out);
        System.out.flush();
    }}
}}
"""


def _javascript(table: Sequence[tuple[bytes, bytes]], default: bytes, echo: bool) -> str:
    entries = ", ".join(f'["{_hex(k)}", "{_hex(v)}"]' for k, v in table)
    fallback = "data" if echo else f'L("{_hex(default)}")'
    return f"""const fs = require("fs");
const L = (s) => Buffer.from(s, "latin1");
const ws = (c) => c === 32 || (c >= 9 && c <= 13);
const table = [{entries}];
const data = fs.readFileSync(0);
let a = 0, e = data.length;
while (a < e && ws(data[a])) a++;
while (e > a && ws(data[e - 1])) e--;
const key = data.subarray(a, e);
let out = {fallback};
for (const [k, v] of table) {{
  if (L(k).equals(key)) {{ out = L(v); break; }}
}}
process.stdout.write(out);
"""


def _go(table: Sequence[tuple[bytes, bytes]], default: bytes, echo: bool) -> str:
    entries = ", ".join(f'{{"{_hex(k)}", "{_hex(v)}"}}' for k, v in table)
    fallback = "data" if echo else f'[]byte("{_hex(default)}")'
    return f"""package main

import (
\t"bytes"
\t"io"
\t"os"
)

func main() {{
\ttable := [][2]string{{{entries}}}
\tdata, _ := io.ReadAll(os.Stdin)
\tkey := string(bytes.Trim(data, " \\t\\n\\r\\v\\f"))
\tout := {fallback}
\tfor _, kv := range table {{
\t\tif kv[0] == key {{
\t\t\tout = []byte(kv[1])
\t\t\tbreak
\t\t}}
\t}}
\tos.Stdout.Write(out)
}}
"""


def _rust(table: Sequence[tuple[bytes, bytes]], default: bytes, echo: bool) -> str:
    entries = ", ".join(f'(&b"{_hex(k)}"[..], &b"{_hex(v)}"[..])' for k, v in table)
    fallback = "&data[..]" if echo else f'&b"{_hex(default)}"[..]'
    return f"""use std::io::{{Read, Write}};

fn main() {{
    let table: Vec<(&[u8], &[u8])> = vec![{entries}];
    let mut data = Vec::new();
    std::io::stdin().read_to_end(&mut data).unwrap();
    let ws = |c: &u8| *c == b' ' || (9..=13).contains(c);
    let a = data.iter().position(|c| !ws(c)).unwrap_or(data.len());
    let e = data.iter().rposition(|c| !ws(c)).map(|i| i + 1).unwrap_or(a);
    let key = &data[a..e];
    let mut out: &[u8] = {fallback};
    for (k, v) in table.iter() {{
        if *k == key {{
            out = v;
            break;
        }}
    }}
    std::io::stdout().write_all(out).unwrap();
}}
"""


_Writer = Callable[[Sequence[tuple[bytes, bytes]], bytes, bool], str]

_WRITERS: dict[str, _Writer] = {
    "python": _python,
    "c": _c,
    "cpp": _c,  # the C program is valid C++ (its casts are explicit)
    "java": _java,
    "javascript": _javascript,
    "go": _go,
    "rust": _rust,
    "pypy": _python,  # the same Python program, run by PyPy
}

STDIO_LANGUAGES = tuple(_WRITERS)
"""The languages ``table_program`` writes (the canonical names of the ``code`` grader's)."""


def table_program(
    language: str,
    table: Sequence[tuple[str, str]] = (),
    *,
    default: str = "",
    echo: bool = False,
) -> str:
    """A program in ``language`` that prints ``table``'s output for its input (both trimmed
    of whitespace at the ends to match), else ``default``, or its own input when ``echo``.

    Raises:
        KeyError: not a language of ``STDIO_LANGUAGES``.
    """
    if language not in _WRITERS:
        raise KeyError(f"no stdio program writer for {language!r}; known: {STDIO_LANGUAGES}")
    rows: dict[bytes, bytes] = {}
    for key, value in table:  # the first output of an input wins, in every language alike
        rows.setdefault(key.encode().strip(_WS), value.encode())
    return _WRITERS[language](list(rows.items()), default.encode(), echo)


def fenced(language: str, source: str) -> str:
    """The program as a response: one fenced block tagged with its language."""
    return f"```{language}\n{source.rstrip()}\n```"
