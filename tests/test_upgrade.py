"""An upgrade of trainstack replaces nothing in a live stack.

`tests/previous_release/<release>/<stack>.json` holds every resource of each shipped stack as an
earlier release planned it (URN, type, and the inputs that name it physically). Each must reach a
resource of today's plan (the golden plan, which test_plans keeps equal to the program's) by
its URN or by an alias, of the same type, with the same physical identity: a renamed URN without
an alias would make `pulumi up` delete and recreate it, and a changed physical name replaces it.
Every kept release is checked, so a user may upgrade from any of them straight to today's.

Make a snapshot of a release: `python tests/test_upgrade.py <git ref>` (from the repository root).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers import merge
from trainstack.app.deploy.stacks import raw_stack_config
from trainstack.app.plan import engine, plan
from trainstack.app.plan.aliases import Claims, Saved, claims, normalize

TESTS = Path(__file__).resolve().parent
PREVIOUS = TESTS / "previous_release"
GOLDEN = TESTS / "golden"
# Inputs that name a resource in its cloud or cluster: a change to any of them replaces it
# (GCP: ForceNew names, project, location, IAM member and role; Kubernetes: metadata name and
# namespace; Helm: the release's name and namespace).
IDENTITY = (
    "name",
    "accountId",
    "repositoryId",
    "secretId",
    "project",
    "location",
    "zone",
    "region",
    "cluster",
    "bucket",
    "repository",
    "service",
    "role",
    "member",
    "namespace",
)


# Resources a release deletes on purpose (the URN past `<stack>::trainstack::`), each with its
# reason: `pulumi up` deletes them and replaces nothing.
REMOVED = {
    "trainstack:gcp:NodeServiceAccount$gcp:projects/iAMMember:IAMMember::artifactregistry.reader": "least privilege: nodes may pull from the stack's own repository (a grant on it), no longer from every repository of the project",
}


# Shipped stack files whose own values changed since a release (the user's data, not trainstack's
# naming), each with the values the release shipped and the reason: upgraded with the values
# it was deployed with, such a stack must replace nothing.
CONFIG_CHANGED = {
    ("5cfca48", "a3mega-gpt3-175b-fleet-job"): (
        {"trainstack:workload": {"name": "gpt3-175b"}},
        "the fleet job and the capacity job were both named gpt3-175b and collided on a3mega-capacity, in one namespace",
    ),
    **{
        (release, "a4x-llama3-70b"): (
            {"trainstack:gpuPool": {"networking": "multi-network"}},
            "the example moved to DRANET as Cluster Toolkit's A4X blueprint did (c765092): a replaced pool, the README's path",
        )
        for release in ("5cfca48", "c2f7246")
    },
}


def identity(resource: dict[str, Any]) -> dict[str, Any]:
    """What names `resource` physically (nothing for a component, which exists only in the state)."""
    if not resource["custom"]:
        return {}
    inputs = resource["inputs"]
    found = {key: inputs[key] for key in IDENTITY if key in inputs}
    metadata = inputs.get("metadata")
    if isinstance(metadata, dict):
        found["metadata"] = {key: metadata[key] for key in ("name", "namespace") if key in metadata}
    return found


def snapshot(plan: dict[str, Any]) -> dict[str, Any]:
    """Each resource of `plan` as its state keeps it: type, custom, physical identity and parent
    (null: the stack), which decides the URN the engine saves it under while it moves."""
    urns = {r["urn"] for r in plan["resources"]}
    return {
        r["urn"]: {"type": r["type"], "custom": r["custom"], "identity": identity(r), "parent": r["parent"] if r["parent"] in urns else None}
        for r in plan["resources"]
    }


def releases() -> list[str]:
    return sorted(p.name for p in PREVIOUS.iterdir() if p.is_dir())


def snapshots() -> list[tuple[str, str]]:
    """(release, stack) of every kept snapshot."""
    return [(release, p.stem) for release in releases() for p in sorted((PREVIOUS / release).glob("*.json"))]


def test_every_kept_release_has_stacks_shipped_today() -> None:
    for release in releases():
        stacks = {p.stem for p in (PREVIOUS / release).glob("*.json")}
        assert stacks and stacks <= {p.stem for p in GOLDEN.glob("*.json")}, release


def upgrade_problems(previous: dict[str, Any], resources: list[dict[str, Any]]) -> list[str]:
    """What `pulumi up` from the state `previous` to the plan `resources` would refuse, delete or
    replace: the engine's matching of new resources to old ones (app/plan/aliases.py, a port of
    pulumi's step_generator.go), then each match's type and physical identity."""
    found = claims(previous, resources)
    problems = [f"refused: {line}" for line in found.invalid]
    problems += [f"deleted: {urn}" for urn in found.deleted if urn.split("::trainstack::", 1)[1] not in REMOVED]
    for new in resources:
        urn = found.was.get(new["urn"])
        if urn is None:
            continue
        old = previous[urn]
        if new["type"] != old["type"]:
            problems.append(f"type changed: {urn} ({old['type']}) is now {new['urn']} ({new['type']})")
        elif identity(new) != old["identity"]:
            problems.append(f"replaced: {urn}: {old['identity']} -> {identity(new)}")
    return problems


@pytest.mark.parametrize(("release", "stack"), snapshots())
def test_every_resource_of_the_previous_release_is_kept(release: str, stack: str) -> None:
    """Each new resource takes over at most one old one (the engine's rule), none is taken twice,
    every old one is taken, and by a resource of its type and physical identity."""
    previous = json.loads((PREVIOUS / release / f"{stack}.json").read_text())
    if (release, stack) in CONFIG_CHANGED:
        values, _reason = CONFIG_CHANGED[release, stack]
        resources = plan.from_rendered(engine.run(stack, merge(raw_stack_config(stack), values))).to_dict()["resources"]
    else:
        resources = json.loads((GOLDEN / f"{stack}.json").read_text())["resources"]
    problems = upgrade_problems(previous, resources)
    assert not problems, "\n".join(problems)


def test_a_changed_shipped_value_is_why_its_stack_differs() -> None:
    """Each CONFIG_CHANGED entry is needed: today's shipped file, unlike the release's values,
    changes that release's resources (else the exemption hides nothing and must go)."""
    for release, stack in CONFIG_CHANGED:
        previous = json.loads((PREVIOUS / release / f"{stack}.json").read_text())
        assert upgrade_problems(previous, json.loads((GOLDEN / f"{stack}.json").read_text())["resources"]), (release, stack)


# ---------------------------------------------------------------------------------------------
# A first `up` of the new release that does not finish: interrupted (Ctrl-C, a lost connection, a
# program error) or failed (any failed step cancels the deployment: pulumi/pulumi@1b59498
# pkg/resource/deploy/step_executor.go 403-460). The engine saves what finished and the old states
# of the rest, normalized (app/plan/aliases.py `normalize`); the next `up` must find every one of
# them again, each by the resource that took it the first time.


def _waits_on(resources: list[dict[str, Any]]) -> dict[str, set[str]]:
    """What each resource's registration waits for: its parent, its dependencies and its provider
    (the SDK awaits their URNs, which the engine returns once their steps finish)."""
    urns = {r["urn"] for r in resources}
    return {r["urn"]: {u for u in (r["parent"], r["provider"], *r["dependencies"]) if u in urns} for r in resources}


def _registration_order(waits: dict[str, set[str]]) -> list[str]:
    """One order in which the engine can finish the plan's steps: each after what it waits for."""
    order: list[str] = []
    placed: set[str] = set()
    while len(order) < len(waits):
        ready = sorted(u for u, before in waits.items() if u not in placed and before <= placed)
        order += ready
        placed.update(ready)
    return order


def _cuts(resources: list[dict[str, Any]]) -> list[tuple[str, set[str]]]:
    """Each way the first `up` stops, with the resources whose steps finished: after each
    registration of one order (interrupted), and everything but one step and what waits on it
    (that step failed)."""
    waits = _waits_on(resources)
    order = _registration_order(waits)
    cuts = [(f"interrupted after {k} of {len(order)}", set(order[:k])) for k in range(1, len(order))]
    blocked = {urn: {urn} for urn in order}
    for urn in reversed(order):  # every resource after what it waits on: dependents come later
        for other in order:
            if urn in waits[other]:
                blocked[urn] |= blocked[other]
    return cuts + [(f"{urn} failed", set(order) - blocked[urn]) for urn in order]


def interrupted_problems(previous: dict[str, Any], resources: list[dict[str, Any]], first: Claims, done: set[str]) -> list[str]:
    """What the next `up` does wrong after a first `up` whose steps `done` finished: a saved
    resource it does not find (deleted and created again), finds by another resource than the
    first `up` did, or a snapshot the engine refuses to write."""
    plan = {r["urn"]: r for r in resources}
    by_depth = sorted(previous, key=lambda urn: (urn.count("$"), urn))  # parents first
    finished = {first.was[urn] for urn in done if urn in first.was}
    taker = {old: new for new, old in first.was.items()}
    states = [
        Saved(urn, plan[urn]["parent"] if plan[urn]["parent"] in plan else None, first.was.get(urn) if first.was.get(urn, urn) != urn else None)
        for urn in sorted(done)
    ]
    states += [Saved(urn, previous[urn]["parent"]) for urn in by_depth if urn not in finished]
    expected = [*sorted(done), *(taker.get(urn) for urn in by_depth if urn not in finished)]
    try:
        saved = normalize(states)
    except ValueError as error:
        return [f"not saved: {error}"]
    again = claims([s.urn for s in saved], resources)
    found = {old: new for new, old in again.was.items()}
    problems = [f"refused: {line}" for line in again.invalid]
    for state, want in zip(saved, expected, strict=True):
        if found.get(state.urn) != want:
            problems.append(
                f"{state.urn}: {'deleted' if found.get(state.urn) is None else 'taken by ' + found[state.urn]}" + (f", not by {want}" if want else "")
            )
    return problems


@pytest.mark.parametrize(("release", "stack"), snapshots())
def test_an_unfinished_first_up_leaves_a_state_the_next_up_matches(release: str, stack: str) -> None:
    """Every resource, in every snapshot a first `up` from `release` can leave (stopped after each
    registration, or failed at each single step), is found again exactly once."""
    previous = json.loads((PREVIOUS / release / f"{stack}.json").read_text())
    resources = json.loads((GOLDEN / f"{stack}.json").read_text())["resources"]
    first = claims(previous, resources)
    failures = {cut: found for cut, done in _cuts(resources) if (found := interrupted_problems(previous, resources, first, done))}
    shown = [f"{cut}:\n  " + "\n  ".join(found[:5]) for cut, found in list(failures.items())[:3]]
    assert not failures, f"{len(failures)} cuts leave resources the next up does not find, e.g.\n" + "\n".join(shown)


def _moved(resources: list[dict[str, Any]], role: str) -> dict[str, Any]:
    (found,) = [r for r in resources if r["name"] == f"platform-{role}" and not r["custom"]]
    return found


def test_a_component_moved_without_its_alias_is_deleted_with_its_children() -> None:
    """The check is the engine's: drop the alias of the cluster component under the platform and
    the cluster, its node pools' parent, and everything derived from it are deleted and created."""
    previous = json.loads((PREVIOUS / "630c728" / "a3ultra-405b.json").read_text())
    resources = json.loads((GOLDEN / "a3ultra-405b.json").read_text())["resources"]
    cluster = _moved(resources, "cluster")
    broken = [{**r, "options": {**r["options"], "aliases": []}} if r is cluster else r for r in resources]
    problems = upgrade_problems(previous, broken)
    assert "deleted: urn:pulumi:a3ultra-405b::trainstack::trainstack:gcp:GkeCluster::cluster" in problems
    assert "deleted: urn:pulumi:a3ultra-405b::trainstack::trainstack:gcp:GkeCluster$gcp:container/cluster:Cluster::cluster" in problems


def test_two_resources_claiming_one_old_resource_are_refused() -> None:
    """An alias onto an old resource another new resource already takes over is the engine's
    duplicate-alias error, not a second match."""
    previous = json.loads((PREVIOUS / "630c728" / "a3ultra-405b.json").read_text())
    resources = json.loads((GOLDEN / "a3ultra-405b.json").read_text())["resources"]
    cluster, network = _moved(resources, "cluster"), _moved(resources, "network")
    stolen = cluster["options"]["aliases"][0]
    broken = [{**r, "options": {**r["options"], "aliases": [stolen]}} if r is network else r for r in resources]
    problems = upgrade_problems(previous, broken)
    assert any(p.startswith("refused:") and stolen in p for p in problems), problems


def test_the_check_sees_a_rename_without_an_alias() -> None:
    """The mapping is not vacuous: the previous release's URNs are not all still current."""
    renamed = 0
    for release, stack in snapshots():
        previous = json.loads((PREVIOUS / release / f"{stack}.json").read_text())
        current = {r["urn"] for r in json.loads((GOLDEN / f"{stack}.json").read_text())["resources"]}
        renamed += len(set(previous) - current)
    assert renamed > 0


def main(ref: str) -> None:
    """Write the snapshot of every golden plan at git `ref` into previous_release/<ref>/."""
    root = TESTS.parent
    folder = PREVIOUS / ref
    folder.mkdir(exist_ok=True)
    for golden in sorted(GOLDEN.glob("*.json")):
        path = golden.relative_to(root).as_posix()
        shown = subprocess.run(["git", "-C", str(root), "show", f"{ref}:{path}"], capture_output=True, text=True, check=False)
        if shown.returncode == 0:
            (folder / golden.name).write_text(json.dumps(snapshot(json.loads(shown.stdout)), indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])


@pytest.mark.parametrize(("release", "stack"), snapshots())
def test_no_live_network_has_its_mtu_changed(release: str, stack: str) -> None:
    """A network's MTU changes in place (terraform-provider-google 017d2f5
    google/services/compute/resource_compute_network.go `mtu`: not ForceNew), by a PATCH of the live
    VPC, which GCP says never to do while VMs run on it (cloud.google.com/vpc/docs/
    change-mtu-vpc-network). Every network a kept release made that today's plan gives an MTU
    ignores changes to it, so `pulumi up` leaves the live one as it was made."""
    changed = [r["urn"] for r in _live_networks_with_an_mtu(release, stack) if "mtu" not in r["options"].get("ignoreChanges", [])]
    assert changed == []


def test_every_kept_release_has_a_live_network_the_mtu_check_sees() -> None:
    """The check above is not vacuous: each kept release made networks today's plan gives an MTU."""
    seen = {release for release, stack in snapshots() if _live_networks_with_an_mtu(release, stack)}
    assert seen == set(releases())


def _live_networks_with_an_mtu(release: str, stack: str) -> list[dict[str, Any]]:
    """Today's networks of `stack` that `release` made (by URN or alias), where today's plan sets an MTU."""
    previous = json.loads((PREVIOUS / release / f"{stack}.json").read_text())
    resources = json.loads((GOLDEN / f"{stack}.json").read_text())["resources"]
    live = set(claims(previous, resources).was)
    return [r for r in resources if r["type"] == "gcp:compute/network:Network" and r["urn"] in live and "mtu" in r["inputs"]]


# ---------------------------------------------------------------------------------------------
# What a machine type brings (its NIC networks, Networks, GPUDirect installers) is keyed by the machine.

ROLES_BY_MACHINE = ("gpu-nics", "gpu-networks", "gpudirect")


def _two_machines(first: bool = True) -> list[dict[str, Any]]:
    """A platform with A3 Mega pools and an A3 High pool (each with its NICs); `first=False`: the
    A3 Mega pools, the first machine type, removed."""
    raw = raw_stack_config("a3mega-capacity-platform")
    cluster = {k: v for k, v in raw["trainstack:cluster"].items() if k != "admitFleets"}
    high = {"name": "a3-high-spot", "machineType": "a3-highgpu-8g", "provisioning": "spot", "autoscaling": {"minNodes": 0, "maxNodes": 4}}
    pools = [*(raw["trainstack:gpuPools"] if first else []), {**high, "reservation": {"affinity": "none"}}]
    return plan.from_rendered(engine.run("two-machines", {**raw, "trainstack:cluster": cluster, "trainstack:gpuPools": pools}, {})).to_dict()["resources"]


def test_removing_the_first_machine_type_keeps_the_other_machines_components() -> None:
    """The other machine's components keep their URNs (they were renamed to the bare role before).
    Not their NIC children: the first NIC family's VPC and Network names are unprefixed
    (StackConfig.nic_families), so a second family's physical names change when it becomes first."""
    both, after = _two_machines(), _two_machines(first=False)
    high = {r["urn"] for r in after if not r["custom"] and any(r["urn"].endswith(f"::platform-{role}-a3-highgpu-8g") for role in ROLES_BY_MACHINE)}
    assert len(high) == len(ROLES_BY_MACHINE) and high <= {r["urn"] for r in both}


def test_a_stack_whose_first_machine_was_unsuffixed_moves_by_its_aliases() -> None:
    """The live state of a release that named the first machine type's components by their bare
    role (`platform-gpu-nics`, ...): every one is taken over, with its descendants, by the engine's
    matching; without the aliases they would be deleted and created."""
    resources = _two_machines()

    def positional(urn: str) -> str:
        for role in ROLES_BY_MACHINE:
            urn = urn.replace(f"{role}-a3-megagpu-8g", role)
        return urn

    earlier = snapshot({"resources": [{**r, "urn": positional(r["urn"]), "parent": r["parent"] and positional(r["parent"])} for r in resources]})
    assert set(earlier) != {r["urn"] for r in resources}
    assert upgrade_problems(earlier, resources) == []
    moved = {r["urn"] for r in resources if positional(r["urn"]) != r["urn"] and not r["custom"]}
    unaliased = [{**r, "options": {**r["options"], "aliases": []}} if r["urn"] in moved else r for r in resources]
    assert any(p.startswith("deleted:") for p in upgrade_problems(earlier, unaliased))
