"""Plan wall time against its floor, per stack, the deploy critical path against its floor, and
plan time as the GPU pool grows.

The floor is a fresh interpreter that imports pulumi and touches every provider resource class
the stack's plan uses (the providers load lazily, module by module: that load dominates), with
the collector tuned and its objects frozen at exit as `trainstack` does, so the CLI's ratio is
against a fair floor.
`render` is the engine alone in a script; `cli` is `trainstack plan` as a user runs it (it also
writes plan.json, the manifests and the summary; it tunes the collector first, app/launch.py, and skips the
exit-time collection, app/cli.py: the floor does both too).
Each figure is the best of `--repeat` fresh interpreters, so caches and noise do not flatter it.

    python benchmarks/plan_time.py [STACK ...] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time

PLAN = """
import sys, json
from trainstack.app.plan.plan import render
from trainstack.app.deploy.stacks import raw_stack_config
raw = raw_stack_config({stack!r})
for k, v in json.loads({changes!r}).items():
    raw[k] = {{key: value for key, value in {{**raw.get(k, {{}}), **v}}.items() if value is not None}}
render({stack!r}, raw)
"""

FACTS = """
import json
from trainstack.app.plan.plan import render
from trainstack.app.plan.inputcheck import args_class
from trainstack.app.deploy.stacks import raw_stack_config
plan = render({stack!r}, raw_stack_config({stack!r}))
paths = set()
for r in plan.resources:
    if not r["custom"] or r["type"].startswith("pulumi:"):  # StackReference lives in pulumi itself
        continue
    if r["type"].startswith("kubernetes:") and r["type"].split(":")[1].split("/")[0].count(".") and not r["type"].startswith("kubernetes:helm.sh"):
        paths.add(("pulumi_kubernetes.apiextensions", "CustomResource"))
        continue
    cls = args_class(r["type"])
    if cls is None:
        module, _, name = r["type"].partition(":")[2].rpartition(":")
        group, _, version = module.partition("/")
        paths.add((f"pulumi_kubernetes.{{group}}.{{version}}", name))
    else:
        paths.add((cls.__module__.rsplit(".", 1)[0] if cls.__module__.count(".") > 1 else cls.__module__, cls.__name__[:-4]))
path = plan.critical_path
print(json.dumps({{"classes": sorted(paths), "path": [path.total_seconds, path.floor_seconds]}}))
"""

FLOOR = """
import atexit, gc, importlib, json
from trainstack.app.launch import THRESHOLDS
gc.set_threshold(*THRESHOLDS)  # as `trainstack` does (app/launch.py), before anything loads
import pulumi
for module, name in json.loads({paths!r}):
    getattr(importlib.import_module(module), name)
atexit.register(gc.freeze)  # as `trainstack` does (app/cli.py): the exit skips the collection the CLI skips
"""


def wall(code: str, repeat: int) -> float:
    """Best wall time of `code` over `repeat` fresh interpreters."""
    return best_of([sys.executable, "-c", code], repeat)


def best_of(argv: list[str], repeat: int) -> float:
    """Best wall time of the command `argv` over `repeat` runs."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True)
        best = min(best, time.perf_counter() - start)
    return best


def facts(stack: str) -> dict:
    """The provider classes a stack's plan uses, and its critical path and floor in seconds."""
    out = subprocess.run([sys.executable, "-c", FACTS.format(stack=stack)], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stacks", nargs="*")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--growth-stack", default="a3ultra-405b")
    args = parser.parse_args()
    from trainstack.app.deploy.stacks import stack_names

    stacks = args.stacks or stack_names()
    print(f"{'stack':<26} {'floor s':>8} {'render s':>9} {'ratio':>6} {'cli s':>6} {'ratio':>6}   {'path min':>8} {'floor min':>9} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as out:
        for stack in stacks:
            known = facts(stack)
            floor = wall(FLOOR.format(paths=json.dumps(known["classes"])), args.repeat)
            plan = wall(PLAN.format(stack=stack, changes="{}"), args.repeat)
            cli = best_of([sys.executable, "-m", "trainstack.app.launch", "plan", stack, "--out", out], args.repeat)
            path, path_floor = known["path"]
            print(
                f"{stack:<26} {floor:>8.2f} {plan:>9.2f} {plan / floor:>6.2f} {cli:>6.2f} {cli / floor:>6.2f}   "
                f"{path / 60:>8.1f} {path_floor / 60:>9.1f} {path / path_floor if path_floor else float('nan'):>6.2f}"
            )

    print(f"\nplan time by GPU pool size ({args.growth_stack})")
    base = None
    for nodes in (2, 100, 252):  # 252: the most nodes a GPU NIC subnet (a /24) holds
        # A synthetic stack: the recipe's pool and job at `nodes`, without the 18-node replicas
        # and without parallelism, so it would not fit: the memory check is off.
        changes = {
            "trainstack:gpuPool": {"nodeCount": nodes},
            "trainstack:workload": {
                "nodes": nodes,
                "resiliency": None,
                "parallelism": None,
                "globalBatchSize": None,
                "memoryCheck": "off",
            },
        }
        t = wall(PLAN.format(stack=args.growth_stack, changes=json.dumps(changes)), args.repeat)
        base = base or t
        print(f"  {nodes:>5} nodes  {t:>6.2f} s  x{t / base:.2f}")


if __name__ == "__main__":
    main()
