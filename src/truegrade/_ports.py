"""The ports truegrade's servers listen on by default, in one light module the command line can
read without loading the servers: distinct, so the reward server and the judge simulator it asks
never collide on one machine."""

__all__ = ["REVIEW_PORT", "SERVE_PORT", "SIMULATOR_PORT"]

SERVE_PORT = 8000
"""``truegrade serve``, the reward server."""

SIMULATOR_PORT = 8001
"""``truegrade simulate-judge``, the scripted judge simulator."""

REVIEW_PORT = 8765
"""``truegrade review serve``, the experts' review app."""
