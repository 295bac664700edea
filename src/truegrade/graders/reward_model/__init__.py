"""``reward_model``: learned reward models as graders, so every analysis can be run on them.

A Hugging Face sequence-classification model in this process (``path``; needs
``pip install 'truegrade[rm]'``, loaded once per process and shared) or a served one (``url``:
vLLM's ``/pooling`` and ``/classify``, or a plain JSON endpoint, through the judge client's
limits, retries and cache). Scores are raw unless the spec asks for ``sigmoid`` or ``zscore``.
Put several in an ``ensemble`` to combine them and see where they disagree.
"""

from truegrade.graders.reward_model._grader import RewardModelGrader
from truegrade.graders.reward_model._options import RewardModelOptions
from truegrade.graders.reward_model._raw import RewardModelFlag

__all__ = [
    "RewardModelFlag",
    "RewardModelGrader",
    "RewardModelOptions",
]
