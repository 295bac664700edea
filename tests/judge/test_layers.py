"""The client is a mechanism: it imports no grader and no SDK until it sends a request."""

from __future__ import annotations

import ast
import subprocess
import sys


def loaded_after(statement: str) -> list[str]:
    code = f"import sys; {statement}; print(sorted(sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return ast.literal_eval(out.stdout)


def test_the_client_imports_no_grader_and_not_the_sdk():
    modules = loaded_after("import truegrade.judge")
    assert not [m for m in modules if m.startswith(("truegrade.graders", "truegrade.cli"))]
    assert "openai" not in modules


def test_the_lc_numerics_import_no_judge_or_grader():
    modules = loaded_after("import truegrade.lc")
    assert not [
        m for m in modules if m.startswith(("truegrade.graders", "truegrade.judge", "openai"))
    ]
