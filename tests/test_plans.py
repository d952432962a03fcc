"""Every stack's plan: matches its golden file, is deterministic, and every object is schema-valid."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pulumi_gcp as gcp
import pytest

from trainstack.app.deploy.stacks import raw_stack_config, stack_names
from trainstack.app.plan import engine
from trainstack.app.plan.plan import Plan, PlanError, from_rendered, render
from trainstack.app.schemas.validate import validate_object

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


# --- what `pulumi destroy` does, said in every stack file and true of its plan ---------------


@pytest.mark.parametrize("stack", STACKS)
def test_the_stack_file_says_what_destroy_does(plans: dict[str, Plan], stack: str) -> None:
    text = (GOLDEN.parent.parent / "stacks" / f"Pulumi.{stack}.yaml").read_text()
    said = re.findall(r"^# pulumi destroy: (.*)$", text, re.MULTILINE)
    assert said == [plans[stack].destroy_effect()], f"{stack}: its '# pulumi destroy:' comment disagrees with its plan"
    assert "takes it down" not in text  # the old promise protected buckets broke


def test_destroy_effect_reads_protect_and_retain_from_the_resources() -> None:
    def plan(*options: dict) -> Plan:
        types = ["gcp:container/cluster:Cluster", "gcp:storage/bucket:Bucket", "gcp:compute/disk:Disk"]
        return Plan("s", [{"type": t, "name": t, "options": o, "inputs": {}} for t, o in zip(types, options, strict=True)], {})

    assert plan({}, {}, {}).destroy_effect() == "deletes every resource"
    assert (
        plan({}, {"retainOnDelete": True}, {"retainOnDelete": True})
        .destroy_effect()
        .startswith("deletes every resource but leaves the NFS disk and the bucket in the project, with the data")
    )
    assert plan({"protect": True}, {"retainOnDelete": True}, {}).destroy_effect().startswith("refused before anything is deleted: the cluster is protected")


def test_a_control_plane_open_to_any_address_is_a_warning_in_the_summary() -> None:
    assert render("a3ultra-405b", raw_stack_config("a3ultra-405b")).warnings() == []
    raw = raw_stack_config("a3ultra-405b")
    raw["trainstack:cluster"] |= {"authorizedNetworks": [{"cidrBlock": "0.0.0.0/0"}], "allowAnyAddress": True}
    summary = render("a3ultra-405b", raw).summary()
    assert summary["warnings"] == ["the control plane of a3ultra-405b accepts connections from any address (0.0.0.0/0)"]
