"""Shared fixtures: tiny reward models."""

from tests.graders.reward_model.fixtures import tiny_rms

__all__ = ["tiny_rms"]
