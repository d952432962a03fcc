"""`trainstack diff` of every stack against the plan floor.

The floor is `trainstack plan --all`: every stack rendered once, in one interpreter. `diff` renders
every stack twice, the base ref's in a subprocess and the working tree's in its own process, at
the same time: on two or more free cores it takes about the floor (ratio near 1); serialized, about
twice it. A job or fleet stack reads its platforms' outputs from the stacks the process already
rendered (app/plan/engine.py), so each stack renders once a side. Each figure is the best of
`--repeat` runs.

    python benchmarks/diff_time.py [--base HEAD] [--repeat 2]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time


def best(argv: list[str], repeat: int) -> float:
    """The fastest of `repeat` runs of `argv`, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(argv, check=False, capture_output=True)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="HEAD", help="The git ref to diff against (HEAD: every stack unchanged, all rendered).")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    command = shutil.which("trainstack") or sys.exit("trainstack is not installed in this environment")
    floor = best([command, "plan", "--all", "--format", "json"], args.repeat)
    diff = best([command, "diff", "--base", args.base, "--format", "json"], args.repeat)
    print(f"cores available            {len(os.sched_getaffinity(0))}")
    print(f"trainstack plan --all      {floor:7.1f} s  (floor: every stack rendered once)")
    print(f"trainstack diff --base {args.base:<4}{diff:7.1f} s  {diff / floor:4.2f}x the floor (2x: base and working tree one after the other)")


if __name__ == "__main__":
    main()
