"""Peak memory of `trainstack validate` on a workload stack as its node count grows.

Each case runs `trainstack validate STACK` in a fresh interpreter on a copy of the project whose
stack files ask for N nodes, with the pool sized to match (the platform stack's
`trainstack:gpuPool.nodeCount`, or `trainstack:platform.existingCluster.nodeCount`) or as
shipped, and reads its peak resident set (getrusage maxrss). Past GKE's pool size the config is
refused: that error path must be as flat as a valid config. Asserts every case within 10% of the
stack's case at its shipped size (54 nodes for a3ultra-405b-job).

    python benchmarks/validate_memory.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
# The workload stack: its shipped node count, and the stack file and key path that size its pool.
STACKS = {
    "a3ultra-405b-job": (54, "a3ultra-platform", ("trainstack:gpuPool", "nodeCount")),
    "toolkit-a3mega-gpt3-175b": (32, "toolkit-a3mega-gpt3-175b", ("trainstack:platform", "existingCluster", "nodeCount")),
}
BIG = (10**6, 10**9)
CHILD = """
import json, resource, sys
from trainstack.app.cli import main
try:
    main(["validate", sys.argv[1]])
except SystemExit as exit:
    code = exit.code
print(json.dumps({"exit": code, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def _set(raw: dict, path: tuple[str, ...], value: int) -> None:
    for key in path[:-1]:
        raw = raw[key]
    raw[path[-1]] = value


def _project(folder: Path, stack: str, nodes: int, pool: int) -> None:
    """A copy of the project in `folder` whose `stack` runs `nodes` nodes on a pool of `pool`."""
    (folder / "stacks").mkdir()
    (folder / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
    (folder / "images").symlink_to(ROOT / "images")
    _, pool_stack, pool_key = STACKS[stack]
    files = {name: yaml.safe_load((ROOT / "stacks" / f"Pulumi.{name}.yaml").read_text()) for name in {stack, pool_stack}}
    _set(files[stack]["config"], ("trainstack:workload", "nodes"), nodes)
    _set(files[pool_stack]["config"], pool_key, pool)
    for name, document in files.items():
        (folder / "stacks" / f"Pulumi.{name}.yaml").write_text(yaml.safe_dump(document))


def measure(stack: str, nodes: int, pool: int) -> dict:
    """`trainstack validate` of `stack` in a fresh interpreter: its exit code, last line and peak RSS."""
    with tempfile.TemporaryDirectory() as folder:
        _project(Path(folder), stack, nodes, pool)
        env = {**os.environ, "TRAINSTACK_ROOT": folder}
        done = subprocess.run([sys.executable, "-c", CHILD, stack], env=env, capture_output=True, text=True, check=True)
    result = json.loads(done.stdout.splitlines()[-1])
    result["said"] = (done.stderr.strip().splitlines() or done.stdout.splitlines()[:-1])[-1].strip()[:90]
    return result


def main() -> None:
    print(f"{'stack':<25} {'nodes':>10} {'pool':>10} {'exit':>4} {'peak RSS MB':>11}  answer")
    failures = []
    for stack, (shipped, _, _) in STACKS.items():
        base = None
        for nodes, pool in [(shipped, shipped), *((n, n) for n in BIG), *((n, shipped) for n in BIG)]:
            result = measure(stack, nodes, pool)
            base = base or result["rss_mb"]
            print(f"{stack:<25} {nodes:>10} {pool:>10} {result['exit']:>4} {result['rss_mb']:>11.0f}  {result['said']}")
            if result["rss_mb"] > 1.1 * base:
                failures.append(f"{stack} at {nodes} nodes: {result['rss_mb']:.0f} MB, over 110% of {base:.0f} MB at {shipped}")
    assert not failures, "; ".join(failures)


if __name__ == "__main__":
    main()
