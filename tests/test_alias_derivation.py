"""The engine's matching of new resources to the old state (app/plan/aliases.py), checked against
pulumi/pulumi@1b5949891b3cefcb9974752b24a5ecef0acc86c8's own cases: pkg/resource/deploy/
step_generator_test.go `TestGenerateAliases` and pkg/engine/lifecycletest/alias_test.go
`TestDuplicatesDueToAliases`; the snapshot an interrupted update writes (snapshot.go `NormalizeURNReferences`); and the plan records URNs as the engine makes them (alias.go `CreateURN`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from trainstack.app.plan.aliases import Saved, candidates, claims, create_urn, normalize

GOLDEN = Path(__file__).resolve().parent / "golden"
PARENT = "urn:pulumi:stack::project::test:resource:type::myres"
CHILD = "urn:pulumi:stack::project::test:resource:type$test:resource:child::myres-child"
OWN = ["urn:pulumi:stack::project::test:resource:type$test:resource:child::myres-child2"]
A = "urn:pulumi:test::test::pkgA:m:typA::resA"
B = "urn:pulumi:test::test::pkgA:m:typA::resB"


def resource(urn: str, aliases: list[str] | None = None, parent: str | None = None) -> dict[str, Any]:
    return {"urn": urn, "parent": parent, "options": {"aliases": aliases} if aliases else {}}


def test_a_parent_alias_of_another_type_moves_the_child_and_its_aliases() -> None:
    """`TestGenerateAliases`, "child alias (name), parent alias (type)"."""
    parent_alias = "urn:pulumi:stack::project::test:resource:type2::myres"
    assert candidates(CHILD, OWN, PARENT, parent_alias) == [
        OWN[0],
        "urn:pulumi:stack::project::test:resource:type2$test:resource:child::myres-child",
        "urn:pulumi:stack::project::test:resource:type2$test:resource:child::myres-child2",
    ]


def test_a_parent_alias_of_another_name_renames_the_child_by_its_prefix() -> None:
    """The same test's "child alias (name), parent alias (name)"."""
    parent_alias = "urn:pulumi:stack::project::test:resource:type::myres2"
    assert candidates(CHILD, OWN, PARENT, parent_alias) == [
        OWN[0],
        "urn:pulumi:stack::project::test:resource:type$test:resource:child::myres2-child",
        "urn:pulumi:stack::project::test:resource:type$test:resource:child::myres2-child2",
    ]


def test_a_parent_found_under_its_own_urn_derives_nothing() -> None:
    assert candidates(CHILD, OWN, PARENT, None) == OWN


def test_the_own_urn_wins_over_an_alias() -> None:
    """A resource whose URN is in the state takes it, though an alias names another old one."""
    found = claims([A, B], [resource(B, [A])])
    assert found.was == {B: B} and found.deleted == [A] and not found.invalid


def test_an_alias_takes_the_first_old_resource_it_names() -> None:
    old_c = "urn:pulumi:test::test::pkgA:m:typA::resC"
    found = claims([A, old_c], [resource(B, [old_c, A])])
    assert found.was == {B: old_c} and found.deleted == [A]


def test_an_alias_onto_a_resource_still_registered_is_refused_in_either_order() -> None:
    """`TestDuplicatesDueToAliases`: A registered, and B aliasing A, is an error whichever comes first."""
    for plan in ([resource(A), resource(B, [A])], [resource(B, [A]), resource(A)]):
        assert claims([A], plan).invalid, plan


def test_two_aliases_onto_one_old_resource_are_refused() -> None:
    c = "urn:pulumi:test::test::pkgA:m:typA::resC"
    found = claims([A], [resource(B, [A]), resource(c, [A])])
    assert len(found.invalid) == 1 and A in found.invalid[0]


def test_a_child_follows_the_alias_its_parent_was_found_by() -> None:
    """Only the alias the parent matched moves its children (`sg.aliases` holds that one)."""
    new_parent = "urn:pulumi:s::p::t:index:Platform::platform"
    component = "urn:pulumi:s::p::t:index:Platform$t:gcp:Cluster::platform-cluster"
    child = "urn:pulumi:s::p::t:index:Platform$t:gcp:Cluster$gcp:Cluster::platform-cluster"
    old_component, old_child = "urn:pulumi:s::p::t:gcp:Cluster::cluster", "urn:pulumi:s::p::t:gcp:Cluster$gcp:Cluster::cluster"
    plan = [resource(new_parent), resource(component, ["urn:pulumi:s::p::t:gcp:Cluster::gone", old_component], new_parent), resource(child, None, component)]
    found = claims([old_component, old_child], plan)
    assert found.was == {component: old_component, child: old_child} and not found.deleted


