"""Shared fixtures: tiny reward models and the reward model test server."""

from tests.graders.reward_model.fixtures import rm_server, tiny_rms

__all__ = ["rm_server", "tiny_rms"]
