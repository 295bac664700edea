"""Rendering a card: one self-contained HTML file, its Markdown twin, and the JSON behind both.

The HTML needs no network and runs no script: styles are inline, charts are inline SVG. Text from
the data (responses, ids, reasons) is escaped by the template engine, because on a card about
reward hacking the examples are hostile by design.
"""

from __future__ import annotations

import json
import math
from importlib.resources import files
from pathlib import Path
from typing import Any

from jinja2 import Environment, StrictUndefined, select_autoescape
from markupsafe import Markup

from truegrade._version import __version__
from truegrade.card._build import Card
from truegrade.card._svg import bar_chart, line_chart
from truegrade.validate import Metric, PairwiseReport

__all__ = ["render_html", "render_markdown", "write_card"]


def _pct(value: float | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:.1%}" if 0 < value < 0.1 else f"{value:.0%}"


def _metric(m: Metric | None) -> str:
    if m is None or m.estimate is None:
        return "n/a"
    return f"{_pct(m.estimate)} [{_pct(m.ci_low)}, {_pct(m.ci_high)}]"


def _num(m: Metric | None) -> str:
    if m is None or m.estimate is None:
        return "n/a"
    return f"{m.estimate:.3f} [{m.ci_low or 0:.3f}, {m.ci_high or 0:.3f}]"


def pairwise_lines(report: PairwiseReport) -> list[str]:
    """The card's account of agreement with preference labels: one line per figure, the rules
    last (a reader reproducing a paper's number needs them)."""
    a = report.agreement
    lines = [
        f"pairwise accuracy {_metric(report.accuracy)} on {report.pairs} preference pairs "
        f"({report.grader_errors} could not be graded; {report.ties} scored equal, no credit "
        "by default)",
    ]
    if a is not None:
        rate = _pct(a.unreadable_rate) if a.unreadable_rate is not None else "n/a"
        lines += [
            f"agreement with ties {_metric(a.agreement_with_ties)}, without ties "
            f"{_metric(a.agreement_without_ties)}; macro-F1 {_num(a.macro_f1)}; Cohen's kappa "
            f"{_num(a.kappa)}",
            f"tie verdicts {a.verdict_ties}; unreadable {a.unreadable} ({rate})",
        ]
    rules = report.rules
    lines.append(
        f"rules: combine={rules.combine} label-ties={rules.label_ties} "
        f"verdict-ties={rules.verdict_ties} equal-scores={rules.equal_scores} "
        f"unreadable={rules.unreadable}"
    )
    return lines


def _spec_text(spec: Any) -> str:
    return spec if isinstance(spec, str) else json.dumps(spec, sort_keys=True)


def _svg(markup: str) -> Markup:
    # the chart builders escape every label that comes from data; the rest is our own markup
    return Markup(markup)  # noqa: S704


def _charts(card: Card) -> dict[str, Any]:
    attacks = sorted(
        (r for r in card.exploitability.attacks if r.items_tried),
        key=lambda r: (-(r.exploit_rate or 0), r.name),
    )
    attack_chart = bar_chart(
        [(r.name, r.exploit_rate or 0.0, r.ci_low, r.ci_high) for r in attacks]
    )
    audit_chart = ""
    if card.soundness is not None and card.soundness.by_flag:
        total = max(1, card.soundness.items_total)
        audit_chart = bar_chart(
            [
                (flag, count / total, None, None)
                for flag, count in sorted(card.soundness.by_flag.items(), key=lambda kv: -kv[1])
            ]
        )
    overopt_chart = ""
    doc = card.overoptimization
    if doc:

        def series(column: str) -> list[tuple[float, float, float | None, float | None]]:
            return [
                (p["kl"], p[column]["estimate"], p[column]["ci_low"], p[column]["ci_high"])
                for p in doc["points"]
                if p[column]["estimate"] is not None
            ]

        overopt_chart = line_chart(
            {"proxy": series("proxy"), "gold": series("gold")},
            x_label="KL (upper bound, nats)",
            y_label="mean score",
            marker=doc["peak"]["kl"],
        )
    return {
        "attacks": attacks,
        "attack_chart": _svg(attack_chart),
        "audit_chart": _svg(audit_chart),
        "overopt_chart": _svg(overopt_chart),
    }


