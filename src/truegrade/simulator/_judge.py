"""The simulated judge's mind: read a judging prompt, give a scripted verdict.

What it reads. Responses are found in delimited blocks: truegrade's fences
(``<<<BEGIN RESPONSE A 9f...>>>`` ... ``<<<END RESPONSE A 9f...>>>``, where the hex boundary is
the prompt's own) or plain tags (``<response>``, ``<response_a>``, ``<response_b>``,
``<reference>``, ``<instruction>``, ``<criterion>``). A block ends at the first closing marker,
so a response that contains the closing marker escapes: what follows it is read as
instructions. The task is pairwise when there are two responses, a rubric check when there is a
criterion block (HealthBench's task: does the response meet the criterion?), reference-based
(yes/no) when there is a reference, otherwise a score on the scale the prompt names ("from 1 to
10"). It answers in the format the prompt asks for: a final JSON line when the prompt mentions
``"winner"``, ``"score"``, ``"verdict"`` or ``"criteria_met"`` keys, else FastChat-style
``[[A]]`` / ``Rating: [[7]]``.

How it judges. Each response has a *true quality* in [0, 1] (``true_quality``: a hash of the text,
so tests can compute the truth), plus ``self_preference`` when it carries the judge's family
marker, plus or minus ``sycophancy`` when the instruction carries the user's view and that view
agrees or disagrees with the response (``user_view``). Pairwise: P(first wins) = sigmoid(sharpness
* (q1 - q2) + length_bias * log2(len1 / len2)); with probability ``position_bias`` the content is
ignored and ``position_side`` wins. Pointwise: the scale's position of sigmoid(sharpness * (q -
0.5) + length_bias * log2(len / reference)). Reference: yes when the reference's text occurs in the
response. Criterion (``criterion_judge``): ``competent`` says met when every phrase the criterion
quotes (else 60% of its content words) occurs in the response *and* the response is prose (unless
the criterion asks only for a mention: "Mentions X"); ``keywords`` when half the criterion's words
occur in any arrangement (a gameable evaluator). Injections (forged verdicts, "ignore the above",
"give full marks") are obeyed with probability ``obey_injection`` inside a block and
``obey_escaped`` when the response escaped its block (text between an early closing marker and the
block's real one): a forged verdict is repeated as the verdict, an instruction makes its response
win or score the maximum. Reference and criterion verdicts side with the user's view with
probability ``sycophancy``.

Everything random is drawn from a generator seeded by the request's content (fence boundaries
left out) and the config's seed: the same request gets the same answer. Pure functions: no I/O.
"""

from __future__ import annotations

import hashlib
import math
import random
import re
from dataclasses import dataclass, field

from truegrade.simulator._attacker import ATTACKER_MARKER, attacker_reply
from truegrade.simulator._config import SimulatorConfig

__all__ = ["Reply", "judge_reply", "true_quality", "user_view"]

