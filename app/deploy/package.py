"""The public components as one Pulumi package, `trainstack`, for programs in any Pulumi language.

`provider/` is the source-based plugin `pulumi package add` loads: its `__main__.py` hosts
`COMPONENTS` with `Provider`, the SDK's component provider, which infers the schema from the type
annotations of each component's `args` and its annotated attributes (the outputs). The host passes
the args as a dict; each component builds and checks its Args from it (`components.args`). A
component whose Args are a spec plus wiring (the node pools) takes the spec's keys beside the wiring,
typed by the spec's model as `TrainingPlatform`'s sections are.

`TrainingPlatform` takes the platform sections of a stack file and `TrainingWorkload` its workload
section, typed in the schema by their `infra.stack` models (app/deploy/package_types.py) and checked by
them; a bad input is a `pulumi.InputPropertiesError` naming its path as the program wrote it. A
TrainingWorkload's `platform` is a reference to a TrainingPlatform the same provider made.

Not in the package: `TrainingJob`, whose launch command and GPUDirect pod parts come from Python
launchers and profiles (`workloads.launchers`, `workloads.profiles`), not from plain values.
"""

import dataclasses
import inspect
import json
import typing
from collections.abc import Iterator
from importlib.metadata import version
from typing import Any

import pulumi
from pulumi.provider.experimental.analyzer import PropertyDefinition, TypeDefinition
from pulumi.provider.experimental.component import ComponentProvider
from pulumi.provider.experimental.schema import generate_schema
from pulumi.provider.experimental.util import camel_case
from pulumi.provider.server import ComponentInitError
from pulumi.resource import DependencyResource
from pydantic import BaseModel

from trainstack import components, workloads
from trainstack.app.deploy.package_types import SectionTypes
from trainstack.app.deploy.stack_file import PlatformStackFile
from trainstack.components.args import has_default, spec_model
from trainstack.core.errors import ArgsError, Problem, unknown_key
from trainstack.infra import training_platform
from trainstack.infra.training_platform import TrainingPlatform
from trainstack.workloads.training_workload import TrainingWorkload

NAME = "trainstack"

COMPONENTS: list[type[pulumi.ComponentResource]] = [
    getattr(module, name)
    for module in (components, workloads)
    for name in module.__all__
    if isinstance(getattr(module, name), type)
    and issubclass(getattr(module, name), pulumi.ComponentResource)
    and getattr(module, name) is not workloads.TrainingJob
] + [TrainingPlatform, TrainingWorkload]


def _classes(hint: Any) -> list[type]:
    """The trainstack classes a type hint names (inside Optional, list, dict, Input...)."""
    if isinstance(hint, type):
        return [hint] if hint.__module__.startswith(f"{NAME}.") else []
    return [c for arg in typing.get_args(hint) for c in _classes(arg)]


def _resolve(obj: Any, seen: set[Any]) -> None:
    """Evaluate `obj`'s string annotations (the modules use `from __future__ import
    annotations`) in place, and those of the classes they name: the SDK's analyzer reads
    `__annotations__` as they are. The analyzer makes an input optional when its type admits
    None; a field with a default is typed as it is at run time, so its type gets `| None` here
    (the provider's null is the default: `components.args`)."""
    if obj in seen:
        return
    seen.add(obj)
    hints = inspect.get_annotations(obj, eval_str=True)
    if dataclasses.is_dataclass(obj):
        for f in dataclasses.fields(obj):
            if f.name in hints and has_default(f) and type(None) not in typing.get_args(hints[f.name]):
                hints[f.name] = hints[f.name] | None
        if isinstance(obj, type) and spec_model(obj) is not None:
            hints["spec"] = dict[str, Any]  # its keys are the component's inputs (Provider)
    obj.__annotations__ = hints
    for hint in [*obj.__annotations__.values(), *getattr(obj, "__bases__", ())]:  # a base's fields are the analyzer's too
        for cls in _classes(hint):
            _resolve(cls, seen)


