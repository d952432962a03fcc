"""How a component names and orders its children.

Names: a child is `<component name>-<role>` (the component's main child takes the component's
own name), as pulumi-eks names `${name}-eksCluster`: any number of instances coexist in one
program.

Aliases: a child is aliased, under its current parent, from every name a live stack may keep it
under. An `up` that moves a component (a new name, a new parent) and finishes is matched by the
engine from the component's alias alone (step_generator.go `inheritedChildAlias`). One that stops
part way saves each child it did not finish under the component's new type chain with the child's
own old name (pulumi/pulumi@1b59498 pkg/resource/deploy/snapshot.go `NormalizeURNReferences`,
ported in app/plan/aliases.py), and the next `up` finds the component by its own URN and derives
nothing: only the child's own alias names that entry. So a child keeps `<earlier component
name><suffix>` for each name the component had (its aliases by name) and its own earlier name
(`was`: by default its bare role, as components named their children before 4be4cd4).
tests/test_upgrade.py replays every such stop for every kept release.

Ordering: a caller orders a component with `opts.depends_on`, and the component passes it on to
each child, which Pulumi does not do for a component by itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypedDict

import pulumi


class ChildArgs(TypedDict):
    """The keyword arguments naming and placing a child: `Resource(**kids("vpc"), ...)`."""

    resource_name: str
    opts: pulumi.ResourceOptions


def child_options(parent: pulumi.Resource, opts: pulumi.ResourceOptions | None, *after: pulumi.Resource) -> pulumi.ResourceOptions:
    """Options of a component's child: parented, waiting for what the component was told to
    wait for (Pulumi does not pass a component's `depends_on` to its children) and `after`."""
    depends = opts.depends_on if opts else None
    inherited: list[pulumi.Input[pulumi.Resource]]
    if depends is None:
        inherited = []
    elif isinstance(depends, pulumi.Resource):
        inherited = [depends]
    elif isinstance(depends, Sequence):
        inherited = list(depends)
    else:
        raise TypeError("a component's depends_on must be a resource or a list of them: an Output of a list cannot be passed on to its children")
    return pulumi.ResourceOptions(parent=parent, depends_on=[*inherited, *after] or None)


class Children:
    """The children of one component instance: `kids = Children(self, name, opts)`, then
    `gcp.compute.Network(**kids("vpc"), ...)` registers `<name>-vpc`, aliased from `vpc` and from
    `<earlier name>-vpc` for each earlier name of the component. `roles_were_names`: whether children
    were once named by their bare role (components made before 4be4cd4); workloads' never were."""

    def __init__(self, parent: pulumi.Resource, name: str, opts: pulumi.ResourceOptions | None, *, roles_were_names: bool = True):
        self.parent = parent
        self.component = name
        self._opts = opts
        self._roles_were_names = roles_were_names
        # The component's earlier names (its aliases by name; a moved component's are its place's).
        self._before = [a.name for a in (opts.aliases or []) if isinstance(a, pulumi.Alias) and isinstance(a.name, str)] if opts else []

    def name(self, role: str) -> str:
        """The Pulumi name of the child playing `role`."""
        return f"{self.component}-{role}"

    def aliases(self, name: str, was: str | None = None, names_were: Sequence[str] = ()) -> list[pulumi.Alias]:
        """The aliases of the child `name`, under its current parent: each name a live stack may
        keep it under, `was` (its own earlier name), `names_were` (its earlier names under this
        component's name) and each of those names under each earlier name of the component."""
        earlier = [was] if was else []
        for own in (name, *names_were):
            earlier += [own] + [f"{old}{own.removeprefix(self.component)}" for old in self._before]
        return [pulumi.Alias(name=n) for n in dict.fromkeys(earlier) if n != name]

    def __call__(self, role: str, *after: pulumi.Resource, was: str | None = None, roles_were: Sequence[str] = (), **more: Any) -> ChildArgs:
        """The child playing `role`, after `after`; aliased from `was` (default: `role` where roles
        were names), from the roles it played before (`roles_were`), and from each of those names
        under the component's earlier names; `more`: further options."""
        was = was or (role if self._roles_were_names else None)
        return self._child(self.name(role), was, after, more, [self.name(r) for r in roles_were])

    def main(self, *after: pulumi.Resource, was: str | None = None, **more: Any) -> ChildArgs:
        """The component's main child, named as the component; aliased from `was`, its fixed
        name before (None: it was always named as the component), and from each earlier name of
        the component."""
        return self._child(self.component, was, after, more)

    def _child(self, name: str, was: str | None, after: Sequence[pulumi.Resource], more: dict[str, Any], names_were: Sequence[str] = ()) -> ChildArgs:
        aliases = [*self.aliases(name, was, names_were), *more.pop("aliases", [])]
        options = child_options(self.parent, self._opts, *after)
        return ChildArgs(resource_name=name, opts=pulumi.ResourceOptions.merge(options, pulumi.ResourceOptions(aliases=aliases or None, **more)))
