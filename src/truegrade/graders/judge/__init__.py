"""``judge``: LLM judges and juries with bias controls (fenced candidates, final-verdict parsing,
injection flags, both-order pairwise judging, juries, a self-preference guard, logprob scores).

The grader talks to endpoints through ``truegrade.judge.JudgeClient``; the prompt, verdict and
injection logic lives here and is usable on its own (``find_injections``, ``parse_verdict``).
"""

from truegrade.graders.judge._family import model_family
from truegrade.graders.judge._grader import JudgeFlag, JudgeGrader, run_sync
from truegrade.graders.judge._injection import InjectionFinding, find_injections
from truegrade.graders.judge._options import JudgeEndpoint, JudgeOptions, template_text
from truegrade.graders.judge._prompts import PromptBuilder
from truegrade.graders.judge._verdict import ParsedVerdict, parse_verdict

__all__ = [
    "InjectionFinding",
    "JudgeEndpoint",
    "JudgeFlag",
    "JudgeGrader",
    "JudgeOptions",
    "ParsedVerdict",
    "PromptBuilder",
    "find_injections",
    "model_family",
    "parse_verdict",
    "run_sync",
    "template_text",
]
