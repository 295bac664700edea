"""The command-line interface (``truegrade ...``)."""

from truegrade.cli._app import main

__all__ = ["main"]
