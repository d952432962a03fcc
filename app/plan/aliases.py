"""Which resource of a stack's state each resource of a new plan takes over, as the engine decides it.

A port of pulumi/pulumi@1b5949891b3cefcb9974752b24a5ecef0acc86c8 pkg/resource/deploy/step_generator.go
(`generateAliases`, `inheritedChildAlias`, `getOldResource`) and sdk/go/common/resource/alias.go
(`CreateURN`). For each new resource, in an order that registers a parent before its children:

- its candidates are its own aliases, then, if its parent took over an old resource by an alias, the
  child's URN and each own alias moved under that old parent (`inheritedChildAlias`);
- it takes the old resource under its own URN if there is one, else under the first candidate there is;
- it is refused (`invalid`, the engine's duplicate-alias errors) when an earlier resource already took
  its URN by an alias, or when the old resource it takes by an alias is another new resource's URN or
  was already taken by an alias;
- every old resource nothing took is deleted.

The first two refusals depend only on which resources exist, not on their order, so a plan's order
(parents first) decides the same as the engine's.

What an update that stops part way leaves for the next one to match is the snapshot the engine
writes, ported from pkg/resource/deploy/snapshot.go `NormalizeURNReferences` (`normalize`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


def create_urn(name: str, kind: str, parent: str | None, stack: str, project: str) -> str:
    """The URN the engine gives a resource: under `parent` its whole qualified type, then `$kind`
    (alias.go `CreateURN`); at the top (no parent, or the stack) `<kind>::<name>`."""
    if parent and _qualified_type(parent) != "pulumi:pulumi:Stack":
        return f"{parent.rsplit('::', 1)[0]}${kind}::{name}"
    return f"urn:pulumi:{stack}::{project}::{kind}::{name}"


def _qualified_type(urn: str) -> str:
    return urn.split("::")[2]


def _type(urn: str) -> str:
    """A URN's own type (`URN.Type()`): the last of its qualified type."""
    return _qualified_type(urn).rsplit("$", 1)[-1]


def _name(urn: str) -> str:
    return urn.split("::", 3)[3]


def inherited_alias(child_type: str, child_name: str, parent_name: str, parent_alias: str) -> str:
    """The old URN of a child whose parent took over `parent_alias`: under the parent's old
    qualified type, its name's `<parent name>` prefix swapped for the parent's old name
    (`inheritedChildAlias`)."""
    stack, project = parent_alias.split("::")[:2]
    name = _name(parent_alias) + child_name.removeprefix(parent_name) if child_name.startswith(parent_name) else child_name
    return f"{stack}::{project}::{_qualified_type(parent_alias)}${child_type}::{name}"


def candidates(urn: str, own: list[str], parent: str | None, parent_alias: str | None) -> list[str]:
    """The old URNs, in order, the engine looks the resource `urn` up under after its own URN:
    its `own` aliases, then each moved under the old URN its parent took (`generateAliases`)."""
    found = dict.fromkeys(own)
    if parent is not None and parent_alias is not None:
        for old in (urn, *own):
            found.setdefault(inherited_alias(_type(old), _name(old), _name(parent), parent_alias))
    return list(found)


@dataclass
class Claims:
    """What an update does with the old state: `was` maps each new URN to the old URN it takes
    over; `invalid` lists the engine's refusals; `deleted` the old URNs nothing took."""

    was: dict[str, str] = field(default_factory=dict)
    invalid: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)


def claims(olds: Iterable[str], resources: Iterable[Mapping[str, Any]]) -> Claims:
    """How the engine matches `resources` (a plan's: `urn`, `parent`, `options.aliases`, the
    resource's own aliases in the order the program gave them) to the old state's URNs `olds`
    (`getOldResource`, each resource after its parent)."""
    old = set(olds)
    plan = {r["urn"]: r for r in resources}
    result = Claims()
    aliased: dict[str, str] = {}  # old URN -> the new URN that took it by an alias (`sg.aliased`)
    matched: dict[str, str] = {}  # new URN -> the alias it took its old by (`sg.aliases`)
    for urn in _parents_first(plan):
        resource = plan[urn]
        parent = resource.get("parent") if resource.get("parent") in plan else None
        if urn in aliased:
            result.invalid.append(f"{urn} is registered, but {aliased[urn]} already took it over by an alias")
        for candidate in [urn, *candidates(urn, (resource.get("options") or {}).get("aliases", []), parent, matched.get(parent or ""))]:
            if candidate not in old:
                continue
            if candidate != urn:
                if candidate in plan:
                    result.invalid.append(f"{urn} aliases {candidate}, which is registered itself")
                if candidate in aliased:
                    result.invalid.append(f"{urn} aliases {candidate}, which {aliased[candidate]} already took over")
                aliased[candidate] = urn
                matched[urn] = candidate
            result.was[urn] = candidate
            break
    taken = set(result.was.values())
    result.deleted = sorted(old - taken)
    return result


@dataclass(frozen=True)
class Saved:
    """A resource in a snapshot: its URN, its parent's (None: the stack) and, for the new state of a
    resource that took over an old one by an alias, that old URN (a new state's `Aliases`: only the
    one it matched, step_generator.go `generateResourceSteps`)."""

    urn: str
    parent: str | None
    alias: str | None = None


def normalize(states: Sequence[Saved]) -> list[Saved]:
    """The snapshot the engine writes (`NormalizeURNReferences`, run on every write:
    pkg/backend/snapshot.go `Deployment`) from `states`: the new states of the steps that finished,
    then the old states no finished step replaced, in the previous snapshot's order (each after its
    parent; backend/snapshot.go `Snap`). An old state whose parent took a new URN is saved under the
    parent's new qualified type with its own old type and name, and its parent reference follows;
    aliases are dropped (state_builder.go `withUpdatedAliases`). The engine's own case is
    lifecycletest/alias_test.go `TestSplitUpdateComponentAliases`. Raises ValueError where the engine
    refuses to write: two new states took one old URN. Left out: the same rewrite of dependencies
    and provider references, which matching does not read."""
    aliased: dict[str, str] = {}
    for state in states:
        if state.alias is not None:
            if aliased.get(state.alias, state.urn) != state.urn:
                raise ValueError(f"two resources ({aliased[state.alias]} and {state.urn}) aliased to the same: {state.alias}")
            aliased[state.alias] = state.urn
        parent = aliased.get(state.parent or "")
        if parent is not None and _qualified_type(parent) != "pulumi:pulumi:Stack":
            stack, project = state.urn.split("::")[:2]
            aliased[state.urn] = f"{stack}::{project}::{_qualified_type(parent)}${_type(state.urn)}::{_name(state.urn)}"
    return [Saved(aliased.get(s.urn, s.urn), aliased.get(s.parent, s.parent) if s.parent else None) for s in states]


def _parents_first(plan: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The plan's URNs, each after its parent (the order the engine sees registrations in)."""

    def depth(urn: str) -> int:
        parent = plan[urn].get("parent")
        return 1 + depth(parent) if parent is not None and parent in plan else 0

    return sorted(plan, key=lambda urn: (depth(urn), urn))
