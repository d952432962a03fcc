"""A mock monitor that records every registration: type, parent, provider, dependencies, inputs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pulumi.runtime import mocks, rpc

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
    (name, type, parent, stack, project), as the engine resolves it."""
    if alias.urn:
        return public_urn(alias.urn)
    spec = alias.spec
    stack, project, _, _ = public_urn(urn).split("::", 3)
    parent = None if spec.noParent else public_urn(spec.parentUrn or request.parent) or None
    parent_type = parent.split("::")[2] if parent else "pulumi:pulumi:Stack"
    kind = spec.type or request.type
    qualified = kind if parent_type == "pulumi:pulumi:Stack" else f"{parent_type}${kind}"
    stack = f"urn:pulumi:{spec.stack}" if spec.stack else stack
    return f"{stack}::{spec.project or project}::{qualified}::{spec.name or request.name}"


def inherited_alias(child_type: str, child_name: str, parent_name: str, parent_alias: str) -> str:
    """The old URN a child has when its parent is found under `parent_alias`: under the parent's
    old type, its name's `<parent name>` prefix swapped for the parent's old name. A port of
    pulumi/pulumi pkg/resource/deploy/step_generator.go `inheritedChildAlias`."""
    stack, project, parent_type, old_name = parent_alias.split("::", 3)
    name = old_name + child_name[len(parent_name) :] if child_name.startswith(parent_name) else child_name
    return f"{stack}::{project}::{parent_type}${child_type}::{name}"


def engine_aliases(own: list[str], urn: str, parent: str | None, parent_aliases: list[str]) -> list[str]:
    """Every old URN the engine may find the resource `urn` under: its own aliases, then, for each
    old URN its parent may be found under, the child's URN and each own alias moved there (the
    engine takes the one its parent was found under). A port of step_generator.go `generateAliases`."""
    found = dict.fromkeys(own)
    if parent is not None:
        parent_name = parent.split("::", 3)[3]
        for parent_alias in parent_aliases:
            for old in [urn, *own]:
                kind, name = old.split("::", 3)[2].rsplit("$", 1)[-1], old.split("::", 3)[3]
                found.setdefault(inherited_alias(kind, name, parent_name, parent_alias))
    return list(found)


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
        self.aliases: dict[str, list[str]] = {}  # URN -> the old URNs the engine may find it under

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
        urn, parent = public_urn(response.urn), public_urn(request.parent) if request.parent else None
        own = [alias_urn(a, request, response.urn) for a in request.aliases if not _type_only(a)]
        aliases = engine_aliases(own, urn, parent, self.aliases.get(parent, []) if parent else [])
        self.aliases[urn] = aliases
        if aliases:
            options["aliases"] = sorted(aliases)
        property_dependencies = {k: sorted({public_urn(u) for u in v.urns}) for k, v in sorted(request.propertyDependencies.items()) if v.urns}
        self._record(request, response.urn, bool(request.custom), inputs, property_dependencies, options)
        return response
