"""Config fuzzing: mutate every stack's config many times and count what happens.

    python benchmarks/fuzz_config.py [--cases 12000] [--plan-every 20]

Each case changes one key (or section) of a stack file to a value of another kind or an edge of
its own, removes it, or renames it to a key that is no string (tests/config_mutations.py), then
validates as `trainstack validate` does. Outcomes: rejected cleanly (ConfigError), accepted, or
crashed (any other exception: a defect). Every --plan-every'th accepted case is also planned
offline and its Kubernetes objects schema-checked. The process may use 8 GB of address space, so
a config that makes validation build data in proportion to a number fails as a MemoryError.
Prints the counts and the first crash and invalid object of each kind.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from hypothesis import HealthCheck, given, settings

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from config_mutations import mutated
from trainstack.app.deploy import validation
from trainstack.app.deploy.stacks import project_root, raw_stack_config, stack_names
from trainstack.app.plan import engine
from trainstack.app.plan.plan import render
from trainstack.app.schemas.validate import validate_object
from trainstack.core.errors import ConfigError
from trainstack.infra.contract import OUTPUT

ADDRESS_SPACE = 8 << 30


def validator(stack: str, base: dict) -> Callable[[dict], object]:
    """`trainstack validate` of mutations of `base`; the platform stack it names is rendered once
    (a mutation that names another platform is validated as the command would, rendering it)."""
    ref = base.get("trainstack:platform", {}).get("stack")
    if ref is None:
        return lambda raw: validation.validate(stack, raw, project_root())
    output = engine.run(ref.rsplit("/", 1)[-1], raw_stack_config(ref.rsplit("/", 1)[-1])).outputs.get(OUTPUT)

    def validate(raw: dict) -> object:
        platform = raw.get("trainstack:platform")
        if isinstance(platform, dict) and platform.get("stack") == ref:
            return validation.validate(stack, raw, project_root(), output)
        return engine.validate_offline(stack, raw)

    return validate


def fuzz(stack: str, examples: int, plan_every: int, counts: Counter[str], crashes: dict[str, str]) -> None:
    """Run `examples` mutations of `stack`'s config, adding to `counts` and the first of each kind of crash."""
    base = raw_stack_config(stack)
    validate = validator(stack, base)

    @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(raw=mutated(base))
    def case(raw: dict) -> None:
        counts["cases"] += 1
        try:
            validate(raw)
        except ConfigError:
            counts["rejected"] += 1
            return
        except Exception as exc:  # a defect: the user would see a traceback
            counts["validate crashes"] += 1
            crashes.setdefault(f"validate: {type(exc).__name__}", f"{stack}: {exc}"[:300])
            return
        counts["accepted"] += 1
        if counts["accepted"] % plan_every:
            return
        counts["planned"] += 1
        try:
            plan = render(stack, raw)
        except Exception as exc:
            counts["plan crashes"] += 1
            crashes.setdefault(f"plan: {type(exc).__name__}", f"{stack}: {exc}"[:300])
            return
        problems = [p for obj in plan.kubernetes_objects() for p in validate_object(obj)]
        if problems:
            counts["invalid objects"] += 1
            crashes.setdefault(f"invalid object: {problems[0][:60]}", f"{stack}: {problems[0]}"[:300])

    case()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=12000, help="cases in all, shared by the stacks")
    parser.add_argument("--plan-every", type=int, default=20)
    args = parser.parse_args()
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, resource.getrlimit(resource.RLIMIT_AS)[1]))
    counts: Counter[str] = Counter()
    crashes: dict[str, str] = {}
    started = time.monotonic()
    stacks = stack_names()
    for stack in stacks:
        fuzz(stack, -(-args.cases // len(stacks)), args.plan_every, counts, crashes)
    elapsed = time.monotonic() - started
    for key in ("cases", "rejected", "accepted", "validate crashes", "planned", "plan crashes", "invalid objects"):
        print(f"{key:<18} {counts[key]}")
    print(f"{'seconds':<18} {elapsed:.0f}")
    for kind, example in sorted(crashes.items()):
        print(f"first {kind}: {example}")


if __name__ == "__main__":
    main()
