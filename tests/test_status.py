"""`trainstack status`: one case per cause, on objects as the controllers write them
(tests/status_objects.py), each asserting the state, the cause and the fix; a fleet; the JSON
records; bad input; the live path through a fake kubectl."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import status_objects as k
from trainstack.app.schemas.validate import crd_for, validate_object
from trainstack.app.status import explain, snapshot
from trainstack.app.status.cli import status
from trainstack.app.status.facts import Finding
from trainstack.app.status.snapshot import Cluster

PENDING = k.cond("QuotaReserved", "False", "Pending", "")  # the legacy reason, gate off (Kueue 0.19 default)


def cluster(*objects: dict[str, Any], logs: dict[tuple[str, str], str] | None = None) -> Cluster:
    found = Cluster("cluster", logs=logs or {})
    for item in snapshot.checked_items(k.as_list(*objects), "test"):
        found.objects.setdefault(item["kind"], []).append(item)
    return found


def one(*objects: dict[str, Any], logs: dict[tuple[str, str], str] | None = None) -> Finding:
    findings = explain.explain_all(cluster(*objects, logs=logs), k.NOW)
    assert len(findings) == 1
    return findings[0]


def quota(reason: str, message: str) -> dict[str, Any]:
    return k.workload(
        conditions=[k.cond("QuotaReserved", "False", reason, message), k.cond("Admitted", "False", "NoReservation", "The workload has no reservation")]
    )


# ---------------------------------------------------------------------------------------------
# Queued: Kueue's reasons


@pytest.mark.parametrize("reason", ["Pending", "WaitingForQuota"])  # without and with UnadmittedWorkloadsObservability
def test_waiting_for_quota_names_the_resource_flavor_amount_and_position(reason: str) -> None:
    found = one(
        k.jobset(),
        quota(reason, k.unused_quota("16")),
        k.cluster_queue(pending=3),
        k.local_queue(),
        k.pending_summary(k.QUEUE, [k.pending_item("other", 0), k.pending_item("llama", 1), k.pending_item("third", 2)]),
    )
    assert found.state == "queued"
    assert found.cause == f"waiting for quota: {k.GPU} short by 16 in flavor {k.FLAVOR}"
    assert found.fix.startswith("wait for running jobs in the ClusterQueue to finish")
    assert found.detail[0] == f"position 2 of 3 pending in ClusterQueue {k.QUEUE}"
    assert found.facts["position"]["inClusterQueue"] == 2
    assert found.facts["short"] == [{"resource": k.GPU, "flavor": k.FLAVOR, "amount": "16"}]


def test_a_preemption_under_way_is_told() -> None:
    found = one(k.jobset(), quota("Pending", k.unused_quota("8") + ". Pending the preemption of 2 workload(s)"))
    assert found.cause == f"waiting for quota: {k.GPU} short by 8 in flavor {k.FLAVOR}"
    assert "Kueue is preempting lower-priority workloads for it" in found.detail


def test_without_the_visibility_api_the_queue_length_is_told() -> None:
    found = one(k.jobset(), quota("Pending", k.unused_quota("8")), k.cluster_queue(pending=5), k.local_queue())
    assert found.detail[0].startswith(f"5 workload(s) pending in ClusterQueue {k.QUEUE}")


def test_exceeds_max_quota_says_no_wait_admits_it() -> None:
    found = one(k.jobset(), quota("ExceedsMaxQuota", k.max_quota("64", "32")))
    assert found.state == "queued"
    assert found.cause == f"needs 64 {k.GPU} in flavor {k.FLAVOR}, more than its ClusterQueue can ever give (32)"
    assert "no wait will admit it" in found.fix and "trainstack:workload.nodes" in found.fix


def test_topology_placement_failure_names_the_level_and_the_excluded_nodes() -> None:
    message = k.tas_not_fit(2, 4, 6, 'taint "cloud.google.com/impending-node-termination": 2')
    wl = k.workload(topology=k.BLOCK, conditions=[k.cond("QuotaReserved", "False", "TopologyPlacementFailed", message)])
    found = one(k.jobset(), wl)
    assert found.state == "queued"
    assert found.cause.startswith(f"Topology Aware Scheduling cannot place it within one {k.BLOCK} of topology gke-default: 2 of 4 pods fit")
    assert "excluded: taint" in found.cause
    assert found.fix.startswith("untaint or repair the excluded nodes")


@pytest.mark.parametrize("reason", ["Inadmissible", "Misconfigured"])  # without and with UnadmittedWorkloadsObservability
def test_missing_local_queue_is_misconfigured(reason: str) -> None:
    found = one(k.jobset(), quota(reason, f"LocalQueue {k.QUEUE} doesn't exist"))
    assert found.cause == f"Kueue cannot queue it: LocalQueue {k.QUEUE} doesn't exist"
    assert "LocalQueue of the platform" in found.fix


def test_stopped_queue() -> None:
    found = one(k.jobset(), quota("Suspended", f"ClusterQueue {k.QUEUE} is inactive"))
    assert found.cause.startswith("its queue is stopped") and "stopPolicy" in found.fix


def test_wait_for_pods_ready_blocking_admission() -> None:
    found = one(k.jobset(), quota("WaitingForPodsReady", "waiting for all admitted workloads to be in PodsReady condition"))
    assert found.cause.startswith("waitForPodsReady blocks admission") and "blockAdmission" in found.fix


@pytest.mark.parametrize(
    ("reason", "message", "cause", "fix"),
    [
        (
            "NoMatchingFlavor",
            f"couldn't assign flavors to pod set workload: untolerated taint {{cloud.google.com/gke-spot: true}} in flavor {k.FLAVOR}",
            f"no flavor fits: flavor {k.FLAVOR} has taint {{cloud.google.com/gke-spot: true}} that the job does not tolerate",
            "add the toleration",
        ),
        (
            "NoMatchingFlavor",
            f"couldn't assign flavors to pod set workload: flavor {k.FLAVOR} doesn't match node affinity",
            f"no flavor fits: flavor {k.FLAVOR} does not match the job's node affinity",
            "drop the node selector",
        ),
        (
            "TopologyPlacementFailed",
            f"couldn't assign flavors to pod set workload: no topology domains at level: {k.BLOCK}",
            f"Topology Aware Scheduling finds no node at topology level {k.BLOCK}",
            "lack that level's label",
        ),
        ("AdmissionGated", "Admission is gated by: example.com/gate", "Kueue holds it: Admission is gated by: example.com/gate", "admission-gated-by"),
        ("WaitingForPreemptedWorkloads", "", "waiting for the workloads Kueue preempted for it to release their quota", "nothing to do"),
    ],
)
def test_the_other_quota_reasons(reason: str, message: str, cause: str, fix: str) -> None:
    found = one(k.jobset(), quota(reason, message))
    assert (found.state, found.cause) == ("queued", cause)
    assert fix in found.fix


def test_a_preempted_workload_says_so_in_the_detail() -> None:
    wl = k.workload(
        conditions=[
            k.cond("QuotaReserved", "False", "Pending", k.unused_quota("8")),
            k.cond("Evicted", "True", "Preempted", "Preempted to accommodate a workload (UID: 1, JobUID: 2) due to prioritization in the ClusterQueue"),
        ],
        requeue={"count": 1},
    )
    found = one(k.jobset(), wl)
    assert found.cause.startswith("waiting for quota")
    assert "last evicted: Preempted: Preempted to accommodate a workload (UID: 1, JobUID: 2) due to prioritization in the ClusterQueue" in found.detail
    assert "requeued 1 time(s) after evictions" in found.detail


def test_jobs_that_are_not_training_jobs_are_left_out() -> None:
    other = {**k.batch_job("image-prepull"), "metadata": {"name": "image-prepull", "namespace": k.NS, "uid": "x", "labels": {}}}
    assert [f.job for f in explain.explain_all(cluster(k.jobset(), other), k.NOW)] == ["llama"]
    assert [f.job for f in explain.explain_all(cluster(k.jobset(), other), k.NOW, "image-prepull")] == ["image-prepull"]


def test_a_job_without_a_queue_label_is_not_managed() -> None:
    job = k.jobset()
    del job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"]
    found = one(job)
    assert found.state == "queued" and "no kueue.x-k8s.io/queue-name label" in found.cause


# ---------------------------------------------------------------------------------------------
# Queued: admission checks and the ProvisioningRequest (DWS)


def dws(*conditions: dict[str, Any], state: str = "Pending", message: str = "", quota_reserved: bool = True, attempt: int = 1, **extra: Any) -> Finding:
    reserved = (
        k.cond("QuotaReserved", "True", "QuotaReserved", f"Quota reserved in ClusterQueue {k.QUEUE}")
        if quota_reserved
        else k.cond("QuotaReserved", "False", "Pending", "The workload has failed admission checks")
    )
    wl = k.workload(
        conditions=[reserved, k.cond("Admitted", "False", "UnsatisfiedAdmissionChecks", "The workload has not all checks ready")],
        checks=[k.check(state, message, **extra)],
    )
    old = k.provisioning_request(attempt=attempt - 1, conditions=[k.cond("Failed", "True", "CapacityIsNotFound", "old attempt")]) if attempt > 1 else None
    return one(k.jobset(), wl, k.provisioning_request(attempt=attempt, conditions=list(conditions)), *([old] if old else []))


def test_dws_capacity_not_found_yet() -> None:
    found = dws(
        k.cond("Accepted", "True", "Accepted", "ProvisioningRequest is accepted by ClusterAutoscaler"),
        k.cond("Provisioned", "False", "CapacityIsNotFound", "Capacity is not found, CA will try to find it later."),
        message="Capacity is not found, CA will try to find it later.",
    )
    assert found.state == "queued"
    assert (
        found.cause
        == f"DWS accepted ProvisioningRequest {k.workload_name('llama')}-{k.CHECK}-1 and has not found capacity yet: Capacity is not found, CA will try to find it later."
    )
    assert found.fix.startswith("nothing to fix")
    assert found.facts["provisioningRequest"]["name"].endswith("-1")


def test_dws_max_node_pool_size_reached_is_the_latest_attempt() -> None:
    message = "Max nodepool size reached, affected nodepools: a3-ultra"
    found = dws(
        k.cond("Failed", "True", "OutOfResources", message),
        state="Retry",
        message=f"Retrying after failure: {message}",
        quota_reserved=False,
        attempt=2,
        retries=2,
        after=120,
    )
    assert found.state == "queued"
    assert found.cause == "DWS cannot provision it: the node pool is at its maximum size (a3-ultra)"
    assert "raise the GPU pool's size" in found.fix and "Kueue retries it after a backoff" in found.fix
    assert found.facts["provisioningRequest"]["name"].endswith("-2")
    assert any("retry 2, requeued at" in line for line in found.detail)


def test_dws_other_failure_is_quoted() -> None:
    message = "max cluster limit reached, nodepools out of resources: a3-ultra (cpu, memory)"
    found = dws(k.cond("Failed", "True", "OutOfResources", message), state="Rejected", message=message, quota_reserved=False)
    assert found.cause == f"DWS failed to provision it: {message}"
    assert found.fix.startswith("Kueue deactivates the job")


def test_dws_booking_expired() -> None:
    found = dws(
        k.cond("Provisioned", "True", "CapacityIsProvisioned", "Capacity is found in the cluster"),
        k.cond("BookingExpired", "True", "CapacityReservationTimeExpired", "Capacity reservation time is expired"),
        state="Retry",
        quota_reserved=False,
    )
    assert found.cause == "the booked capacity expired before the pods used it: Capacity reservation time is expired"
    assert "why the pods did not schedule" in found.fix


def test_dws_capacity_revoked() -> None:
    found = dws(k.cond("CapacityRevoked", "True", "CapacityRevoked", "nodes were preempted"), state="Rejected", quota_reserved=False)
    assert found.cause == "DWS revoked the capacity it had provisioned: nodes were preempted"
    assert "reactivate" in found.fix


def test_a_check_without_a_provisioning_request() -> None:
    wl = k.workload(conditions=[k.cond("QuotaReserved", "True", "QuotaReserved", "")], checks=[k.check("Pending", "")])
    found = one(k.jobset(), wl)
    assert found.cause == f"admission check {k.CHECK} is Pending"


# ---------------------------------------------------------------------------------------------
# Queued: evictions, backoff, deactivation


def test_wait_for_pods_ready_eviction_and_backoff() -> None:
    message = f"Exceeded the PodsReady timeout {k.NS}/{k.workload_name('llama')}"
    wl = k.workload(
        conditions=[
            k.cond("QuotaReserved", "False", "Pending", "The workload is backoff"),
            k.cond("Evicted", "True", "PodsReadyTimeout", message),
            k.cond("Requeued", "False", "PodsReadyTimeout", message),
        ],
        requeue={"count": 2, "requeueAt": k.at(-4)},  # four minutes from now
    )
    found = one(k.jobset(), wl)
    assert found.state == "queued"
    assert found.cause == f"evicted 2 time(s) by waitForPodsReady ({message}); back in the queue at 2026-11-28 01:04 UTC, in 4m"
    assert "waitForPodsReady.timeout" in found.fix


def test_deactivated_after_the_requeuing_limit() -> None:
    message = "The workload is deactivated due to exceeding the maximum number of re-queuing retries"
    wl = k.workload(
        active=False,
        conditions=[
            k.cond("QuotaReserved", "False", "Deactivated", "The workload is deactivated"),
            k.cond("Evicted", "True", "DeactivatedDueToRequeuingLimitExceeded", message),
        ],
    )
    found = one(k.jobset(), wl)
    assert found.state == "queued"
    assert found.cause == f"deactivated: {message}"
    assert found.fix.startswith("its pods never all got ready in time") and '"active":true' in found.fix


def test_deactivated_by_a_rejected_check() -> None:
    message = 'The workload is deactivated due to AdmissionCheck in Rejected state: "a3-ultra-provisioning" (Max nodepool size reached)'
    wl = k.workload(active=False, conditions=[k.cond("Evicted", "True", "DeactivatedDueToAdmissionCheck", message)])
    found = one(k.jobset(), wl)
    assert found.cause == f"deactivated: {message}" and found.fix.startswith("an admission check was rejected")


# ---------------------------------------------------------------------------------------------
# Admitted but not running


def admitted_with(*objects: dict[str, Any], logs: dict[tuple[str, str], str] | None = None) -> Finding:
    return one(k.jobset(), k.workload(conditions=k.admitted()), *objects, logs=logs)


def test_nodes_scaling_up() -> None:
    pods = [
        k.pod(i, phase="Pending", conditions=k.unschedulable("0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector."), containers=[])
        for i in range(4)
    ]
    scale = k.event(
        pods[0],
        "TriggeredScaleUp",
        "pod triggered scale-up: [{https://www.googleapis.com/compute/v1/projects/p/zones/us-central1-b/instanceGroups/gke-a3ultra-a3-ultra-1a2b-grp 1->4 (max: 4)}]",
        component="cluster-autoscaler",
        first=6,
    )
    found = admitted_with(*pods, k.node("gke-a3ultra-a3-ultra-1a2b-0001"), scale)
    assert found.state == "admitted"
    assert found.cause == "nodes scaling up: 1 of 4 ready; gke-a3ultra-a3-ultra-1a2b-grp 1->4 (max 4), for 6m"
    assert found.fix.startswith("nothing to do")


def test_autoscaler_refuses_to_scale_up() -> None:
    p = k.pod(0, phase="Pending", conditions=k.unschedulable("0/2 nodes are available: 2 Insufficient nvidia.com/gpu."), containers=[])
    refused = k.event(p, "NotTriggerScaleUp", "pod didn't trigger scale-up: 1 max node group size reached", component="cluster-autoscaler")
    found = admitted_with(p, refused)
    assert found.cause.startswith(
        "1 pod(s) cannot be scheduled and the autoscaler will not add nodes: pod didn't trigger scale-up: 1 max node group size reached"
    )
    assert "raise the GPU pool's size" in found.fix


def test_image_pulling_names_the_nodes_and_how_long() -> None:
    pods = [k.pod(i, phase="Pending", node=f"node-{i}", containers=[k.waiting_container("ContainerCreating")]) for i in range(2)]
    events = [k.event(p, "Pulling", f'Pulling image "{k.IMAGE}"', first=9) for p in pods]
    found = admitted_with(*pods, *events)
    assert found.state == "admitted"
    assert found.cause == f"pulling image {k.IMAGE} on 2 node(s) for 9m: node-0, node-1"


@pytest.mark.parametrize(
    ("message", "fix"),
    [
        (f'failed to pull and unpack image "{k.IMAGE}": failed to resolve reference "{k.IMAGE}": {k.IMAGE}: not found', "push the image or fix its tag"),
        (f'failed to pull and unpack image "{k.IMAGE}": unexpected status from HEAD request: 403 Forbidden', "roles/artifactregistry.reader"),
    ],
)
def test_image_pull_failure_quotes_the_registry(message: str, fix: str) -> None:
    p = k.pod(0, phase="Pending", node="node-0", containers=[k.waiting_container("ErrImagePull", message)])
    found = admitted_with(p)
    assert found.state == "admitted"
    assert found.cause == f"ErrImagePull: image {k.IMAGE} cannot be pulled on 1 container(s): {message}"
    assert fix in found.fix


@pytest.mark.parametrize(
    ("message", "kind", "fix"),
    [
        (
            'MountVolume.SetUp failed for volume "gcs-fuse-csi-ephemeral" : rpc error: code = PermissionDenied desc = failed to get GCS bucket "ckpt": googleapi: Error 403 (gcsfuse)',
            "gcsfuse",
            "roles/storage.objectUser",
        ),
        (
            'MountVolume.MountDevice failed for volume "pvc-1" : rpc error: code = Internal desc = lustre mount failed: exit status 5',
            "lustre",
            "Managed Lustre instance",
        ),
        (
            'MountVolume.SetUp failed for volume "pvc-2" : mount failed: exit status 32 Mounting command: mount Mounting arguments: -t nfs 10.0.0.2:/share (filestore)',
            "filestore",
            "Filestore instance",
        ),
    ],
)
def test_volumes_not_mounting(message: str, kind: str, fix: str) -> None:
    p = k.pod(0, phase="Pending", node="node-0", containers=[k.waiting_container("ContainerCreating")])
    found = admitted_with(p, k.event(p, "FailedMount", message, kind="Warning"))
    assert found.state == "admitted"
    assert found.cause == f"a volume does not mount on 1 pod(s) ({kind}): {message}"
    assert fix in found.fix


def test_impending_node_termination_with_the_maintenance_time() -> None:
    taint = {"key": "cloud.google.com/impending-node-termination", "effect": "NoSchedule"}
    p = k.pod(
        0,
        phase="Pending",
        tolerations=[],
        conditions=k.unschedulable("0/1 nodes are available: 1 node(s) had untolerated taint {cloud.google.com/impending-node-termination: }."),
        containers=[],
    )
    node = k.node("node-7", taints=[taint], labels={"cloud.google.com/scheduled-maintenance-time": "1795834800"})
    found = admitted_with(p, node)
    assert found.state == "admitted"
    assert found.cause == "1 node(s) are being terminated by GKE (cloud.google.com/impending-node-termination: host maintenance or preemption): node-7"
    assert any(line == "node node-7: maintenance scheduled at 2026-11-28 03:00 UTC" for line in found.detail)


def test_an_untolerated_taint() -> None:
    p = k.pod(
        0,
        phase="Pending",
        conditions=k.unschedulable("0/1 nodes are available: 1 node(s) had untolerated taint {nvidia.com/gpu-unhealthy: true}."),
        containers=[],
    )
    node = k.node(
        "node-3",
        taints=[{"key": "nvidia.com/gpu-unhealthy", "value": "true", "effect": "NoSchedule"}, {"key": k.GPU, "value": "present", "effect": "NoSchedule"}],
    )
    found = admitted_with(p, node)
    assert found.cause == "1 node(s) carry taint nvidia.com/gpu-unhealthy that the pods do not tolerate: node-3"
    assert found.fix.startswith("remove the taint (kubectl taint nodes node-3 nvidia.com/gpu-unhealthy-)")


def test_the_preflight_failing() -> None:
    preflight = k.terminated_container(1, "Error", name="nccl-preflight", message="all_reduce busbw 12 GB/s below 300 GB/s")
    p = k.pod(1, phase="Pending", node="node-1", init=[preflight], containers=[k.waiting_container("PodInitializing")])
    found = admitted_with(p)
    assert found.state == "admitted"
    assert found.cause == "the preflight (nccl-preflight) failed on node node-1 (exit 1): all_reduce busbw 12 GB/s below 300 GB/s"
    assert found.fix.startswith("the node failed its check: cordon") and "-c nccl-preflight" in found.fix


def test_a_node_tainted_by_a_failed_preflight() -> None:
    taint = {"key": "trainstack.dev/preflight", "value": "preflight-node", "effect": "NoSchedule"}
    p = k.pod(
        2,
        phase="Pending",
        conditions=k.unschedulable("0/1 nodes are available: 1 node(s) had untolerated taint {trainstack.dev/preflight: preflight-node}."),
        containers=[],
    )
    found = admitted_with(p, k.node("node-2", taints=[taint]))
    assert found.cause == "1 node(s) failed the preflight and are tainted trainstack.dev/preflight: node-2"
    assert found.fix.startswith("repair or replace them") and found.fix.endswith("kubectl taint nodes node-2 trainstack.dev/preflight-")


def test_a_crash_looping_container() -> None:
    last = {"exitCode": 1, "reason": "Error", "startedAt": k.at(3), "finishedAt": k.at(2)}
    p = k.pod(0, node="node-0", containers=[k.waiting_container("CrashLoopBackOff", "back-off 40s restarting failed container", restarts=3, last=last)])
    found = admitted_with(p, logs={(k.NS, p["metadata"]["name"]): "ModuleNotFoundError: No module named 'megatron'\n"})
    assert found.state == "admitted"
    assert found.cause == f"container workload of pod {p['metadata']['name']} keeps crashing (exit code 1; 3 restarts)"
    assert found.fix == f"read its log: kubectl logs {p['metadata']['name']} -n {k.NS} --previous"
    assert found.detail == ["log: ModuleNotFoundError: No module named 'megatron'"]


def test_pods_not_created_yet() -> None:
    found = admitted_with()
    assert found.state == "admitted" and found.cause == "admitted by Kueue; its pods are not created yet"


# ---------------------------------------------------------------------------------------------
# Running


def test_running_since_restarts_and_step_rate() -> None:
    pods = [k.pod(i, node=f"node-{i}", containers=[k.running_container(restarts=1 if i == 2 else 0)]) for i in range(4)]
    log = "\n".join(f"Epoch 0: global_step={s} train_step_timing in s={2.0 + (s % 2) * 0.5}" for s in range(1, 21))
    wl = k.workload(conditions=[*k.admitted(), k.cond("PodsReady", "True", "Started", "All pods reached readiness and the workload is running", 90)])
    found = one(k.jobset(restarts=1), wl, *pods, logs={(k.NS, pods[0]["metadata"]["name"]): log})
    assert found.state == "running"
    assert found.cause == "running since 2026-11-27 23:30 UTC (1h30m); JobSet restarts 1, container restarts 1; step 20 at 2.25 s/step"
    assert found.fix == "nothing to do"
    assert found.facts["stepRate"] == {"step": 20, "seconds": 2.25, "steps": 10}


def test_running_on_a_node_due_for_maintenance() -> None:
    wl = k.workload(conditions=[*k.admitted(), k.cond("PodsReady", "True", "Started", "", 10)])
    nodes = [
        k.node("n0", taints=[{"key": "cloud.google.com/impending-node-termination", "effect": "NoSchedule"}]),
        k.node("n1", labels={"cloud.google.com/scheduled-maintenance-time": "1795834800"}),
    ]
    found = one(k.jobset(), wl, *[k.pod(i, node=f"n{i}") for i in range(4)], *nodes)
    assert found.state == "running"
    assert found.detail[1:] == [
        "node n0 is being terminated (cloud.google.com/impending-node-termination)",
        "node n1: maintenance scheduled at 2026-11-28 03:00 UTC",
    ]


def test_running_without_a_log_says_so() -> None:
    wl = k.workload(conditions=[*k.admitted(), k.cond("PodsReady", "True", "Started", "", 10)])
    found = one(k.jobset(), wl, *[k.pod(i, node=f"n{i}") for i in range(4)])
    assert found.state == "running" and "step" not in found.cause
    assert found.detail == ["step rate: no log of the leader pod in the dump"]


# ---------------------------------------------------------------------------------------------
# Failed or finished


def failed_jobset(
    reason: str = "ReachedMaxRestarts", message: str = "jobset failed due to reaching max number of restarts (first failed job: llama-workload-0)"
) -> dict[str, Any]:
    return k.jobset(restarts=3, terminal="Failed", conditions=[k.cond("Failed", "True", reason, message, 2)])


def test_oom_killed() -> None:
    p = k.pod(3, phase="Failed", node="node-3", containers=[k.terminated_container(137, "OOMKilled")])
    found = one(failed_jobset(), k.workload(conditions=k.admitted()), p)
    assert found.state == "failed"
    assert found.cause.startswith(f"failed at 2026-11-28 00:58 UTC: pod {p['metadata']['name']} on node node-3: OOMKilled (exit 137)")
    assert "(JobSet: ReachedMaxRestarts: jobset failed due to reaching max number of restarts" in found.cause
    assert found.fix.startswith("the container ran out of host memory")


def test_non_zero_exit_code_points_at_the_log() -> None:
    p = k.pod(0, phase="Failed", node="node-0", containers=[k.terminated_container(2, "Error")])
    found = one(failed_jobset("FailedJobs", "jobset failed due to one or more job failures (first failed job: llama-workload-0)"), p)
    assert found.cause.startswith(f"failed at 2026-11-28 00:58 UTC: pod {p['metadata']['name']} on node node-0: exit code 2 (JobSet: FailedJobs")
    assert found.fix == f"read its log: kubectl logs {p['metadata']['name']} -n {k.NS} --previous"


def test_nccl_error_in_the_log_tail() -> None:
    p = k.pod(1, phase="Failed", node="node-1", containers=[k.terminated_container(1, "Error")])
    log = "step 40\nnode-1:123:456 [3] NCCL WARN NET/IB : Got completion from peer 10.0.0.5 with status=12 opcode=0 len=0 vendor err 129 (Recv)\nRuntimeError: NCCL error: remote process exited or there was a network error, NCCL version 2.27.3\nncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.\n"
    found = one(failed_jobset(), p, logs={(k.NS, p["metadata"]["name"]): log})
    assert found.state == "failed"
    assert "; NCCL: ncclRemoteError: A call failed possibly due to a network error" in found.cause
    assert found.fix.startswith("NCCL failed between ranks")
    assert len(found.facts["nccl"]) == 3


def test_xid_in_the_log_tail() -> None:
    p = k.pod(2, phase="Failed", node="node-2", containers=[k.terminated_container(1, "Error")])
    log = "NVRM: Xid (PCI:0000:04:00): 79, pid=1234, GPU has fallen off the bus.\ntraining aborted\n"
    found = one(failed_jobset(), p, logs={(k.NS, p["metadata"]["name"]): log})
    assert "; GPU Xid 79 in its log" in found.cause
    assert found.fix.startswith("GPU Xid 79 on node node-2") and "kubectl cordon node-2" in found.fix


def test_a_job_that_failed_its_preflight_once_jobset_gave_up() -> None:
    check = k.terminated_container(42, "Error", name="preflight-node", message="node=node-5 check=dcgm-diag level=2 result=Fail")
    p = k.pod(1, phase="Failed", node="node-5", init=[check], containers=[k.waiting_container("PodInitializing")])
    found = one(failed_jobset(), p)
    assert found.state == "failed"
    assert found.cause.startswith(
        "failed at 2026-11-28 00:58 UTC: the preflight (preflight-node) failed on node node-5 (exit 42): node=node-5 check=dcgm-diag level=2 result=Fail (JobSet: ReachedMaxRestarts"
    )
    assert found.fix.startswith("the node failed its check: cordon and repair or replace it (kubectl cordon node-5)")


def test_the_failure_policy_decision_when_the_pods_are_gone() -> None:
    found = one(failed_jobset("FailJobSetFailurePolicyAction", "applying FailJobSet failure policy action (first failed job: llama-workload-0)"))
    assert found.state == "failed"
    assert (
        found.cause
        == "failed at 2026-11-28 00:58 UTC; FailJobSetFailurePolicyAction: applying FailJobSet failure policy action (first failed job: llama-workload-0)"
    )
    assert found.fix.startswith("its pods are gone")


def test_finished() -> None:
    found = one(k.jobset(terminal="Completed", conditions=[k.cond("Completed", "True", "AllJobsCompleted", "jobset completed successfully", 15)]))
    assert found.state == "finished"
    assert found.cause == "completed at 2026-11-28 00:45 UTC (jobset completed successfully)"
    assert found.fix == "nothing to do"


# ---------------------------------------------------------------------------------------------
# A fleet: the manager's workload, the worker it went to, that worker's reasons


def write(path: Path, *objects: dict[str, Any]) -> None:
    path.write_text(json.dumps(k.as_list(*objects)))


def fleet_dump(tmp_path: Path) -> Path:
    """Job `llama` admitted on worker-a and running there; job `gpt` offered to both workers,
    short of quota on a and waiting for DWS on b; worker-b's connection reported down."""
    folder = tmp_path / "fleet"
    folder.mkdir()
    write(
        folder / "manager.json",
        k.jobset("llama"),
        k.workload(
            "llama",
            conditions=k.admitted(),
            cluster_name="worker-a",
            checks=[{**k.check("Ready", 'The workload was admitted on "worker-a"'), "name": k.MULTIKUEUE_CHECK}],
        ),
        k.jobset("gpt"),
        k.workload(
            "gpt",
            conditions=[k.cond("QuotaReserved", "True", "QuotaReserved", "")],
            nominated=["worker-a", "worker-b"],
            checks=[{**k.check("Pending", ""), "name": k.MULTIKUEUE_CHECK}],
        ),
        k.multikueue_cluster("worker-a"),
        k.multikueue_cluster("worker-b", active=False, message="dial tcp 10.2.0.2:443: i/o timeout"),
    )
    pods = [k.pod(i, node=f"a-{i}") for i in range(4)]
    write(
        folder / "worker-worker-a.json",
        k.jobset("llama"),
        k.workload("llama", conditions=[*k.admitted(), k.cond("PodsReady", "True", "Started", "", 45)]),
        *pods,
        k.jobset("gpt"),
        k.workload("gpt", conditions=[k.cond("QuotaReserved", "False", "Pending", k.unused_quota("32"))]),
    )
    write(
        folder / "worker-worker-b.json",
        k.jobset("gpt"),
        k.workload("gpt", conditions=[k.cond("QuotaReserved", "True", "QuotaReserved", "")], checks=[k.check("Pending", "")]),
        k.provisioning_request("gpt", conditions=[k.cond("Accepted", "True", "Accepted", "ProvisioningRequest is accepted by ClusterAutoscaler")]),
    )
    (folder / "worker-worker-a.logs" / k.NS).mkdir(parents=True)
    (folder / "worker-worker-a.logs" / k.NS / f"{pods[0]['metadata']['name']}.log").write_text("global_step=7 train_step_timing in s=3.0\n")
    return folder


