"""Day-2 changes that a real `pulumi up` can apply (audits/day2.md B1, B6).

- A static claim's storage request never changes: Kubernetes refuses to grow a claim without a
  resizing StorageClass and to shrink any claim (plugin/pkg/admission/storage/persistentvolume/
  resize/admission.go; ValidatePersistentVolumeClaimUpdate), so a Filestore or Lustre resize
  updates the instance and the volume, and the claim keeps its bound size.
- The resiliency supervisor reads its ConfigMap through envFrom, only when a container starts:
  a change of its settings must roll its pods.
"""

from __future__ import annotations

from typing import Any

from helpers import raw_config, render
from trainstack.app.plan.recorder import Registration

CLAIM = "kubernetes:core/v1:PersistentVolumeClaim"
VOLUME = "kubernetes:core/v1:PersistentVolume"


def storage_objects(stack: str, **changes: Any) -> tuple[Registration, Registration]:
    regs = render(stack, raw_config(stack, **changes)).registrations
    (claim,) = [r for r in regs if r.type == CLAIM and r.inputs["metadata"]["name"] == "shared-storage"]
    (volume,) = [r for r in regs if r.type == VOLUME and r.inputs["spec"].get("claimRef", {}).get("name") == "shared-storage"]
    return claim, volume


def test_a_lustre_resize_updates_the_volume_and_leaves_the_static_claims_request_to_the_engine() -> None:
    claim, volume = storage_objects("a4-llama3-70b", trainstack_storage={"lustre": {"capacityGib": 54000}})
    assert volume.inputs["spec"]["capacity"] == {"storage": "54000Gi"}
    assert claim.inputs["spec"]["storageClassName"] == ""
    assert "spec.resources.requests.storage" in claim.options["ignoreChanges"]


def test_every_static_claim_ignores_its_request() -> None:
    for stack in ("a3ultra-405b", "a3high-nemo-gpt5b", "a2-gpt2-deepspeed", "a4-llama3-70b"):
        claims = [r for r in render(stack).registrations if r.type == CLAIM]
        assert claims, stack
        for claim in claims:
            assert claim.inputs["spec"]["storageClassName"] == "", (stack, claim.name)
            assert claim.options.get("ignoreChanges") == ["spec.resources.requests.storage"], (stack, claim.name)


def supervisor_templates(**changes: Any) -> dict[str, dict[str, Any]]:
    regs = render("a3ultra-405b", raw_config("a3ultra-405b", **changes)).registrations
    return {
        r.name: r.inputs["spec"]["template"]["metadata"]
        for r in regs
        if r.type in ("kubernetes:apps/v1:Deployment", "kubernetes:apps/v1:DaemonSet") and "supervisor" in r.name
    }


def test_the_supervisors_pods_roll_when_its_settings_change_and_only_then() -> None:
    before, again = supervisor_templates(), supervisor_templates()
    after = supervisor_templates(trainstack_workload={"nodes": 36})  # NUM_DP_REPLICAS 3 -> 2
    assert len(before) == 4 and before == again
    assert before.keys() == after.keys()
    for name in before:
        assert before[name]["labels"] == after[name]["labels"]
        assert before[name]["annotations"] != after[name]["annotations"], name


def test_moving_the_job_to_another_namespace_makes_a_new_volume_for_the_new_claim() -> None:
    """audits/day2.md B9: the claim moves (its namespace is its identity); the bound volume is
    replaced with it, not patched, so the new claim binds."""
    from trainstack.app.plan.plan import render as plan_of
    from trainstack.app.review.diff import diff_plans
    from trainstack.app.review.semantics import REPLACE

    stack = "a3high-nemo-gpt5b"
    base = plan_of(stack, raw_config(stack)).to_dict()
    head = plan_of(stack, raw_config(stack, trainstack_workload={"namespace": "trainstack"})).to_dict()
    diff = diff_plans(stack, base, head)
    effects = {c.resource.type: c.effect for c in diff.changed if c.resource.type in (VOLUME, CLAIM)}
    assert effects == {VOLUME: REPLACE, CLAIM: REPLACE}
    (volume,) = [r for r in head["resources"] if r["type"] == VOLUME and r["inputs"]["spec"]["claimRef"]["name"] == "shared-storage"]
    assert volume["inputs"]["spec"]["persistentVolumeReclaimPolicy"] == "Retain" and volume["options"]["deleteBeforeReplace"]
