"""One way for the Ray tests to start Ray."""

from __future__ import annotations

from typing import Any


def init_local_ray(ray: Any) -> None:
    """A Ray of its own ("local"), never the cluster another test (run alongside, under xdist)
    or `ray start` left recorded in /tmp/ray/ray_current_cluster."""
    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
    )