def test_a_fleet_explains_each_job_on_the_worker_it_went_to(tmp_path: Path) -> None:
    source = snapshot.load(fleet_dump(tmp_path))
    gpt, llama = explain.explain_all(source, k.NOW)
    assert (llama.job, llama.state, llama.worker) == ("llama", "running", "worker-a")
    assert llama.cause.startswith("on worker worker-a: running since 2026-11-28 00:15 UTC (45m)") and llama.cause.endswith("step 7 at 3.00 s/step")
    assert llama.facts["managerWorkload"] == k.workload_name("llama")
    assert (gpt.job, gpt.state, gpt.worker) == ("gpt", "queued", None)
    assert gpt.cause == (
        "offered to worker(s) worker-a, worker-b; none has admitted it: "
        f"worker-a: on worker worker-a: waiting for quota: {k.GPU} short by 32 in flavor {k.FLAVOR}; "
        f"worker-b: on worker worker-b: DWS accepted ProvisioningRequest {k.workload_name('gpt')}-{k.CHECK}-1 and has not found capacity yet"
    )
    assert gpt.fix == "see each worker's fix in the detail"
    assert "the manager reports worker worker-b inactive: ClientConnectionFailed: dial tcp 10.2.0.2:443: i/o timeout" in gpt.detail


def test_a_fleet_worker_missing_from_the_dump(tmp_path: Path) -> None:
    folder = fleet_dump(tmp_path)
    (folder / "worker-worker-a.json").unlink()
    found = explain.explain_all(snapshot.load(folder), k.NOW, "llama")[0]
    assert found.state == "queued" and found.cause == "on worker worker-a, whose objects the dump lacks"
    assert found.fix.startswith("add worker-worker-a.json to the dump")


