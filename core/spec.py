"""The stack file's building blocks: the `Section` base every spec derives from (camelCase keys,
strict types, unknown keys rejected, CLI-typed scalars read as text), validators made of
core/rules.py rules, and reading a stack file's raw keys into a model with every problem at once.

Each key's own rule is a core/rules.py rule on its type; a section's rules between its keys are its
model validators. The sections themselves live a layer up, each with the component that makes what it
describes (`components/<x>.py` `<X>Spec`); the stack files compose them (infra/stack.py)."""

from __future__ import annotations

import functools
from types import UnionType
from typing import Annotated, Any, Literal, TypeVar, Union, get_args, get_origin

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import ErrorDetails, InitErrorDetails, PydanticCustomError

from trainstack.core import rules
from trainstack.core.errors import ABSENT, ConfigError, Problem, unknown_key


def rule_errors(title: str, problems: list[Problem]) -> None:
    """Raise one ValidationError holding every (relative key, value, rule) problem."""
    if problems:
        raise ValidationError.from_exception_data(
            title,
            [InitErrorDetails(type=PydanticCustomError("rule", rule), loc=loc, input=value) for loc, value, rule in problems],
        )


def by_rule(rule: rules.Rule) -> AfterValidator:
    """A pydantic validator of one of `rules`: its message becomes the config error's rule. The
    validator's `__wrapped__` is the rule (the config reference shows its text)."""

    @functools.wraps(rule, assigned=(), updated=())
    def check(value: Any) -> Any:
        message = rule(value)
        if message:
            raise PydanticCustomError("rule", message)
        return value

    return AfterValidator(check)


def by_pattern(regex: str, rule: str) -> AfterValidator:
    return by_rule(rules.Pattern(regex, rule))


def bounded(bounds: rules.Bounds) -> AfterValidator:
    """The bounds the components check too, with their message."""
    return by_rule(bounds)


Duration = Annotated[str, by_rule(rules.DURATION)]
K8sName = Annotated[str, Field(max_length=63), by_rule(rules.K8S_NAME)]
# A DNS-1035 label: what a Service name (an Indexed Job's headless Service is named like its job)
# and a GKE node pool name must be: it starts with a letter.
Dns1035Name = Annotated[str, Field(max_length=63), by_rule(rules.DNS1035_NAME)]
NodePoolName = Annotated[str, by_rule(rules.NODE_POOL_NAME)]
EnvName = Annotated[str, by_rule(rules.ENV_NAME)]
# A GCP resource name such as a reservation's (RFC 1035, at most 63 characters).
GcpName = Annotated[str, Field(max_length=63), by_rule(rules.GCP_NAME)]
ProjectId = Annotated[str, by_rule(rules.PROJECT_ID)]
RegionId = Annotated[str, by_rule(rules.REGION_ID)]
ZoneId = Annotated[str, by_rule(rules.ZONE_ID)]
Quantity = Annotated[str, by_rule(rules.QUANTITY)]
Cidr = Annotated[str, by_rule(rules.cidr)]
# Another stack of the project, fully qualified as a StackReference names it.
QualifiedStack = Annotated[str, by_pattern(r"[\w.-]+/[\w.-]+/[\w.-]+", "must be a fully qualified stack name: organization/project/stack")]
INT32_MAX = rules.INT32_MAX
AbsolutePath = Annotated[str, by_rule(rules.ABSOLUTE_PATH)]


UtcTime = Annotated[str, by_rule(rules.utc_time)]


def _text_only(annotation: Any) -> bool:
    """Whether a field's type takes strings and no other scalar (str, Annotated[str, ...],
    str | None, Literal of strings, a union of those)."""
    origin = get_origin(annotation)
    if annotation is str:
        return True
    if origin is Annotated:
        return _text_only(get_args(annotation)[0])
    if origin is Literal:
        return all(isinstance(a, str) for a in get_args(annotation))
    if origin in (Union, UnionType):
        members = [a for a in get_args(annotation) if a is not type(None)]
        return bool(members) and all(_text_only(a) or _is_model(a) for a in members) and any(_text_only(a) for a in members)
    return False


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _as_text(value: Any, annotation: Any) -> Any:
    if isinstance(value, bool | int | float) and _text_only(annotation):
        return str(value).lower() if isinstance(value, bool) else str(value)
    if isinstance(value, dict) and get_origin(annotation) is dict:
        return {k: _as_text(v, get_args(annotation)[1]) for k, v in value.items()}
    return value


