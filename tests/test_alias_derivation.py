"""The plan records the old URNs the engine derives for a child from its parent's alias
(app/plan/recorder.py `engine_aliases`, a port of pulumi/pulumi pkg/resource/deploy/
step_generator.go `generateAliases`), so tests/test_upgrade.py sees what `pulumi up` matches."""

from __future__ import annotations

import json
from pathlib import Path

from trainstack.app.plan.recorder import engine_aliases

GOLDEN = Path(__file__).resolve().parent / "golden"
PARENT = "urn:pulumi:stack::project::test:resource:type::myres"
CHILD = "urn:pulumi:stack::project::test:resource:type$test:resource:child::myres-child"
OWN = ["urn:pulumi:stack::project::test:resource:type$test:resource:child::myres-child2"]


def test_a_parent_alias_of_another_type_moves_the_child_and_its_aliases() -> None:
    """step_generator_test.go TestGenerateAliases, "child alias (name), parent alias (type)" (pulumi/pulumi@1b59498)."""
    parent_alias = "urn:pulumi:stack::project::test:resource:type2::myres"
    assert engine_aliases(OWN, CHILD, PARENT, [parent_alias]) == [
        OWN[0],
        "urn:pulumi:stack::project::test:resource:type2$test:resource:child::myres-child",
        "urn:pulumi:stack::project::test:resource:type2$test:resource:child::myres-child2",
    ]


def test_a_parent_alias_of_another_name_renames_the_child_by_its_prefix() -> None:
    """The same test's "child alias (name), parent alias (name)"."""
    parent_alias = "urn:pulumi:stack::project::test:resource:type::myres2"
    assert engine_aliases(OWN, CHILD, PARENT, [parent_alias]) == [
        OWN[0],
        "urn:pulumi:stack::project::test:resource:type$test:resource:child::myres2-child",
        "urn:pulumi:stack::project::test:resource:type$test:resource:child::myres2-child2",
    ]


def test_without_a_parent_alias_only_the_own_aliases_remain() -> None:
    assert engine_aliases(OWN, CHILD, PARENT, []) == OWN


def test_a_moved_stack_reaches_its_grandchildren_only_through_derived_aliases() -> None:
    """The cluster under the platform component: its old URN is no alias the program writes
    (the GkeCluster component is aliased, not its children), only one the engine derives."""
    resources = json.loads((GOLDEN / "a3ultra-405b.json").read_text())["resources"]
    (cluster,) = [r for r in resources if r["type"] == "gcp:container/cluster:Cluster"]
    old = "urn:pulumi:a3ultra-405b::trainstack::trainstack:gcp:GkeCluster$gcp:container/cluster:Cluster::cluster"
    assert cluster["urn"] != old and old in cluster["options"]["aliases"]
    (component,) = [r for r in resources if r["urn"] == cluster["parent"]]
    assert "urn:pulumi:a3ultra-405b::trainstack::trainstack:gcp:GkeCluster::cluster" in component["options"]["aliases"]