def test_a_fleet_job_that_finished_is_read_from_the_manager(tmp_path: Path) -> None:
    """MultiKueue copies the worker's JobSet status to the manager's and deletes the worker's copy."""
    folder = fleet_dump(tmp_path)
    done = k.jobset("llama", terminal="Completed", conditions=[k.cond("Completed", "True", "AllJobsCompleted", "jobset completed successfully", 15)])
    manager = json.loads((folder / "manager.json").read_text())
    manager["items"] = [done if (i["kind"], i["metadata"]["name"]) == ("JobSet", "llama") else i for i in manager["items"]]
    (folder / "manager.json").write_text(json.dumps(manager))
    found = explain.explain_all(snapshot.load(folder), k.NOW, "llama")[0]
    assert (found.state, found.worker) == ("finished", "worker-a")
    assert found.cause == "completed at 2026-11-28 00:45 UTC (jobset completed successfully)"


# ---------------------------------------------------------------------------------------------
# The command: JSON records, the table, bad input


def test_json_is_one_record_per_job_with_the_facts_used(tmp_path: Path) -> None:
    result = CliRunner().invoke(status, ["--from", str(fleet_dump(tmp_path)), "--format", "json"])
    assert result.exit_code == 0, result.output
    records = json.loads(result.output)
    assert [r["job"] for r in records] == ["gpt", "llama"]
    for record in records:
        assert record["state"] in ("queued", "running") and record["cause"] and record["fix"]
    assert records[1]["facts"]["worker"] == "worker-a" and records[1]["facts"]["stepRate"]["step"] == 7
    assert set(records[0]["facts"]["workers"]) == {"worker-a", "worker-b"}


