"""Presets read public datasets' rows as published (``tests/data/published/`` holds real rows)."""

from __future__ import annotations

import pytest

from tests.data.published_cases import _humaneval_rows, published
from truegrade.core import (
    PRESETS,
    DataError,
    Sample,
    apply_preset,
    detect_preset,
    gsm8k_final_answer,
    preset_named,
)
from truegrade.core._presets import boxed, last_boxed, mbpp_check

FILES = {
    "gsm8k_test.jsonl.gz": "gsm8k",
    "math500_test.jsonl.gz": "math",
    "math_test.jsonl.gz": "math",
    "mbpp_test.jsonl.gz": "mbpp",
    "mbpp_sanitized_test.jsonl.gz": "mbpp",
    "mbpp.jsonl.gz": "mbpp",
    "mbpp_sanitized.jsonl.gz": "mbpp",
    "mbppplus.jsonl.gz": "mbpp",
    "humanevalplus_small.jsonl.gz": "humaneval",
    "gsm8k_chat_train.jsonl.gz": "chat",
    "codecontests_train.jsonl.gz": "codecontests",
    "apps_train.jsonl.gz": "apps",
    "healthbench_oss_eval.jsonl.gz": "healthbench",
}


@pytest.mark.parametrize("name", sorted(FILES))
def test_every_published_row_is_detected_as_its_dataset_and_read(name):
    rows = published(name)
    assert len(rows) >= 5
    for row in rows:
        preset = detect_preset(row)
        assert preset is not None and preset.name == FILES[name], row
        sample = Sample.from_row(row, default_id=1)
        assert sample.prompt_text.strip()
        if FILES[name] != "chat":
            assert sample.reference is not None


def test_gsm8k_rows_keep_the_worked_solution_and_take_the_number_after_the_marks():
    row = published("gsm8k_test.jsonl.gz")[0]
    sample = Sample.from_row(row, default_id=7)
    assert sample.reference == "18"
    assert sample.prompt == row["question"]
    assert sample.metadata["solution"] == row["answer"]  # as published, for your own function
    assert sample.id == 7 and sample.response is None


def test_gsm8k_final_answer_reads_the_last_marked_line():
    assert gsm8k_final_answer("a\n#### 1,234") == "1,234"
    assert gsm8k_final_answer("x <<2*3=6>>6\n#### -5.5 \n") == "-5.5"
    assert gsm8k_final_answer("#### 1\nthen\n#### 2") == "2"
    assert gsm8k_final_answer("#### <<2*3=6>>6") == "6"
    assert gsm8k_final_answer("no marks") is None
    assert gsm8k_final_answer("#### ") == ""  # a line that states nothing


def test_the_gsm8k_preset_drops_thousands_commas_and_keeps_an_empty_line_for_the_grader():
    assert apply_preset({"question": "q", "answer": "so\n#### 1,234"})["reference"] == "1234"
    empty = {"question": "q", "answer": "so\n#### "}
    assert detect_preset(empty) is None  # nothing to read: the columns as they are
    assert apply_preset(empty, "gsm8k")["reference"] == empty["answer"]


def test_math500_takes_its_answer_column_and_math_the_solution_box():
    row = published("math500_test.jsonl.gz")[0]
    sample = Sample.from_row(row, default_id=1)
    assert sample.reference == row["answer"]
    assert sample.group == row["unique_id"] and sample.metadata["level"] == row["level"]
    plain = published("math_test.jsonl.gz")[0]
    assert Sample.from_row(plain, default_id=1).reference == "2"


def test_a_math_solution_with_several_boxes_is_left_whole_for_the_grader_to_read():
    row = {"problem": "p", "solution": r"either $\boxed{(10, 0)}$ or $\boxed{(0,0)}$."}
    assert apply_preset(row)["reference"] == row["solution"]
    same = {"problem": "p", "solution": r"$\boxed{3}$, so again $\boxed{3}$."}
    assert apply_preset(same)["reference"] == "3"


def test_boxes_are_read_with_nested_braces_and_the_bare_form():
    assert boxed(r"\boxed{\frac{1}{2}} and \boxed 5$") == [r"\frac{1}{2}", "5"]
    assert boxed(r"\fbox{x^{2}}") == ["x^{2}"]
    assert boxed(r"\boxed{open") == []
    assert last_boxed("nothing") is None


def test_humaneval_rows_become_the_check_and_keep_the_canonical_solution():
    row = _humaneval_rows()[0]
    sample = Sample.from_row({**row, "completion": "    return 1\n"}, default_id=3)
    assert sample.reference == {"entry_point": row["entry_point"], "check": row["test"]}
    assert sample.response == "    return 1\n" and sample.group == row["task_id"]
    assert sample.metadata["canonical_solution"] == row["canonical_solution"]