def render_html(card: Card) -> str:
    """The card as one self-contained HTML page."""
    env = Environment(
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    template = env.from_string(
        files("truegrade.card").joinpath("card.html.j2").read_text(encoding="utf-8")
    )
    return template.render(
        card=card,
        v=card.verdict,
        a=card.exploitability,
        val=card.validity,
        pairwise=pairwise_lines(card.pairwise) if card.pairwise is not None else None,
        audit=card.soundness,
        overopt=card.overoptimization,
        version=__version__,
        grader_spec=_spec_text(card.grader),
        pct=_pct,
        metric=_metric,
        num=_num,
        search_found=sum(1 for s in card.exploitability.search if s.exploited),
        **_charts(card),
    )


def _md_escape(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def render_markdown(card: Card) -> str:
    """The card as Markdown: the same verdict, numbers and tables, for a README or a review."""
    v = card.verdict
    lines = [
        f"# Grader card: {card.title}",
        "",
        f"grader `{_spec_text(card.grader)}` · data {card.data or '(given in Python)'} · "
        f"{card.rows} rows · {card.created} · truegrade {__version__}",
        "",
        f"## Verdict: {v.status.upper()}. {v.headline}",
        "",
        f"- **Validity**: {v.validity.summary}",
        f"- **Exploitability**: {v.exploitability.summary}",
        f"- **Soundness**: {v.soundness.summary}",
        "",
        "## What to fix first",
        "",
    ]
    lines += [f"{i}. {fix}" for i, fix in enumerate(v.fix_first, 1)] or [
        "Nothing found to fix within what was tested."
    ]
    a = card.exploitability
    lines += [
        "",
        "## Exploitability",
        "",
        f"{a.items} items attacked as {a.kind}; controls rewarded: "
        f"{a.controls.passed} of {a.controls.tried}.",
        "",
        "| attack | tried | rewarded | items exploited | shortest rewarded response |",
        "|---|---|---|---|---|",
    ]
    for r in sorted(a.attacks, key=lambda r: -(r.exploit_rate or 0)):
        if not r.tried:
            continue
        example = _md_escape(r.example.response[:120]) if r.example else ""
        lines.append(
            f"| {r.name} | {r.tried} | {r.exploited} | {_pct(r.exploit_rate)} "
            f"[{_pct(r.ci_low)}, {_pct(r.ci_high)}] | {example} |"
        )
    if a.search:
        found = [s for s in a.search if s.exploited]
        lines += [
            "",
            f"### Adaptive search ({a.search_budget} queries per item)",
            "",
            f"{len(found)} of {len(a.search)} items exploited.",
        ]
        if a.attacker is not None:
            lines.append(
                f"Attacker LLM `{a.attacker.model}`: {a.attacker.requests} requests, "
                f"{a.attacker.candidates} candidates graded, {a.attacker.exploits} rewarded"
                + (f"; stopped: {a.attacker.stopped}." if a.attacker.stopped else ".")
            )
        if found:
            lines += [
                "",
                "| item | best score | written by | queries | best rewarded response |",
                "|---|---|---|---|---|",
            ]
            lines += [
                f"| {_md_escape(s.item)} | {s.best_score:.3g} | {s.source} | {s.queries} | "
                f"{_md_escape(s.best_response[:120])} |"
                for s in found
            ]
    lines += ["", "## Validity", ""]
    if card.validity is not None:
        o = card.validity.overall
        c = o.confusion
        lines += [
            f"false pass rate {_metric(o.false_pass_rate)}, false fail rate "
            f"{_metric(o.false_fail_rate)}, accuracy {_metric(o.accuracy)}, kappa "
            f"{_num(o.kappa)}",
            "",
            "| | label: pass | label: fail |",
            "|---|---|---|",
            f"| grader: pass | {c.true_pass} | {c.false_pass} |",
            f"| grader: fail | {c.false_fail} | {c.true_fail} |",
        ]
        if c.abstained:
            lines += ["", f"{c.abstained} items where the grader took no side count as misses."]
    elif card.pairwise is not None:
        lines += [f"- {line}" for line in pairwise_lines(card.pairwise)]
    else:
        lines.append("Not measured: no row has both a response and a label.")
    lines += ["", "## Soundness of the items", ""]
    if card.soundness is not None:
        lines.append(card.soundness.markdown())
    else:
        lines.append("Not audited.")
    if card.overoptimization:
        peak = card.overoptimization["peak"]
        lines += [
            "",
            "## Overoptimization",
            "",
            f"gold peaks at n = {peak['n']} (KL <= {peak['kl']:.2f}); overoptimized past "
            f"it: {peak['overoptimized']}",
        ]
    return "\n".join(lines) + "\n"


def write_card(card: Card, html_path: str | Path) -> dict[str, Path]:
    """Write ``card.html``, ``card.md`` and ``card.json`` side by side; returns their paths."""
    html = Path(html_path)
    html.parent.mkdir(parents=True, exist_ok=True)
    paths = {"html": html, "markdown": html.with_suffix(".md"), "json": html.with_suffix(".json")}
    paths["html"].write_text(render_html(card), encoding="utf-8")
    paths["markdown"].write_text(render_markdown(card), encoding="utf-8")
    paths["json"].write_text(json.dumps(card.model_dump(), indent=2) + "\n", encoding="utf-8")
    return paths
