"""Rendering results for people: plots of the JSON documents the analyses produce.

matplotlib is an optional extra (``pip install 'truegrade[plot]'``), imported only when a plot is
drawn.
"""

from truegrade.report._plots import plot_monitor, plot_overopt

__all__ = ["plot_monitor", "plot_overopt"]