def prepared() -> list[type[pulumi.ComponentResource]]:
    """`COMPONENTS`, their constructors' and Args' annotations evaluated for the analyzer."""
    seen: set[Any] = set()
    for component in COMPONENTS:
        _resolve(component, seen)
        _resolve(component.__init__, seen)
    return COMPONENTS


class Provider(ComponentProvider):
    """The SDK's component provider, with the sections `TrainingPlatform` and `TrainingWorkload` take
    typed by their models (`SECTION_FIELDS`, app/deploy/package_types.py), and a component's
    `pulumi.InputPropertiesError` reaching the engine as one (the SDK wraps whatever a constructor
    raises in ComponentInitError, which the server reports as a traceback): each bad input by its
    path, as the program wrote it."""

    def __init__(self, components: list[type[pulumi.ComponentResource]], name: str, version: str) -> None:
        super().__init__(components, name, version=version)
        types = SectionTypes(name)
        for cls in components:
            args, definition = typing.get_type_hints(cls.__init__)["args"], self._component_defs[cls.__name__]
            if (spec := spec_model(args)) is not None:
                self._flatten(definition, types, spec, args)
            self._describe(definition.inputs, definition.inputs_mapping, args)
            self._describe(definition.outputs, definition.outputs_mapping, cls)
        for component, fields in SECTION_FIELDS.items():
            definition = self._component_defs[component]
            for key, field in definition.inputs_mapping.items():
                if field in fields:
                    analyzed = definition.inputs[key]
                    typed = types.property(fields[field], f"{component}{key[:1].upper()}{key[1:]}")
                    typed.optional, typed.description = analyzed.optional, analyzed.description
                    definition.inputs[key] = typed
        workload = self._component_defs["TrainingWorkload"]
        described = workload.inputs["platform"].description
        workload.inputs["platform"] = PropertyDefinition(ref=f"#/resources/{training_platform.TYPE}", description=described)
        if clash := set(types.types) & set(self._type_defs):
            raise TypeError(f"section types named as component types: {sorted(clash)}")
        self._type_defs |= types.types
        self.schema = json.dumps(generate_schema(name, version, None, self._component_defs, self._type_defs, self._dependencies).to_json())

    @staticmethod
    def _flatten(definition: Any, types: SectionTypes, spec: type[BaseModel], args: Any) -> None:
        """A component's `spec` input as the spec's keys beside the wiring (the keys kept camelCase,
        as the spec's model reads them: `Args.spec_input`), with its deprecated keys (`spec_aliases`);
        required as the spec and the component (`spec_required`) require them."""
        key = next(k for k, field in definition.inputs_mapping.items() if field == "spec")
        del definition.inputs[key], definition.inputs_mapping[key]
        aliases = args.spec_aliases()
        for model in (spec, *([aliases] if aliases else [])):
            for name, prop in types.properties(model).items():
                prop.plain = True  # the spec's model reads the values themselves
                prop.optional = prop.optional and name not in args.spec_required()
                definition.inputs[name] = prop
                definition.inputs_mapping[name] = name

    def _describe(self, properties: dict[str, PropertyDefinition], mapping: dict[str, str], typ: type) -> None:
        """The description of a property a base class declares (ClaimedVolume's claim), which the
        SDK's analyzer reads in the class itself only."""
        bases = [base for base in typ.__mro__[1:] if base.__module__.startswith(f"{NAME}.")]
        for key, prop in properties.items():
            if prop.description is None and key in mapping:
                prop.description = next((found for base in bases if (found := self.analyzer.get_docstring(base, mapping[key]))), None)

    def get_type_definition(self, prop: PropertyDefinition) -> TypeDefinition | None:
        """None for a reference to a resource of the package (the value is the resource itself)."""
        return None if prop.ref and prop.ref.startswith("#/resources/") else super().get_type_definition(prop)

    def map_inputs(self, inputs: Any, component_def: Any) -> Any:
        """The SDK's mapping, which reads only the schema's properties (a misspelled key would be
        dropped), after every input the schema lacks is refused: InputPropertiesError naming each
        by its path as the program wrote it, with the key it most resembles."""
        found = list(self._unknown(inputs, component_def.inputs, ()))
        if found:
            raise training_platform.input_error(component_def.name, found)
        return super().map_inputs(inputs, component_def)

    def _unknown(self, value: Any, properties: dict[str, PropertyDefinition], key: tuple[str | int, ...]) -> Iterator[Problem]:
        """The keys of `value` (an object of `properties`) and of the objects inside it that the
        schema does not have, walked as the SDK's `map_input_properties` maps them."""
        if not isinstance(value, dict):
            return
        for name, item in value.items():
            if name not in properties:
                yield unknown_key((*key, name), item, properties)
                continue
            prop = properties[name]
            if prop.ref and (typed := self.get_type_definition(prop)) is not None and not typed.enum:
                yield from self._unknown(item, typed.properties, (*key, name))
            elif isinstance(item, list) and prop.items and prop.items.ref and (typed := self.get_type_definition(prop.items)) is not None:
                for i, element in enumerate(item):
                    yield from self._unknown(element, typed.properties, (*key, name, i))
            elif (
                isinstance(item, dict)
                and prop.additional_properties
                and prop.additional_properties.ref
                and (values := self.get_type_definition(prop.additional_properties)) is not None
            ):
                for entry, element in item.items():
                    yield from self._unknown(element, values.properties, (*key, name, entry))

    def construct(self, name: str, resource_type: str, inputs: Any, options: Any = None) -> Any:
        try:
            return super().construct(name, resource_type, inputs, options)
        except ComponentInitError as exc:
            if isinstance(exc.inner, pulumi.InputPropertiesError):
                raise exc.inner from None
            if isinstance(exc.inner, ArgsError):  # a component's Args: each field as the schema names the input
                raise training_platform.input_error(exc.inner.component, [p.rekeyed(schema_key) for p in exc.inner.problems]) from None
            raise