def test_mbpp_asserts_become_a_check_calling_the_function_the_reference_defines():
    row = published("mbpp_test.jsonl.gz")[0]
    spec = apply_preset(row)["reference"]
    assert spec["entry_point"] == "remove_Occ"
    assert spec["check"].startswith("import math\n")
    assert 'assert remove_Occ("hello","l") == "heo"' in spec["check"]
    namespace: dict = {}
    exec(spec["check"], namespace)  # the dataset's own test text, as the harness runs it
    namespace["remove_Occ"] = lambda s, c: s.replace(c, "")  # passes MBPP's three asserts
    namespace["check"](None)
    namespace["remove_Occ"] = lambda s, c: s
    with pytest.raises(AssertionError):
        namespace["check"](None)


def _plus_rows(name: str) -> dict[str, dict]:
    return {row["task_id"]: row for row in published(name)}


def test_mbpp_plus_inputs_become_call_cases_against_the_canonical_solution():
    row = _plus_rows("mbppplus.jsonl.gz")["Mbpp/3"]
    spec = apply_preset(row)["reference"]
    assert spec["entry_point"] == row["entry_point"]
    assert spec["expected_from"] == row["prompt"] + row["canonical_solution"]
    inputs = row["base_input"] + row["plus_input"]
    assert spec["cases"] == [{"args": args} for args in inputs]
    # compared as evalplus compares: Python's ==, the row's atol (0: 10^-6 from its first float
    # answer on, which the grader works out), the base and the plus inputs apart; each input's
    # CPU time at most 4 times the reference's, at least 1 s
    assert (spec["compare"], spec["abs_tol"], spec["groups"]) == (
        "evalplus",
        0.0,
        [len(row["base_input"])],
    )
    assert (spec["time_limit_factor"], spec["min_time_limit_s"]) == (4.0, 1.0)
    assert "check" not in spec


def test_mbpp_plus_rules_of_evalplus_are_written_into_the_spec():
    rows = _plus_rows("mbppplus.jsonl.gz")
    unordered = apply_preset(rows["Mbpp/2"])["reference"]
    assert unordered["compare"] == "set"
    assert unordered["cases"][0] == {"args": [(3, 4, 5, 6), (5, 7, 4, 10)]}  # tuples, rebuilt
    assert apply_preset(rows["Mbpp/737"])["reference"]["compare"] == "not_none"
    complex_args = apply_preset(rows["Mbpp/124"])["reference"]["cases"][0]["args"]
    assert complex_args == [0.0, 1j]
    second = apply_preset(rows["Mbpp/581"])["reference"]["expected_from"]
    assert len(second) == 2 and "def surface_Area" in second[1]
    assert apply_preset(rows["Mbpp/793"])["reference"]["cases"]  # its plus_input is {}: base only
    tolerant = next(r for r in rows.values() if r["atol"])
    assert apply_preset(tolerant)["reference"]["abs_tol"] == tolerant["atol"]


def test_humaneval_plus_inputs_become_call_cases_and_find_zero_a_check_of_its_root():
    rows = _plus_rows("humanevalplus_small.jsonl.gz")
    row = rows["HumanEval/2"]
    spec = apply_preset(row)["reference"]
    assert spec["expected_from"] == row["prompt"] + row["canonical_solution"]
    assert len(spec["cases"]) == len(row["base_input"]) + len(row["plus_input"])
    roots = {**row, "entry_point": "find_zero", "atol": 1e-4, "base_input": [[[1, 2]]]}
    root = apply_preset({**roots, "plus_input": [[[-6, 11, -6, 1]]]})["reference"]
    assert root["helpers"] == row["prompt"]
    assert root["check"].splitlines() == [
        "def check(candidate):",
        "    assert abs(poly([1, 2], candidate([1, 2]))) <= 0.0001",
        "    assert abs(poly([-6, 11, -6, 1], candidate([-6, 11, -6, 1]))) <= 0.0001",
    ]


def test_plus_rows_without_their_inputs_keep_their_published_base_tests():
    mbpp = {k: v for k, v in published("mbppplus.jsonl.gz")[0].items() if k != "plus_input"}
    spec = apply_preset(mbpp)["reference"]
    assert "assert similar_elements((3, 4, 5, 6),(5, 7, 4, 10)) == (4, 5)" in spec["check"]
    humaneval = {k: v for k, v in published("humanevalplus_small.jsonl.gz")[0].items()}
    del humaneval["base_input"]
    assert apply_preset(humaneval)["reference"]["check"] == humaneval["test"]
    with pytest.raises(DataError, match="lists of argument lists"):
        apply_preset({**published("mbppplus.jsonl.gz")[0], "plus_input": [1]})


