"""Adapters for training frameworks: ``trl`` (reward functions), ``verl`` (``compute_score``),
and ``ray`` (a grader spread over a Ray cluster, and Ray Data scoring). OpenRLHF needs no
adapter: point its ``--reward.remote_url`` (``--remote_rm_url`` before 0.11) at
``truegrade serve``'s ``/get_reward``.

The submodules are imported explicitly (``truegrade.integrations.trl``...), so that nothing
here pulls in Ray unless it is asked for."""

__all__: list[str] = []
