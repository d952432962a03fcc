"""Property: no config gets a traceback. Validation either accepts a mutated stack config or
refuses it with ConfigError; what it accepts plans; and what plans renders valid objects."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from config_mutations import mutated
from trainstack.app.deploy import validation
from trainstack.app.deploy.stacks import project_root, raw_stack_config, stack_names
from trainstack.app.plan.plan import render
from trainstack.app.schemas.validate import validate_object
from trainstack.core.errors import ConfigError

PLATFORM_STACKS = [s for s in stack_names() if "trainstack:platform" not in raw_stack_config(s)]
QUICK = settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
PLANNED = settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


def accepted(stack: str, raw: dict[str, Any]) -> bool:
    """Whether validation accepts `raw`; any exception but ConfigError fails the property."""
    try:
        validation.validate(stack, raw, project_root())
    except ConfigError:
        return False
    return True


@pytest.mark.parametrize("stack", PLATFORM_STACKS)
@QUICK
@given(data=st.data())
def test_validation_never_raises_anything_but_a_config_error(stack: str, data: st.DataObject) -> None:
    accepted(stack, data.draw(mutated(raw_stack_config(stack))))


@pytest.mark.parametrize("stack", ["a3ultra-405b", "a2-gpt2-deepspeed"])
@PLANNED
@given(data=st.data())
def test_what_validation_accepts_plans_and_renders_valid_objects(stack: str, data: st.DataObject) -> None:
    raw = data.draw(mutated(raw_stack_config(stack)))
    if accepted(stack, raw):
        plan = render(stack, raw)
        problems = [p for obj in plan.kubernetes_objects() for p in validate_object(obj)]
        assert problems == []
