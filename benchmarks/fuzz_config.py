"""Config fuzzing: mutate every stack's config many times and count what happens.

    python benchmarks/fuzz_config.py [--cases 2000] [--plan-every 20]

Each case changes one key (or section) of a stack file to a value of another kind or an edge of
its own, or removes it (tests/config_mutations.py), then validates. Outcomes: rejected cleanly
(ConfigError), accepted, or crashed (any other exception: a defect). Every --plan-every'th accepted
case is also planned offline and its Kubernetes objects schema-checked. Prints the counts and the
first crash of each kind.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, given, settings

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from config_mutations import mutated
from trainstack.app import validation
from trainstack.app.plan.plan import render
from trainstack.app.schemas.validate import validate_object
from trainstack.app.stacks import project_root, raw_stack_config, stack_names
from trainstack.core.errors import ConfigError


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=2000, help="cases per stack")
    parser.add_argument("--plan-every", type=int, default=20)
    args = parser.parse_args()
    counts: Counter[str] = Counter()
    crashes: dict[str, str] = {}
    started = time.monotonic()
    for stack in [s for s in stack_names() if "trainstack:platform" not in raw_stack_config(s)]:
        base = raw_stack_config(stack)

        @settings(max_examples=args.cases, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(raw=mutated(base))
        def case(raw: dict) -> None:
            counts["cases"] += 1
            try:
                validation.validate(stack, raw, project_root())
            except ConfigError:
                counts["rejected"] += 1
                return
            except Exception as exc:  # a defect: the user would see a traceback
                counts["validate crashes"] += 1
                crashes.setdefault(f"validate: {type(exc).__name__}", f"{stack}: {exc}"[:300])
                return
            counts["accepted"] += 1
            if counts["accepted"] % args.plan_every:
                return
            counts["planned"] += 1
            try:
                plan = render(stack, raw)
            except Exception as exc:
                counts["plan crashes"] += 1
                crashes.setdefault(f"plan: {type(exc).__name__}", f"{stack}: {exc}"[:300])
                return
            if any(validate_object(obj) for obj in plan.kubernetes_objects()):
                counts["invalid objects"] += 1

        case()
    elapsed = time.monotonic() - started
    for key in ("cases", "rejected", "accepted", "validate crashes", "planned", "plan crashes", "invalid objects"):
        print(f"{key:<18} {counts[key]}")
    print(f"{'seconds':<18} {elapsed:.0f}")
    for kind, example in sorted(crashes.items()):
        print(f"first {kind}: {example}")


if __name__ == "__main__":
    main()
