"""Shared fixtures: the judge simulator."""

from tests.simulator.fixtures import simulator

__all__ = ["simulator"]