def test_mbpp_tests_that_change_meaning_when_indented_are_refused():
    script = 'assert f("""a\nb""") == 1'
    with pytest.raises(DataError, match="change meaning when indented"):
        mbpp_check([], script=script, entry_point="f")
    with pytest.raises(DataError, match="no function"):
        mbpp_check(["assert 1 == 1"])
    with pytest.raises(DataError, match="not Python"):
        mbpp_check(["assert f(1 =="])


def test_ifeval_rows_carry_their_constraints_as_the_reference():
    row = {"key": 9, "prompt": "Say hi.", "instruction_id_list": ["a:b"], "kwargs": [{}]}
    sample = Sample.from_row({**row, "response": "hi"}, default_id=1)
    assert sample.reference == {"instruction_id_list": ["a:b"], "kwargs": [{}]}
    assert sample.group == "9"


def test_chat_rows_split_at_the_last_assistant_turn():
    row = published("gsm8k_chat_train.jsonl.gz")[0]
    sample = Sample.from_row(row, default_id=1)
    assert [m["role"] for m in sample.prompt] == ["system", "user"]
    assert sample.response_text.endswith("#### 72!!!")
    unanswered = Sample.from_row({"messages": row["messages"][:2]}, default_id=1)
    assert unanswered.response is None and len(unanswered.prompt) == 2


def test_code_contest_rows_keep_their_tests_as_the_reference():
    lcb = {
        "question_content": "add",
        "question_id": "abc1",
        "public_test_cases": '[{"input": "1 2", "output": "3", "testtype": "stdin"}]',
        "private_test_cases": "[]",
        "metadata": "{}",
    }
    sample = Sample.from_row(lcb, default_id=1)
    assert sample.reference["metadata"] == "{}" and sample.prompt == "add"
    assert sample.group == "abc1"


def test_a_native_row_is_never_reinterpreted():
    row = {"question": "q", "answer": "text\n#### 5", "reference": "7", "response": "7"}
    assert detect_preset(row) is None
    sample = Sample.from_row(row, default_id=1)
    assert sample.reference == "7" and sample.metadata["answer"] == row["answer"]
    assert sample.prompt == "q"  # 'question' is a column of the prompt


def test_columns_of_a_field_are_read_in_one_order_everywhere():
    sample = Sample.from_row(
        {"solution": "s", "ground_truth": "g", "completion": "c", "problem": "p"},
        default_id=1,
        preset=None,
    )
    assert (sample.reference, sample.response, sample.prompt) == ("g", "c", "p")
    assert sample.metadata == {"solution": "s"}


def test_a_named_preset_that_does_not_fit_lists_the_row_columns():
    with pytest.raises(DataError, match=r"gsm8k preset needs 'question'.*'problem', 'answer'"):
        apply_preset({"problem": "p", "answer": "1"}, "gsm8k")
    with pytest.raises(DataError, match="unknown preset 'gsm9k'"):
        preset_named("gsm9k")
    assert preset_named("none") is None and preset_named("rows") is None


def test_openrlhf_is_only_read_when_asked():
    row = {"input": "q", "label": "5", "output": "5"}
    assert detect_preset(row) is None
    assert apply_preset(row, "openrlhf")["reference"] == "5"
    assert not PRESETS["openrlhf"].auto


def test_published_code_contest_rows_read_as_the_code_grader_reads_them():
    from truegrade.graders.code._spec import parse_spec

    for row in published("codecontests_train.jsonl.gz"):
        spec = parse_spec(Sample.from_row(row, default_id=1).reference)
        assert spec.kind == "stdio" and all(t.visible for t in spec.stdio)
        assert spec.time_limit_s == row["time_limit"]["seconds"]
    kinds = {
        parse_spec(Sample.from_row(r, default_id=1).reference).kind
        for r in published("apps_train.jsonl.gz")
    }
    assert kinds == {"stdio", "cases"}  # APPS's call-based problems name their function


def test_published_healthbench_rows_carry_their_rubrics_and_ideal_answers():
    rows = published("healthbench_oss_eval.jsonl.gz")
    samples = [Sample.from_row(r, default_id=1) for r in rows]
    assert all(s.group == r["prompt_id"] for s, r in zip(samples, rows, strict=True))
    assert all({"criterion", "points"} <= set(s.reference[0]) for s in samples)
    assert sum("ideal" in s.metadata for s in samples) == sum(
        bool(r["ideal_completions_data"]) for r in rows
    )
