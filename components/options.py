"""How a component names and orders its children.

Names: a child is `<component name>-<role>` (the component's main child takes the component's
own name), as pulumi-eks names `${name}-eksCluster`: any number of instances coexist in one
program. Each child is aliased from the name it had before (the bare role), so a stack made by an
earlier release keeps every resource on upgrade: Pulumi moves it to the new name, replaces nothing.

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
    `gcp.compute.Network(**kids("vpc"), ...)` registers `<name>-vpc`, aliased from `vpc`."""

    def __init__(self, parent: pulumi.Resource, name: str, opts: pulumi.ResourceOptions | None):
        self.parent = parent
        self.component = name
        self._opts = opts

    def name(self, role: str) -> str:
        """The Pulumi name of the child playing `role`."""
        return f"{self.component}-{role}"

    def __call__(self, role: str, *after: pulumi.Resource, was: str | None = None, **more: Any) -> ChildArgs:
        """The child playing `role`, after `after`; aliased from `was` (default: `role`, its
        name before children were named after their component); `more`: further options."""
        return self._child(self.name(role), was or role, after, more)

    def main(self, *after: pulumi.Resource, was: str | None = None, **more: Any) -> ChildArgs:
        """The component's main child, named as the component; aliased from `was`, its fixed
        name before (None: it was always named as the component)."""
        return self._child(self.component, was or self.component, after, more)

    def _child(self, name: str, was: str, after: Sequence[pulumi.Resource], more: dict[str, Any]) -> ChildArgs:
        aliases = [pulumi.Alias(name=was)] if was != name else []
        aliases += more.pop("aliases", [])
        options = child_options(self.parent, self._opts, *after)
        return ChildArgs(resource_name=name, opts=pulumi.ResourceOptions.merge(options, pulumi.ResourceOptions(aliases=aliases or None, **more)))
