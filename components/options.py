"""The one ordering convention of every component: a caller orders a component with
`opts.depends_on`, and the component passes it on to each child, which Pulumi does not do
for a component by itself."""

from __future__ import annotations

from collections.abc import Sequence

import pulumi


def child_options(
    parent: pulumi.Resource, opts: pulumi.ResourceOptions | None, *after: pulumi.Resource
) -> pulumi.ResourceOptions:
    """Options of a component's child: parented, waiting for what the component was told to
    wait for (Pulumi does not pass a component's `depends_on` to its children) and `after`."""
    inherited = opts.depends_on if opts and opts.depends_on else []
    inherited = list(inherited) if isinstance(inherited, Sequence) else [inherited]
    return pulumi.ResourceOptions(parent=parent, depends_on=[*inherited, *after] or None)
