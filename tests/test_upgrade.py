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
    return {r["urn"]: {"type": r["type"], "custom": r["custom"], "identity": identity(r)} for r in plan["resources"]}


def releases() -> list[str]:
    return sorted(p.name for p in PREVIOUS.iterdir() if p.is_dir())


def snapshots() -> list[tuple[str, str]]:
    """(release, stack) of every kept snapshot."""
    return [(release, p.stem) for release in releases() for p in sorted((PREVIOUS / release).glob("*.json"))]


def test_every_kept_release_has_stacks_shipped_today() -> None:
    for release in releases():
        stacks = {p.stem for p in (PREVIOUS / release).glob("*.json")}
        assert stacks and stacks <= {p.stem for p in GOLDEN.glob("*.json")}, release


@pytest.mark.parametrize(("release", "stack"), snapshots())
def test_every_resource_of_the_previous_release_is_kept(release: str, stack: str) -> None:
    previous = json.loads((PREVIOUS / release / f"{stack}.json").read_text())
    resources = json.loads((GOLDEN / f"{stack}.json").read_text())["resources"]
    by_urn = {r["urn"]: r for r in resources}
    by_alias: dict[str, dict[str, Any]] = {}
    for r in resources:
        for alias in r["options"].get("aliases", []):
            assert alias not in by_urn, f"{r['urn']} aliases {alias}, which another resource still is"
            assert alias not in by_alias, f"{r['urn']} and {by_alias[alias]['urn']} both alias {alias}"
            by_alias[alias] = r
    lost, replaced = [], []
    for urn, old in sorted(previous.items()):
        new = by_urn.get(urn) or by_alias.get(urn)
        if new is None and urn.split("::trainstack::", 1)[1] in REMOVED:
            continue
        if new is None or new["type"] != old["type"]:
            lost.append(urn)
        elif identity(new) != old["identity"]:
            replaced.append(f"{urn}: {old['identity']} -> {identity(new)}")
    assert not lost, "no resource (nor alias) of today's plan is:\n" + "\n".join(lost)
    assert not replaced, "physical identity changed:\n" + "\n".join(replaced)


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
    previous = json.loads((PREVIOUS / release / f"{stack}.json").read_text())
    resources = json.loads((GOLDEN / f"{stack}.json").read_text())["resources"]
    live = {r["urn"] for r in resources if r["urn"] in previous or set(r["options"].get("aliases", [])) & set(previous)}
    for r in resources:
        if r["type"] == "gcp:compute/network:Network" and r["urn"] in live and "mtu" in r["inputs"]:
            assert "mtu" in r["options"].get("ignoreChanges", []), r["urn"]
