"""The package schema's types of the stack file's sections, generated from their models
(`infra.stack`): each model an object type of its camelCase keys (the models' aliases), each key's
docstring its description, a key with a default optional, a `Literal` an enum, a nested model a
type of its own. `TrainingPlatform` and `TrainingWorkload` take their sections typed by them, so a
YAML or TypeScript program sees the keys a stack file has, documented as the config reference is.

The provider maps inputs by these types (keys kept as written, the models' aliases) and the
component validates them with the models, so a bad value reads as it does in a stack file. A
component whose Args are a spec plus wiring takes the spec's keys beside the wiring (`properties`).
"""

from __future__ import annotations

import typing
from types import UnionType
from typing import Annotated, Any, Literal

from pulumi.provider.experimental.analyzer import EnumValueDefinition, PropertyDefinition, PropertyType, TypeDefinition
from pydantic import BaseModel

from trainstack.app.docs.reference import descriptions

SCALARS = {str: PropertyType.STRING, bool: PropertyType.BOOLEAN, int: PropertyType.INTEGER, float: PropertyType.NUMBER}
ANY = "pulumi.json#/Any"


class SectionTypes:
    """The types made so far for the package `package`, by schema name."""

    def __init__(self, package: str) -> None:
        self.package = package
        self.types: dict[str, TypeDefinition] = {}

    def ref(self, name: str) -> str:
        return f"#/types/{self.package}:index:{name}"

    def model(self, model: type[BaseModel]) -> str:
        """The schema name of `model`'s object type, made with its fields' types on first use."""
        name = _name(model)
        if name in self.types:
            return name
        found = TypeDefinition(
            name=name,
            type=PropertyType.OBJECT,
            properties={},
            properties_mapping={},
            module=model.__module__,
            python_type=dict,
            description=" ".join((model.__doc__ or "").split()) or None,
        )
        self.types[name] = found
        found.properties = self.properties(model)
        found.properties_mapping = {key: key for key in found.properties}  # kept camelCase: the model reads its aliases, and names a bad key as written
        return name

    def properties(self, model: type[BaseModel]) -> dict[str, PropertyDefinition]:
        """The schema properties of `model`'s fields, by key (their types made on first use)."""
        documented = descriptions(model)
        found = {}
        for field, info in model.model_fields.items():
            key = info.alias or field
            prop = self.property(info.annotation, f"{_name(model)}{key[:1].upper()}{key[1:]}")
            prop.optional = not info.is_required()
            prop.description = documented.get(field)
            found[key] = prop
        return found

    def property(self, annotation: Any, enum_name: str) -> PropertyDefinition:
        """The schema property of a field typed `annotation` (`enum_name` names a Literal's enum)."""
        origin, args = typing.get_origin(annotation), typing.get_args(annotation)
        if origin is Annotated:
            return self.property(args[0], enum_name)
        if origin in (typing.Union, UnionType):
            present = [a for a in args if a is not type(None)]
            return self.property(present[0], enum_name) if len(present) == 1 else PropertyDefinition(ref=ANY)
        if origin is Literal:
            return PropertyDefinition(ref=self.ref(self.enum(enum_name, list(args))))
        if origin is list or origin is tuple:
            return PropertyDefinition(type=PropertyType.ARRAY, items=self.property(args[0], enum_name))
        if origin is dict:
            return PropertyDefinition(type=PropertyType.OBJECT, additional_properties=self.property(args[1], enum_name))
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            return PropertyDefinition(ref=self.ref(self.model(annotation)))
        if annotation in SCALARS:
            return PropertyDefinition(type=SCALARS[annotation])
        return PropertyDefinition(ref=ANY)

    def enum(self, name: str, values: list[Any]) -> str:
        """The schema name of an enum of `values` (one type: the schema's enums have one)."""
        kinds = {type(v) for v in values}
        if len(kinds) != 1 or next(iter(kinds)) not in SCALARS:
            raise TypeError(f"{name}: a Literal of {sorted(k.__name__ for k in kinds)} is no schema enum")
        self.types.setdefault(
            name,
            TypeDefinition(
                name=name,
                type=SCALARS[next(iter(kinds))],
                properties={},
                properties_mapping={},
                module=__name__,
                python_type=next(iter(kinds)),
                enum=[EnumValueDefinition(name=_member(v), value=v) for v in values],
            ),
        )
        return name


def _name(model: type[BaseModel]) -> str:
    """A section model's schema name: `GpuPoolSpec` and `ClusterConfig` are `GpuPoolConfig` and `ClusterConfig`."""
    name = model.__name__.removesuffix("Spec")
    return name if name.endswith("Config") else f"{name}Config"


def _member(value: Any) -> str:
    """An enum member's name: the value as an identifier (`ON_FAILURE` -> `ON_FAILURE`, `a-b` -> `A_B`)."""
    text = "".join(c if c.isalnum() else "_" for c in str(value)).upper()
    return text if text[:1].isalpha() else f"V{text}"