def test_the_table_shows_cause_and_fix_and_the_detail_with_job(tmp_path: Path) -> None:
    dump = tmp_path / "dump.json"
    write(dump, k.jobset(), quota("Pending", k.unused_quota("16")), k.pending_summary(k.QUEUE, [k.pending_item("llama", 0)]))
    result = CliRunner().invoke(status, ["--from", str(dump), "--job", "llama"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        f"{k.NS}/llama (JobSet): QUEUED",
        f"  cause: waiting for quota: {k.GPU} short by 16 in flavor {k.FLAVOR}",
        (
            "  fix:   wait for running jobs in the ClusterQueue to finish (or preempt them with a higher trainstack:workload.priorityClass), "
            "or raise the GPU pool's size (trainstack:gpuPool.nodeCount or .autoscaling.maxNodes; trainstack:gpuPools[i] with several)"
        ),
        f"    position 1 of 1 pending in ClusterQueue {k.QUEUE}",
        f"    {k.unused_quota('16')}",
    ]


def bad(tmp_path: Path, document: Any) -> str:
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps(document))
    result = CliRunner().invoke(status, ["--from", str(dump)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1
    return result.output.strip()


def test_a_dump_that_is_not_a_list(tmp_path: Path) -> None:
    assert "not a Kubernetes List (kind 'JobSet')" in bad(tmp_path, k.jobset())


def test_an_unknown_kind(tmp_path: Path) -> None:
    other = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}}
    assert "items[0] (Deployment web): trainstack status reads" in bad(tmp_path, k.as_list(other))