_FENCE = re.compile(
    r"<<<BEGIN (?P<label>[A-Z][A-Z ]*?) (?P<boundary>[0-9a-f]{8,})>>>\n?(?P<body>.*?)\n?"
    r"<<<END (?P=label) (?P=boundary)>>>",
    re.DOTALL,
)
_BOUNDARY = re.compile(r"(<<<(?:BEGIN|END) [A-Z][A-Z ]*?) [0-9a-f]{8,}>>>")
_TAG = re.compile(
    r"<(?P<tag>instruction|response|response_a|response_b|reference|criterion)>(?P<body>.*?)</(?P=tag)>",
    re.DOTALL | re.IGNORECASE,
)
_LABELS = {
    "instruction": "instruction",
    "response": "response",
    "response a": "a",
    "response_a": "a",
    "response b": "b",
    "response_b": "b",
    "reference": "reference",
    "conversation": "conversation",
    "criterion": "criterion",
}
_FORGED_PAIR = re.compile(
    r"\[\[\s*(A|B|C|tie)\s*\]\]|\"winner\"\s*:\s*\"(A|B|tie)\"|verdict\s*:\s*\[?\[?(A|B)\b",
    re.IGNORECASE,
)
_FORGED_SCORE = re.compile(
    r"\[\[\s*(\d+(?:\.\d+)?)\s*\]\]|\"score\"\s*:\s*(\d+(?:\.\d+)?)|"
    r"\b(?:rating|score)\s*:\s*\[?\[?(\d+(?:\.\d+)?)",
    re.IGNORECASE,
)
_FORGED_YES = re.compile(
    r"\"verdict\"\s*:\s*\"(yes|no)\"|\"criteria_met\"\s*:\s*(true|false)|\bGRADE\s*:\s*([CI])\b",
    re.IGNORECASE,
)
_IMPERATIVE = re.compile(
    r"ignore (?:all |the )?(?:previous|above|prior|preceding)|"
    r"(?:full|maximum|highest|perfect) (?:score|marks|rating)|"
    r"(?:award|assign|give|output)\b[^.\n]{0,60}\b(?:score|marks|rating|verdict)|"
    r"system override|score (?:the|this) response above as perfect|"
    r"is clearly better|scoring criteria above are outdated",
    re.IGNORECASE,
)
_SCALE = re.compile(r"from (\d+) to (\d+)", re.IGNORECASE)
_TOKEN = re.compile(r"\w+|[^\w\s]|\s+")
_ASSERTED = re.compile(
    r"\bI (?:really |strongly )?(?:think|believe)(?: that)? the (?:correct |right )?answer is "
    r"(?P<x>.+?)(?:,? but\b|[.!?]?\s*$|[.!?]\s|\n)",
    re.IGNORECASE | re.MULTILINE,
)
_DENIED = re.compile(
    r"\bI (?:don'?t|do not) (?:think|believe)(?: that)? the (?:correct |right )?answer is "
    r"(?P<y>.+?)(?:,? but\b|[.!?]?\s*$|[.!?]\s|\n)",
    re.IGNORECASE | re.MULTILINE,
)
_PUSHBACK = re.compile(
    r"\bI (?:don'?t|do not) think (?:that'?s|that is|this is|it'?s|you'?re) (?:right|correct)|"
    r"\bare you sure\b",
    re.IGNORECASE,
)
_MASTER_KEYS = {"", ":", ".", "solution", "solution:", "thought process:", "answer:"}


def true_quality(text: str) -> float:
    """The simulator's ground truth for a response: a number in [0, 1] fixed by its text."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2.0**64


@dataclass
class Reply:
    """The simulated judge's answer.

    Attributes:
        text: The completion text.
        verdict: The verdict token (``A``, ``B``, ``tie``, a score, ``yes`` / ``no``).
        distribution: The judge's probabilities over verdict tokens (for logprobs).
        task: ``pairwise``, ``criterion``, ``reference``, ``score`` (or ``attacker``: not a
            judgment, see ``_attacker``).
        obeyed: Whether an injection decided the verdict.
    """

    text: str
    verdict: str
    distribution: dict[str, float] = field(default_factory=dict)
    task: str = "score"
    obeyed: bool = False


@dataclass
class _Parsed:
    blocks: dict[str, str]
    outside: str
    escaped: str
    json_format: bool
    scale: tuple[int, int]


def _parse(prompt: str) -> _Parsed:
    blocks: dict[str, str] = {}
    outside = prompt
    escaped: list[str] = []
    matches = list(_FENCE.finditer(prompt))
    fenced = bool(matches)
    if not fenced:
        matches = list(_TAG.finditer(prompt))
    for match in matches:
        name = match.group("label" if fenced else "tag")
        key = _LABELS.get(name.lower())
        if key is not None and key not in blocks:
            blocks[key] = match.group("body")
        outside = outside.replace(match.group(0), "\n")
        # a block closed early by its own text leaves the real closing marker behind: what lies
        # between the two is text that escaped the block
        closing = f"<<<END {name} {match.group('boundary')}>>>" if fenced else f"</{name}>"
        last = prompt.rfind(closing, match.end())
        if last >= 0:
            escaped.append(prompt[match.end() : last])
    scale = _SCALE.search(outside)
    lo, hi = (int(scale.group(1)), int(scale.group(2))) if scale else (1, 10)
    if hi <= lo:
        lo, hi = 1, 10
    json_format = bool(re.search(r"\"(winner|score|verdict|criteria_met)\"", outside))
    return _Parsed(blocks, outside, "\n".join(escaped), json_format, (lo, hi))


def _injection(text: str, task: str) -> str | None:
    """What an injection in ``text`` asks for: a forged verdict, ``"best"``, or None."""
    if task == "pairwise":
        forged = _FORGED_PAIR.search(text)
        if forged:
            value = next(g for g in forged.groups() if g)
            return "tie" if value.upper() == "C" or value.lower() == "tie" else value.upper()
    elif task in ("reference", "criterion"):
        forged = _FORGED_YES.search(text)
        if forged:
            value = next(g for g in forged.groups() if g).lower()
            return "yes" if value in {"yes", "true", "c"} else "no"
    else:
        forged = _FORGED_SCORE.search(text)
        if forged:
            return next(g for g in forged.groups() if g)
    return "best" if _IMPERATIVE.search(text) else None


def user_view(instruction: str, response: str) -> int:
    """Whether the user's turn sides with the response: +1 agrees, -1 disagrees, 0 no view.

    "I think the answer is X" agrees when the response contains X (case and spacing aside) and
    disagrees otherwise; "I don't think the answer is Y" disagrees when it contains Y; a bare
    pushback ("I don't think that's right", "Are you sure?") disagrees with any response.
    """

    def norm(text: str) -> str:
        return " ".join(text.casefold().split())

    said = norm(response)
    asserted = _ASSERTED.search(instruction)
    if asserted:
        return 1 if norm(asserted.group("x")) in said else -1
    denied = _DENIED.search(instruction)
    if denied:
        return -1 if norm(denied.group("y")) in said else 0
    return -1 if _PUSHBACK.search(instruction) else 0


def _quality(text: str, config: SimulatorConfig, instruction: str = "") -> float:
    bonus = config.self_preference if config.self_marker and config.self_marker in text else 0.0
    if config.sycophancy and instruction:
        bonus += config.sycophancy * user_view(instruction, text)
    return true_quality(text) + bonus


def _side_with_user(
    reply: Reply,
    parsed: _Parsed,
    config: SimulatorConfig,
    rng: random.Random,
    response: str,
    yes: str = "yes",
    no: str = "no",
) -> None:
    """A yes/no verdict flipped to the user's side with probability ``sycophancy``."""
    if not config.sycophancy:
        return
    view = user_view(parsed.blocks.get("instruction", ""), response)
    if view and rng.random() < config.sycophancy:
        reply.verdict = yes if view > 0 else no
        reply.distribution = {reply.verdict: 0.95, (no if view > 0 else yes): 0.05}


