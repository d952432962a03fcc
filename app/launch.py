"""The `trainstack` command's entry point: the collector tuned for a short-lived process that loads
large provider SDKs, set before the command's modules load, then the command line (app/cli.py)."""

from __future__ import annotations

import gc

# The young generation's threshold (CPython's default is 700 allocations): while the provider SDKs
# load their thousands of classes and the engine registers a stack's resources, the default runs a
# collection every few hundred objects, with nothing to free. benchmarks/plan_time.py, a3ultra-405b
# on 2 cores: `trainstack plan` 2.81 s with the default, 2.12 s with these, peak RSS 211 -> 213 MB.
THRESHOLDS = (50_000, 20, 20)


def main() -> None:
    """Tune the collector, then run the command line."""
    gc.set_threshold(*THRESHOLDS)
    from trainstack.app.cli import main as command  # start-up laziness: the command's modules load after the tuning

    command()


if __name__ == "__main__":
    main()