def schema_key(key: tuple[str | int, ...]) -> tuple[str | int, ...]:
    """An Args field path (`("extra_networks", 0, "subnetwork")`) as the package's inputs name it, by
    the SDK analyzer's own spelling (`camel_case`); a spec's keys are camelCase already."""
    return tuple(camel_case(part) if isinstance(part, str) else part for part in key)


def _stack_fields(sections: dict[str, str]) -> dict[str, Any]:
    """Each Args field of `sections` (field -> the stack file's key) -> the platform stack file's type of that key."""
    by_key = {info.alias: info.annotation for info in PlatformStackFile.model_fields.values()}
    return {field: by_key[key] for field, key in sections.items()}


# Component -> its Args fields typed in the schema by a stack file section's model.
SECTION_FIELDS: dict[str, dict[str, Any]] = {
    "TrainingPlatform": _stack_fields(training_platform.SECTIONS),
    "TrainingWorkload": _stack_fields({"workload": "trainstack:workload"}),
}


class Platforms(pulumi.runtime.ResourceModule):
    """A program's reference to a TrainingPlatform, deserialized as the one this process made
    (`training_platform.PLATFORMS`); any other as a bare dependency, which TrainingWorkload refuses."""

    def version(self) -> None:
        return None

    def construct(self, name: str, typ: str, urn: str) -> pulumi.Resource:
        return training_platform.PLATFORMS.get(urn) or DependencyResource(urn)


def provider() -> Provider:
    """The package's provider, hosting `prepared()` components, references to its platforms resolved."""
    pulumi.runtime.register_resource_module(NAME, "index", Platforms())
    return Provider(prepared(), NAME, version=package_version())


def package_version() -> str:
    """The installed distribution's version, the package's."""
    return version(NAME)
