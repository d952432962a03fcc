"""A fleet stack is one `TrainingFleet` component, built from what its check read, and a fleet
deployed before the component moves under it replacing nothing.

`data/upgrade/a3ultra-fleet-fdc50a7.json` is the state of the shipped fleet stack as trainstack
fdc50a7 (the last commit whose fleet's components were at the top of the stack) planned it:
test_upgrade.snapshot of that commit's tests/golden/a3ultra-fleet.json. (Not a release folder of
tests/previous_release: each of those must hold a network whose MTU today's plan sets, and a fleet's
manager sets none.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from test_upgrade import GOLDEN, _cuts, interrupted_problems, upgrade_problems
from trainstack.app.deploy import program, stack_file
from trainstack.app.deploy.stacks import raw_stack_config
from trainstack.app.plan import engine
from trainstack.app.plan.aliases import claims
from trainstack.infra import fleet as fleet_infra
from trainstack.infra import fleet_stack as fleet

FLEET = "a3ultra-fleet"
BEFORE = Path(__file__).resolve().parent / "data" / "upgrade" / f"{FLEET}-fdc50a7.json"
STACK_REFERENCE = "pulumi:pulumi:StackReference"


def _previous() -> dict[str, Any]:
    return json.loads(BEFORE.read_text())


def _resources() -> list[dict[str, Any]]:
    return json.loads((GOLDEN / f"{FLEET}.json").read_text())["resources"]


def _component(resources: list[dict[str, Any]]) -> dict[str, Any]:
    (found,) = [r for r in resources if r["type"] == fleet_infra.TYPE]
    return found


def test_every_resource_of_the_fleet_is_under_its_component() -> None:
    """Everything the fleet makes descends from its TrainingFleet, named `fleet-<role>`; only the
    StackReferences the stack reads its workers through (before anything is built) stay at the top."""
    resources = _resources()
    component = _component(resources)
    assert component["name"] == stack_file.FLEET_NAME
    parents = {r["urn"]: r["parent"] for r in resources}

    def under(urn: str) -> bool:
        while urn in parents:
            urn = parents[urn]
            if urn == component["urn"]:
                return True
        return False

    outside = sorted(r["urn"] for r in resources if r is not component and not under(r["urn"]))
    assert outside and all(STACK_REFERENCE in urn for urn in outside), outside
    assert all(r["name"].startswith(f"{stack_file.FLEET_NAME}-") for r in resources if r["parent"] == component["urn"])


def test_a_fleet_deployed_before_the_component_moves_under_it_replacing_nothing() -> None:
    """Every resource of the earlier fleet is taken over by today's (by the engine's matching of URNs
    and aliases, app/plan/aliases.py), of its type and physical identity; none is deleted."""
    previous, resources = _previous(), _resources()
    current = {r["urn"] for r in resources}
    moved = [urn for urn in previous if urn not in current]
    assert len(moved) == len([urn for urn in previous if STACK_REFERENCE not in urn])  # all but the references moved
    assert upgrade_problems(previous, resources) == []
    assert set(claims(previous, resources).was.values()) == set(previous)


def test_an_unfinished_first_up_of_the_moved_fleet_leaves_a_state_the_next_up_matches() -> None:
    """Each way the first `up` of the component can stop (after each registration, or at each failed
    step) saves a state whose every resource the next `up` finds again, by the resource that took it."""
    previous, resources = _previous(), _resources()
    first = claims(previous, resources)
    cuts = _cuts(resources)
    failures = {cut: found for cut, done in cuts if (found := interrupted_problems(previous, resources, first, done))}
    assert len(cuts) > len(resources) and not failures, next(iter(failures.items()), None)


def test_without_their_aliases_the_fleets_components_would_be_deleted_and_made_again() -> None:
    """The aliases carry the move: drop those of the component's children (the top-level resources
    they were) and the engine deletes each with its descendants."""
    previous, resources = _previous(), _resources()
    component = _component(resources)
    children = {r["urn"] for r in resources if r["parent"] == component["urn"]}
    unaliased = [{**r, "options": {**r["options"], "aliases": []}} if r["urn"] in children else r for r in resources]
    deleted = {p.removeprefix("deleted: ") for p in upgrade_problems(previous, unaliased) if p.startswith("deleted: ")}
    tops = {urn for urn, old in previous.items() if old["parent"] is None and STACK_REFERENCE not in urn}
    assert tops <= deleted and len(deleted) == len(previous) - len([u for u in previous if STACK_REFERENCE in u])


def test_pulumi_up_reads_a_fleets_workers_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The program's check reads each worker's contract; the TrainingFleet is built from the very
    workers it read, not from a second reading."""
    raw = raw_stack_config(FLEET)
    references = engine._references(FLEET, raw)
    ctx = engine._validate(FLEET, raw, references)
    read: list[list[fleet.Worker]] = []
    original = fleet.workers_of

    def counted(config: fleet.FleetStackConfig, outputs: dict[str, Any]) -> list[fleet.Worker]:
        read.append(original(config, outputs))
        return read[-1]

    built: list[fleet_infra.FleetContext] = []
    build = fleet_infra.build

    def recorded(ctx: fleet_infra.FleetContext, references: Any, place: Any) -> dict[str, Any]:
        built.append(ctx)
        return build(ctx, references, place)

    monkeypatch.setattr(fleet, "workers_of", counted)
    monkeypatch.setattr(fleet_infra, "build", recorded)
    rendered = engine.execute(ctx, raw, program.main, references)
    (workers,) = read
    (made,) = built
    assert len(made.workers) == len(workers) > 1 and all(a is b for a, b in zip(made.workers, workers, strict=True))
    assert rendered.outputs["workers"].keys() == {w.config.name for w in workers}