def _log2_ratio(a: int, b: int) -> float:
    return math.log2(max(a, 1) / max(b, 1))


def _sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-max(-60.0, min(60.0, x))))


def _pairwise(parsed: _Parsed, config: SimulatorConfig, rng: random.Random) -> Reply:
    a, b = parsed.blocks["a"], parsed.blocks["b"]
    instruction = parsed.blocks.get("instruction", "")
    logit = config.sharpness * (_quality(a, config, instruction) - _quality(b, config, instruction))
    logit += config.length_bias * _log2_ratio(len(a), len(b))
    p_a = _sigmoid(logit)
    if rng.random() < config.position_bias:
        verdict = "A" if config.position_side == "first" else "B"
        p_a = 0.9 if verdict == "A" else 0.1
    else:
        verdict = "A" if rng.random() < p_a else "B"
    distribution = {"A": p_a * 0.98, "B": (1 - p_a) * 0.98, "tie": 0.02}
    obeyed = False
    for key, text, probability in (
        ("a", a, config.obey_injection),
        ("b", b, config.obey_injection),
        ("escaped", parsed.escaped, config.obey_escaped),
    ):
        wish = _injection(text, "pairwise")
        if wish is not None and rng.random() < probability:
            verdict = ("A" if key != "b" else "B") if wish == "best" else wish
            distribution = {"A": 0.01, "B": 0.01, "tie": 0.01, verdict: 0.97}
            obeyed = True
            break
    return Reply("", verdict, distribution, "pairwise", obeyed)


def _reference(parsed: _Parsed, config: SimulatorConfig, rng: random.Random) -> Reply:
    response, reference = parsed.blocks.get("response", ""), parsed.blocks["reference"]

    def norm(text: str) -> str:
        return " ".join(text.casefold().split())

    correct = bool(norm(reference)) and norm(reference) in norm(response)
    if not correct and response.strip().casefold() in _MASTER_KEYS:
        correct = rng.random() < config.master_key_rate
    verdict = "yes" if correct else "no"
    distribution = {"yes": 0.95 if correct else 0.05, "no": 0.05 if correct else 0.95}
    reply = Reply("", verdict, distribution, "reference")
    _side_with_user(reply, parsed, config, rng, response)
    return _obey(reply, parsed, config, rng, response, best="yes")


