"""Start-up time of the commands that need no provider SDK, against the interpreter's own floor.

The floor is `python -c "import click"` (the interpreter plus the command-line library every
command needs); each figure is the best of `--repeat` fresh processes, so caches and noise do
not flatter it. Issue 39 asks for at most 4x the floor.

    python benchmarks/start_time.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time

LIMIT = 4.0


def best(argv: list[str], repeat: int) -> float:
    """The fastest of `repeat` runs of `argv`, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    command = shutil.which("trainstack") or sys.exit("trainstack is not installed in this environment")
    floor = best([sys.executable, "-c", "import click"], args.repeat)
    label = 'python -c "import click"'
    print(f"{label:<32} {floor:6.3f} s  (floor)")
    worst = 0.0
    for argv in (["--help"], ["stacks"], ["metrics", "--help"], ["reap", "--help"], ["up", "--help"]):
        took = best([command, *argv], args.repeat)
        worst = max(worst, took / floor)
        print(f"{'trainstack ' + ' '.join(argv):<32} {took:6.3f} s  {took / floor:4.1f}x")
    print(f"worst {worst:.1f}x the floor (limit {LIMIT:g}x)")
    sys.exit(0 if worst <= LIMIT else 1)


if __name__ == "__main__":
    main()
