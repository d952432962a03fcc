"""A mock monitor that records every registration: type, parent, provider, dependencies, inputs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi
from pulumi.runtime import mocks, rpc

from trainstack.app.plan.aliases import create_urn
from trainstack.core.testing import SECRET

UNKNOWN = "[unknown]"


@dataclass
class Registration:
    """One resource as the engine saw it register (inputs redacted of secrets)."""

    urn: str
    type: str
    name: str
    custom: bool
    parent: str | None
    provider: str | None
    dependencies: list[str]
    property_dependencies: dict[str, list[str]]
    inputs: dict[str, Any]
    options: dict[str, Any] = field(default_factory=dict)


def public_urn(urn: str) -> str:
    """The URN the real engine gives: resources parented to the stack carry no `Stack$` prefix."""
    return urn.replace("::pulumi:pulumi:Stack$", "::")


def alias_urn(alias: Any, request: Any, urn: str) -> str:
    """The old URN an alias names: a URN as given, or a spec's fields over the resource's own
    (name, type, parent, stack, project), as the engine resolves it (step_generator.go
    `collapseAliasToUrn`). Departure: a spec's explicit parent is taken as given, where the engine
    takes the old URN that parent was found under; the program's explicit parent is the stack."""
    if alias.urn:
        return public_urn(alias.urn)
    spec = alias.spec
    stack, project = public_urn(urn).split("::")[:2]
    parent = None if spec.noParent else public_urn(spec.parentUrn or request.parent) or None
    stack = f"urn:pulumi:{spec.stack}" if spec.stack else stack
    return create_urn(spec.name or request.name, spec.type or request.type, parent, stack.removeprefix("urn:pulumi:"), spec.project or project)


def _type_only(alias: Any) -> bool:
    """An alias the provider SDK adds for its own older type tokens (e.g. apps/v1beta1 for a
    Deployment): the same for every resource of that type, so the plan leaves it out."""
    spec = alias.spec
    return not alias.urn and bool(spec.type) and not (spec.name or spec.parentUrn or spec.noParent)


def redact(value: Any) -> Any:
    """Replace secret values with `[secret]` and unknowns with `[unknown]`, recursively."""
    if rpc.is_rpc_secret(value):
        return SECRET
    if isinstance(value, dict):
        return {k: redact(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v) for v in value]
    if value == rpc.UNKNOWN:
        return UNKNOWN
    if isinstance(value, float) and value.is_integer():
        return int(value)  # the wire format carries every number as a double
    return value


class RecordingMonitor(mocks.MockMonitor):
    """The stock mock monitor, plus a record of each registration in order."""

    def __init__(self, fake: mocks.Mocks):
        super().__init__(fake)
        self.registrations: list[Registration] = []

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        """The URN the engine gives (alias.go `CreateURN`: the parent's whole qualified type), where
        the stock mock keeps only the parent's own type."""
        return create_urn(name, type_, parent or None, pulumi.get_stack(), pulumi.get_project())

    def _record(self, request: Any, urn: str, custom: bool, inputs: Any, property_dependencies: dict[str, list[str]], options: dict[str, Any]) -> None:
        """Append what every registration shares (names, parent, provider, dependencies)."""
        self.registrations.append(
            Registration(
                urn=public_urn(urn),
                type=request.type,
                name=request.name,
                custom=custom,
                parent=public_urn(request.parent) if request.parent else None,
                provider=public_urn(request.provider.rsplit("::", 1)[0]) if request.provider else None,
                dependencies=sorted({public_urn(u) for u in request.dependencies}),
                property_dependencies=property_dependencies,
                inputs=redact(inputs),
                options=options,
            )
        )

    def ReadResource(self, request: Any) -> Any:
        """A read of an existing resource (a StackReference, a `get`): recorded with its id."""
        response = super().ReadResource(request)
        inputs = rpc.deserialize_properties(request.properties, keep_unknowns=True)
        self._record(request, response.urn, True, inputs, {}, {"read": request.id})
        return response

    def RegisterResource(self, request: Any) -> Any:
        response = super().RegisterResource(request)
        if request.type == "pulumi:pulumi:Stack":
            return response
        inputs = rpc.deserialize_properties(request.object, keep_unknowns=True)
        options: dict[str, Any] = {}
        if request.protect:
            options["protect"] = True
        if request.retainOnDelete:
            options["retainOnDelete"] = True
        if request.deleteBeforeReplace:
            options["deleteBeforeReplace"] = True
        if request.ignoreChanges:
            options["ignoreChanges"] = sorted(request.ignoreChanges)
        if request.replaceOnChanges:
            options["replaceOnChanges"] = sorted(request.replaceOnChanges)
        # In the order given: the engine takes the first it finds (app/plan/aliases.py).
        aliases = [alias_urn(a, request, response.urn) for a in request.aliases if not _type_only(a)]
        if aliases:
            options["aliases"] = list(dict.fromkeys(aliases))
        property_dependencies = {k: sorted({public_urn(u) for u in v.urns}) for k, v in sorted(request.propertyDependencies.items()) if v.urns}
        self._record(request, response.urn, bool(request.custom), inputs, property_dependencies, options)
        return response