def test_another_kueue_api_version(tmp_path: Path) -> None:
    old = {**k.workload(), "apiVersion": "kueue.x-k8s.io/v1beta1"}
    message = bad(tmp_path, k.as_list(old))
    assert "apiVersion 'kueue.x-k8s.io/v1beta1'; trainstack status reads Workload as kueue.x-k8s.io/v1beta2" in message


def test_not_json_and_no_such_job(tmp_path: Path) -> None:
    dump = tmp_path / "dump.json"
    dump.write_text("{not json")
    result = CliRunner().invoke(status, ["--from", str(dump)])
    assert result.exit_code == 2 and "not JSON" in result.output
    write(dump, k.jobset())
    result = CliRunner().invoke(status, ["--from", str(dump), "--job", "nope"])
    assert result.exit_code == 2 and result.output.strip() == "error: --job nope: no such training job (jobs: llama)"


def test_an_unknown_stack() -> None:
    result = CliRunner().invoke(status, ["no-such-stack"])
    assert result.exit_code == 2 and result.output.startswith("error: unknown stack 'no-such-stack'")
    assert len(result.output.strip().splitlines()) == 1


def test_a_fleet_directory_without_its_manager(tmp_path: Path) -> None:
    folder = fleet_dump(tmp_path)
    (folder / "manager.json").unlink()
    result = CliRunner().invoke(status, ["--from", str(folder)])
    assert result.exit_code == 2 and result.output.strip().endswith("worker-<name>.json without manager.json; a fleet's directory holds both")