def test_urns_carry_the_whole_parent_chain() -> None:
    """`CreateURN`: a grandchild's type is its parent's qualified type, `$`, its own."""
    assert create_urn("c", "x:y:Z", "urn:pulumi:s::p::a:b:C$d:e:F::f", "s", "p") == "urn:pulumi:s::p::a:b:C$d:e:F$x:y:Z::c"
    assert create_urn("c", "x:y:Z", "urn:pulumi:s::p::pulumi:pulumi:Stack::p-s", "s", "p") == "urn:pulumi:s::p::x:y:Z::c"


def test_a_moved_stack_reaches_its_grandchildren_only_through_derived_aliases() -> None:
    """The cluster under the platform component: its old URN is no alias the program writes
    (the GkeCluster component is aliased, not its children), only one the engine derives."""
    resources = json.loads((GOLDEN / "a3ultra-405b.json").read_text())["resources"]
    (cluster,) = [r for r in resources if r["type"] == "gcp:container/cluster:Cluster"]
    assert cluster["urn"] == (
        "urn:pulumi:a3ultra-405b::trainstack::trainstack:index:TrainingPlatform$trainstack:gcp:GkeCluster$gcp:container/cluster:Cluster::platform-cluster"
    )
    old = "urn:pulumi:a3ultra-405b::trainstack::trainstack:gcp:GkeCluster$gcp:container/cluster:Cluster::cluster"
    assert old not in cluster["options"].get("aliases", [])
    old_component = "urn:pulumi:a3ultra-405b::trainstack::trainstack:gcp:GkeCluster::cluster"
    assert claims([old_component, old], resources).was[cluster["urn"]] == old


def test_a_saved_child_follows_its_moved_parent_under_its_own_old_name() -> None:
    """pulumi/pulumi@1b5949891b3cefcb9974752b24a5ecef0acc86c8 pkg/engine/lifecycletest/alias_test.go
    `TestSplitUpdateComponentAliases`: resB moves from under resA to the top by an alias, the update
    fails before resC registers; the snapshot keeps resA and saves resC under resB's new type."""
    old_b, new_b = "urn:pulumi:test::test::pkgA:m:typA$pkgA:m:typB::resB", "urn:pulumi:test::test::pkgA:m:typB::resB"
    old_c = "urn:pulumi:test::test::pkgA:m:typA$pkgA:m:typB$pkgA:m:typC::resC"
    saved = normalize([Saved(new_b, None, alias=old_b), Saved(A, None), Saved(old_c, old_b)])
    assert saved == [Saved(new_b, None), Saved(A, None), Saved("urn:pulumi:test::test::pkgA:m:typB$pkgA:m:typC::resC", new_b)]


def test_a_grandchild_follows_its_parent_saved_under_a_new_type() -> None:
    """The rewrite carries down: a child whose own parent was only rewritten (not registered) takes
    that rewritten URN's type."""
    top_old, top_new = "urn:pulumi:s::p::t:m:Top::top", "urn:pulumi:s::p::t:m:Outer$t:m:Top::outer-top"
    mid = "urn:pulumi:s::p::t:m:Top$t:m:Mid::top-mid"
    leaf = "urn:pulumi:s::p::t:m:Top$t:m:Mid$t:m:Leaf::top-mid-leaf"
    saved = normalize([Saved(top_new, "urn:pulumi:s::p::t:m:Outer::outer", alias=top_old), Saved(mid, top_old), Saved(leaf, mid)])
    assert [s.urn for s in saved[1:]] == [
        "urn:pulumi:s::p::t:m:Outer$t:m:Top$t:m:Mid::top-mid",
        "urn:pulumi:s::p::t:m:Outer$t:m:Top$t:m:Mid$t:m:Leaf::top-mid-leaf",
    ]
    assert saved[2].parent == saved[1].urn


def test_two_new_states_taking_one_old_urn_cannot_be_saved() -> None:
    with pytest.raises(ValueError, match="aliased to the same"):
        normalize([Saved(A, None, alias=B), Saved("urn:pulumi:test::test::pkgA:m:typA::resC", None, alias=B)])