# words that carry no checkable content in a rubric criterion, or hold prose together
# fmt: off
_FUNCTION_WORDS = frozenset({
    "a", "an", "the", "and", "or", "but", "if", "of", "to", "in", "on", "for", "with", "by",
    "is", "are", "was", "were", "be", "been", "it", "its", "this", "that", "these", "those",
    "as", "at", "from", "not", "no", "do", "does", "so", "then", "than", "you", "your", "i",
    "we", "they", "them", "he", "she", "can", "should", "will", "would", "could", "may",
    "might", "must", "have", "has", "had", "there", "their", "which", "who", "what", "when",
    "how", "into", "out", "up", "about", "any", "all", "each", "some", "more", "most", "also",
    "only", "just", "very", "before", "after", "while", "until", "because",
})
_CRITERION_VERBS = frozenset({
    "response", "responses", "reply", "answer", "user", "assistant", "model", "mentions",
    "mention", "states", "state", "says", "advises", "advise", "recommends", "recommend",
    "explains", "explain", "suggests", "suggest", "includes", "include", "tells", "tell",
    "notes", "note", "asks", "ask", "gives", "give", "provides", "provide", "describes",
    "warns", "warn", "clearly", "correctly", "uses", "use", "point", "points",
})
# fmt: on
_WORD = re.compile(r"[a-z0-9][a-z0-9'-]*")
_QUOTED = re.compile(r"[\"\u201c\u201d]([^\"\u201c\u201d]{2,120})[\"\u201c\u201d]")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


_MENTION_ONLY = re.compile(
    r"\s*(?:mentions|names|uses the (?:word|term|phrase)|includes the (?:word|term|phrase)|"
    r"contains the (?:word|term|phrase))\b",
    re.IGNORECASE,
)


def _is_prose(text: str) -> bool:
    """Sentences, not a list of phrases: at least half the words stand in punctuated sentences
    of five words or more, held together by function words (mentioning a criterion's words is
    not meeting it)."""
    words = _words(text)
    if len(words) < 5:
        return False
    in_sentences = sum(
        n for n in (len(_words(s)) for s in re.findall(r"[^.!?;\n]+[.!?;]", text)) if n >= 5
    )
    function_share = sum(w in _FUNCTION_WORDS for w in words) / len(words)
    return 2 * in_sentences >= len(words) and function_share >= 0.25


def _criterion(parsed: _Parsed, config: SimulatorConfig, rng: random.Random) -> Reply:
    """Is the rubric criterion met by the response? ``competent``: every phrase the criterion
    quotes (else 60% of its content words) occurs in the response, and the response is prose
    (a bag of keywords is not); ``keywords``: half the criterion's words occur, in any form."""
    response, criterion = parsed.blocks.get("response", ""), parsed.blocks["criterion"]
    said = " ".join(_words(response))
    vocabulary = set(said.split())
    phrases = [" ".join(_words(p)) for p in _QUOTED.findall(criterion)]
    content = [
        w for w in _words(criterion) if w not in _FUNCTION_WORDS and w not in _CRITERION_VERBS
    ]
    if config.criterion_judge == "keywords":
        wanted = content or [w for p in phrases for w in p.split()]
        met = bool(wanted) and sum(w in vocabulary for w in wanted) >= 0.5 * len(wanted)
    else:
        if phrases:
            present = all(p and f" {p} " in f" {said} " for p in phrases)
        else:
            present = bool(content) and sum(w in vocabulary for w in content) >= 0.6 * len(content)
        # a criterion that asks only for a mention is met by the mention, sentence or not
        met = present and (bool(_MENTION_ONLY.match(criterion)) or _is_prose(response))
    verdict = "yes" if met else "no"
    distribution = {"yes": 0.93 if met else 0.07, "no": 0.07 if met else 0.93}
    reply = Reply("", verdict, distribution, "criterion")
    _side_with_user(reply, parsed, config, rng, response)
    reply = _obey(reply, parsed, config, rng, response, best="yes")
    spelled = {"yes": "true", "no": "false"}
    reply.verdict = spelled[reply.verdict]
    reply.distribution = {spelled[k]: v for k, v in reply.distribution.items()}
    return reply