def test_from_excludes_watch_and_dump(tmp_path: Path) -> None:
    result = CliRunner().invoke(status, ["--from", str(tmp_path), "--watch"])
    assert result.exit_code == 2 and "--watch need a live cluster" in result.output


# ---------------------------------------------------------------------------------------------
# The README's example: a queued DWS job, as the command prints it


def dws_queued_job() -> dict[str, Any]:
    """gpt3-175b of a3mega-gpt3-175b-capacity-job (an Indexed Job on the a3-mega queue), its quota
    reserved on the queued-provisioning pool a3-mega-queued and DWS still looking for 32 nodes."""
    check = "a3-mega-queued-provisioning"
    waiting = "Capacity is not found, CA will try to find it later."
    reserved = k.cond("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue a3-mega")
    wl = k.workload(
        "gpt3-175b",
        kind="Job",
        queue="a3-mega",
        count=32,
        conditions=[reserved, k.cond("Admitted", "False", "UnsatisfiedAdmissionChecks", "The workload has not all checks ready")],
        checks=[k.check("Pending", waiting, name=check)],
    )
    request = k.provisioning_request(
        "gpt3-175b",
        kind="Job",
        check_name=check,
        conditions=[
            k.cond("Accepted", "True", "Accepted", "ProvisioningRequest is accepted by ClusterAutoscaler"),
            k.cond("Provisioned", "False", "CapacityIsNotFound", waiting),
        ],
    )
    ahead = k.pending_item("llama", 0, queue="a3-mega")
    return k.as_list(
        k.batch_job("gpt3-175b", nodes=32, queue="a3-mega"),
        wl,
        request,
        k.pending_summary("a3-mega", [ahead, k.pending_item("gpt3-175b", 1, "Job", "a3-mega")]),
    )