class Section(BaseModel):
    """Base of every config object: camelCase keys, strict types, unknown keys rejected."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=False, extra="forbid", strict=True, frozen=True)

    @field_validator("*", mode="before")
    @classmethod
    def _typed_cli_values(cls, value: Any, info: ValidationInfo) -> Any:
        """`pulumi config set --path` stores `12`, `1.5` and `true` typed; a string field takes
        them as the text the user typed (`"12"`, `"true"`)."""
        annotation = cls.model_fields[info.field_name].annotation if info.field_name else None
        return _as_text(value, annotation)


# ---------------------------------------------------------------------------------------------
# Loading and reporting


def plain(value: Any) -> Any:
    """A section as the models take it: a section model as it is; in a dict or list, a whole float
    (the engine sends every number as a double) an int: strict int fields refuse 2.0, and text
    fields read 2, as a user wrote it."""
    if isinstance(value, BaseModel):
        return value
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _section_at(model: type[BaseModel], loc: tuple[str | int, ...]) -> type[BaseModel] | None:
    """The config model the keys at `loc` (as the user wrote them) belong to, if one does."""
    for part in loc:
        if isinstance(part, int):
            continue
        field = next((f for name, f in model.model_fields.items() if (f.alias or name) == part), None)
        if field is None:
            return None
        found = _model_in(field.annotation)
        if found is None:
            return None
        model = found
    return model


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The config model an annotation holds (directly, optionally, or as list or map items)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        if (found := _model_in(arg)) is not None:
            return found
    return None


def _unknown_key(model: type[BaseModel], loc: tuple[str | int, ...], value: Any, prefix: tuple[str | int, ...] = ()) -> Problem:
    """An unknown key, with the documented key it most resembles ("did you mean")."""
    section = _section_at(model, loc[:-1])
    return unknown_key((*prefix, *loc), value, [f.alias or name for name, f in section.model_fields.items()] if section else [])


def problem_of(error: ErrorDetails, model: type[BaseModel], prefix: tuple[str | int, ...] = ()) -> Problem:
    """One pydantic error of `model` as the Problem of the key the user wrote (under `prefix`,
    where `model` is a section of something larger)."""
    loc = tuple(p for p in error["loc"] if not (isinstance(p, str) and p.startswith("function-")))
    if error["type"] == "invalid_key":  # a key that is no string (YAML `1:`, `true:`, `null:`)
        return odd_key((*prefix, *loc[:-1]), error["input"])
    if loc[-1:] == ("[key]",) and not isinstance(error["input"], str):  # the same, in a map of names
        return odd_key((*prefix, *loc[:-2]), error["input"])
    if error["type"] == "extra_forbidden":
        return _unknown_key(model, loc, error["input"], prefix)
    if error["type"] == "missing":
        return Problem((*prefix, *loc), ABSENT, "required key is missing")
    return Problem((*prefix, *loc), error["input"], error["msg"])


def odd_key(loc: tuple[str | int, ...], key: Any) -> Problem:
    return Problem(loc, ABSENT, f"key {key!r} is not a string; keys are names (quote it in YAML)")


# The gcp:* keys trainstack reads; the gcp provider reads every gcp:* key itself (credentials,
# requestTimeout, defaultLabels, ...), as the Pulumi CLI passes them.
GCP_KEYS = frozenset({"gcp:project", "gcp:region", "gcp:zone"})


def ours(raw: dict[str, Any]) -> dict[str, Any]:
    """The keys trainstack reads: `trainstack:*` and gcp:project, region and zone. Keys of other
    namespaces (`pulumi:*`, `kubernetes:*`, other `gcp:*` settings) belong to Pulumi and the
    providers; a key set to null counts as absent."""
    return {k: v for k, v in raw.items() if (k.startswith("trainstack:") or k in GCP_KEYS) and v is not None}


_Stack = TypeVar("_Stack", bound=BaseModel)


def validated(stack: str, raw: dict[str, Any], model: type[_Stack]) -> _Stack:
    """`raw` (keys as in the stack file) read into `model`, or ConfigError with every problem."""
    odd = [key for key in raw if not isinstance(key, str)]
    if odd:
        raise ConfigError(stack, [odd_key((), key) for key in odd])
    try:
        return model.model_validate(ours(raw))
    except ValidationError as exc:
        raise ConfigError(stack, [problem_of(e, model) for e in exc.errors(include_url=False)]) from None
    except RecursionError:
        raise ConfigError(stack, [Problem((), ABSENT, "nested too deeply to read")]) from None