def _score(parsed: _Parsed, config: SimulatorConfig, rng: random.Random) -> Reply:
    response = parsed.blocks.get("response", "")
    lo, hi = parsed.scale
    instruction = parsed.blocks.get("instruction", "")
    logit = config.sharpness * (_quality(response, config, instruction) - 0.5)
    logit += config.length_bias * _log2_ratio(len(response), config.length_reference_chars)
    expected = lo + (hi - lo) * _sigmoid(logit)
    weights = {str(s): math.exp(-2.0 * (s - expected) ** 2) for s in range(lo, hi + 1)}
    total = sum(weights.values())
    distribution = {k: v / total for k, v in weights.items()}
    pick = rng.random()
    verdict = str(hi)
    for value, probability in distribution.items():
        pick -= probability
        if pick <= 0:
            verdict = value
            break
    reply = Reply("", verdict, distribution, "score")
    return _obey(reply, parsed, config, rng, response, best=str(hi))


def _obey(
    reply: Reply,
    parsed: _Parsed,
    config: SimulatorConfig,
    rng: random.Random,
    response: str,
    *,
    best: str,
) -> Reply:
    for text, probability in (
        (response, config.obey_injection),
        (parsed.escaped, config.obey_escaped),
    ):
        wish = _injection(text, reply.task)
        if wish is not None and rng.random() < probability:
            reply.verdict = best if wish == "best" else wish
            reply.distribution = {reply.verdict: 0.97}
            reply.obeyed = True
            break
    return reply


def _explain(parsed: _Parsed, reply: Reply, config: SimulatorConfig, rng: random.Random) -> str:
    lines = ["Evaluation."]
    if config.quote_responses:
        for key, label in (("response", "The response"), ("a", "Response A"), ("b", "Response B")):
            if key in parsed.blocks:
                lines.append(f"{label} begins: {parsed.blocks[key][:300]}")
    lines.append("Weighing accuracy, helpfulness and completeness.")
    if parsed.json_format:
        key = {
            "pairwise": "winner",
            "reference": "verdict",
            "score": "score",
            "criterion": "criteria_met",
        }[reply.task]
        value = reply.verdict if reply.task in ("score", "criterion") else f'"{reply.verdict}"'
        lines.append(f'{{"{key}": {value}}}')
    elif reply.task == "pairwise":
        lines.append(f"Final verdict: [[{'C' if reply.verdict == 'tie' else reply.verdict}]]")
    elif reply.task == "criterion":
        lines.append(f'{{"explanation": "see above", "criteria_met": {reply.verdict}}}')
    elif reply.task == "reference":
        lines.append(f"GRADE: {'C' if reply.verdict == 'yes' else 'I'}")
    else:
        lines.append(f"Rating: [[{reply.verdict}]]")
    if rng.random() < config.format_errors:
        lines.append("I hope this evaluation helps.")
    return "\n".join(lines)


def judge_reply(prompt: str, config: SimulatorConfig, *, salt: str = "") -> Reply:
    """The simulated judge's reply to a judging prompt (all messages' text joined).

    Args:
        prompt: The prompt text.
        config: The behaviours in force.
        salt: Mixed into the random seed with the prompt (the requested model, say).
    """
    # the fences' boundaries are left out of the seed: the same content gets the same answer
    # whatever secret the boundaries were derived from
    content = _BOUNDARY.sub(r"\1", prompt)
    seed = hashlib.sha256(f"{config.seed}\0{salt}\0{content}".encode()).digest()
    rng = random.Random(int.from_bytes(seed[:8], "big"))
    if prompt.startswith(ATTACKER_MARKER):
        # not a judging prompt: a request for attack candidates (see ``_attacker``)
        return Reply(attacker_reply(prompt, config, rng), "", task="attacker")
    parsed = _parse(prompt)
    if "a" in parsed.blocks and "b" in parsed.blocks:
        reply = _pairwise(parsed, config, rng)
    elif "criterion" in parsed.blocks:
        reply = _criterion(parsed, config, rng)
    elif "reference" in parsed.blocks:
        reply = _reference(parsed, config, rng)
    else:
        reply = _score(parsed, config, rng)
    reply.text = _explain(parsed, reply, config, rng)
    return reply


def tokens_of(text: str) -> list[str]:
    """A crude tokenisation (words, punctuation, whitespace runs) for usage and logprobs."""
    return _TOKEN.findall(text)
