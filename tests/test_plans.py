"""Every stack's plan: matches its golden file, is deterministic, and every object is schema-valid."""

from __future__ import annotations

import difflib
from pathlib import Path

import pulumi_gcp as gcp
import pytest
from trainstack.app.plan import engine
from trainstack.app.plan.plan import Plan, PlanError, from_rendered, render
from trainstack.app.schemas.validate import validate_object
from trainstack.app.stacks import raw_stack_config, stack_names

GOLDEN = Path(__file__).resolve().parent / "golden"
STACKS = stack_names()


@pytest.fixture(scope="module")
def plans() -> dict[str, Plan]:
    return {stack: render(stack, raw_stack_config(stack)) for stack in STACKS}


@pytest.mark.parametrize("stack", STACKS)
def test_plan_matches_golden(plans: dict[str, Plan], stack: str) -> None:
    golden = GOLDEN / f"{stack}.json"
    assert golden.is_file(), f"no golden plan for {stack}: run python -m tests.regen_golden {stack}"
    expected, actual = golden.read_text(), plans[stack].to_json()
    if expected != actual:
        diff = "".join(list(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True), "golden", "rendered"))[:80])
        pytest.fail(f"plan of {stack} differs from {golden.name}; if intended, run python -m tests.regen_golden {stack} and review:\n{diff}")


def test_same_config_renders_identical_bytes(plans: dict[str, Plan]) -> None:
    stack = "a3ultra-405b"
    again = render(stack, raw_stack_config(stack))
    assert again.to_json() == plans[stack].to_json()
    assert again.manifests() == plans[stack].manifests()


@pytest.mark.parametrize("stack", STACKS)
def test_every_kubernetes_object_is_schema_valid(plans: dict[str, Plan], stack: str) -> None:
    objects = plans[stack].kubernetes_objects()
    assert objects, f"{stack} renders no Kubernetes objects"
    problems = [p for obj in objects for p in validate_object(obj)]
    assert not problems, "\n".join(problems)


def test_plan_catches_a_misspelled_provider_input() -> None:
    raw = raw_stack_config("a3ultra-405b")
    rendered = engine.execute(
        engine.load_stack("a3ultra-405b"), raw, lambda: gcp.container.NodePool("pool", cluster="c", node_config={"machine_typo": "a3-ultragpu-8g"})
    )
    with pytest.raises(PlanError, match=r"nodeConfig\.machine_typo: not a property of NodePoolNodeConfigArgs; did you mean 'machineType'\?"):
        from_rendered(rendered)
