"""A judge simulator: a local OpenAI-compatible server that behaves like a flawed LLM judge.

It is a simulator, not a model: its verdicts are scripted from a hash of each response (the
"true quality", see ``true_quality``) and from the behaviours switched on in ``SimulatorConfig``
(position bias, length bias, obeying injected instructions, self-preference, sycophancy, latency,
500s, 429s, hangs, logprobs). Tests and the demo start it with ``run_simulator`` to show that each
control of the ``judge`` grader detects and corrects the bias it claims to, and that the bias
probes (``truegrade.probes``) measure it; ``truegrade simulate-judge``
serves it in the foreground. Nothing in truegrade's graders depends on it.

It also answers the adaptive search's requests for attack candidates, from a script (see
``truegrade.simulator._attacker``), so the attacker path is tested over HTTP without a model.
"""

from truegrade.simulator._config import SimulatorConfig
from truegrade.simulator._judge import true_quality
from truegrade.simulator._server import SimulatorHandle, run_simulator, serve_simulator

__all__ = [
    "SimulatorConfig",
    "SimulatorHandle",
    "run_simulator",
    "serve_simulator",
    "true_quality",
]
