"""``python -m truegrade`` runs the command line."""

from truegrade.cli import main

main()
