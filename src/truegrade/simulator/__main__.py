"""``python -m truegrade.simulator``: the judge simulator in its own process (used by
``run_simulator(mode="process")``; people use ``truegrade simulate-judge``)."""

from __future__ import annotations

import argparse

from truegrade.simulator._config import SimulatorConfig
from truegrade.simulator._server import DEFAULT_PORT, serve_simulator


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m truegrade.simulator")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument("--fd", type=int, default=None, help="serve on this inherited socket")
    parser.add_argument("--config-json", default="{}", help="SimulatorConfig as JSON")
    args = parser.parse_args()
    config = SimulatorConfig.model_validate_json(args.config_json)
    serve_simulator(config, host=args.host, port=args.port, fd=args.fd)


if __name__ == "__main__":
    main()