def test_the_readme_example_is_what_the_command_prints(tmp_path: Path) -> None:
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    section = readme.split("## Why is my job not running", 1)[1]
    command, printed = re.search(r"```console\n\$ (trainstack status [^\n]*)\n(.*?)```", section, re.DOTALL).groups()  # type: ignore[union-attr]
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps(dws_queued_job()))
    result = CliRunner().invoke(status, ["--from", str(dump), *command.split()[2:]])  # STACK names the job it runs
    assert result.exit_code == 0, result.output
    assert result.output == printed
    assert "job-gpt3-175b-" in printed and "(Job): QUEUED" in printed


def test_the_fixtures_pass_their_schemas_strictly(tmp_path: Path) -> None:
    """Objects whose schema is bundled (Kubernetes 1.32, the JobSet and Kueue queue CRDs) are as the
    API serves them; the Workload, ProvisioningRequest and visibility kinds have no bundled schema."""
    folder = fleet_dump(tmp_path)
    objects = [item for f in folder.glob("*.json") for item in json.loads(f.read_text())["items"]] + dws_queued_job()["items"]
    objects += [
        k.pod(
            0,
            phase="Pending",
            node="n",
            containers=[k.waiting_container("ErrImagePull", "denied")],
            init=[k.terminated_container(1, "Error", name="preflight")],
        ),
        k.node("n", taints=[{"key": "a", "effect": "NoSchedule"}]),
        k.event(k.pod(0), "Pulling", "Pulling image"),
        k.cluster_queue(pending=2),
        k.local_queue(),
        failed_jobset(),
    ]
    unschemed = {"Workload", "ProvisioningRequest", "PendingWorkloadsSummary"}
    checked = {o["kind"] for o in objects if o["kind"] not in unschemed}
    assert checked == {"JobSet", "Job", "Pod", "Node", "Event", "ClusterQueue", "LocalQueue", "MultiKueueCluster"}
    assert all(crd_for(o["apiVersion"], o["kind"]) is None for o in objects if o["kind"] in unschemed)
    assert [e for o in objects if o["kind"] not in unschemed for e in validate_object(o)] == []
