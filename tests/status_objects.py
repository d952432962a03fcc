"""Objects as the controllers write them, for `trainstack status` tests: a JobSet as trainstack
submits it, its Kueue Workload (kueue.x-k8s.io/v1beta2 at v0.19.2), ProvisioningRequests, pods,
nodes and events, with the messages built by the formats app/status/sources.py cites (each
builder names its writer). Nothing here reads app/status: a test that passes only because the
code under test wrote its own fixture cannot happen."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from typing import Any

NOW = datetime(2026, 11, 28, 1, 0, tzinfo=UTC)
NS = "default"
QUEUE = "a3-ultra"  # the LocalQueue and ClusterQueue of a pool named a3-ultra (components/kueue.py)
FLAVOR = "a3-ultra-5f0d2c1e"  # its ResourceFlavor, named from its content (components/kueue.py flavor_object_name)
POOL = "a3-ultra"
CHECK = "a3-ultra-provisioning"  # its ProvisioningRequest AdmissionCheck (components/kueue.py GpuFlavor.check_name)
MULTIKUEUE_CHECK = "a3-ultra-multikueue"  # a manager's (components/kueue.py multikueue_check_name)
GPU = "nvidia.com/gpu"
BLOCK = "cloud.google.com/gce-topology-block"
OWNER_API = {"JobSet": "jobset.x-k8s.io/v1alpha2", "Job": "batch/v1"}
IMAGE = "us-central1-docker.pkg.dev/my-training-project/trainstack/nemo:2601"
IMAGE_ID = f"{IMAGE.split(':')[0]}@sha256:{'0' * 64}"
POD_TEMPLATE = {"spec": {"restartPolicy": "Never", "containers": [{"name": "workload", "image": IMAGE}]}}


def at(minutes_ago: float) -> str:
    return (NOW - timedelta(minutes=minutes_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


def uid(*parts: str) -> str:
    digest = hashlib.sha1("/".join(parts).encode()).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


def cond(kind: str, status: str, reason: str, message: str, minutes_ago: float = 5) -> dict[str, Any]:
    """A metav1.Condition as the controllers set it (apimeta.SetStatusCondition)."""
    return {"type": kind, "status": status, "reason": reason, "message": message, "lastTransitionTime": at(minutes_ago), "observedGeneration": 1}


def as_list(*objects: dict[str, Any]) -> dict[str, Any]:
    """What `kubectl get <kinds> -A -o json` prints."""
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": list(objects)}


# ---------------------------------------------------------------------------------------------
# The job and its Workload


def jobset(
    name: str = "llama",
    *,
    conditions: list[dict[str, Any]] | None = None,
    restarts: int = 0,
    suspend: bool = False,
    nodes: int = 4,
    terminal: str | None = None,
) -> dict[str, Any]:
    """A JobSet as trainstack renders it (workloads/training_job.py), with the status JobSet
    v0.12.0 writes (api/jobset/v1alpha2/jobset_types.go)."""
    status: dict[str, Any] = {"restarts": restarts, "conditions": conditions or []}
    if terminal:
        status["terminalState"] = terminal
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {
            "name": name,
            "namespace": NS,
            "uid": uid("jobset", name),
            "labels": {"kueue.x-k8s.io/queue-name": QUEUE, "app.kubernetes.io/managed-by": "trainstack"},
        },
        "spec": {
            "suspend": suspend,
            "failurePolicy": {"maxRestarts": 3},
            "replicatedJobs": [
                {"name": "workload", "replicas": 1, "template": {"spec": {"parallelism": nodes, "completions": nodes, "template": POD_TEMPLATE}}}
            ],
        },
        "status": status,
    }


def workload_name(job: str, kind: str = "JobSet") -> str:
    """Kueue's name for a job's Workload: <kind, lower case>-<name>-<hash> (pkg/controller/jobframework GetWorkloadNameForOwnerWithGVK)."""
    return f"{kind.lower()}-{job}-{hashlib.sha1(job.encode()).hexdigest()[:5]}"


def batch_job(name: str, *, nodes: int = 4, queue: str = QUEUE, conditions: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """An Indexed Job as trainstack renders it (`controller: job`, workloads/training_job.py indexed_job),
    suspended until Kueue admits it."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": NS,
            "uid": uid("job", name),
            "labels": {"kueue.x-k8s.io/queue-name": queue, "app.kubernetes.io/managed-by": "trainstack"},
        },
        "spec": {"suspend": True, "parallelism": nodes, "completions": nodes, "completionMode": "Indexed", "backoffLimit": 0, "template": POD_TEMPLATE},
        "status": {"conditions": conditions or []},
    }


def workload(
    job: str = "llama",
    *,
    conditions: list[dict[str, Any]] | None = None,
    checks: list[dict[str, Any]] | None = None,
    requeue: dict[str, Any] | None = None,
    active: bool = True,
    count: int = 4,
    topology: str | None = None,
    cluster_name: str | None = None,
    nominated: list[str] | None = None,
    kind: str = "JobSet",
    queue: str = QUEUE,
) -> dict[str, Any]:
    """A Workload the job controls (kueue.x-k8s.io/v1beta2 workload_types.go)."""
    pod_set: dict[str, Any] = {
        "name": "workload" if kind == "JobSet" else "main",  # a JobSet's replicated job; a Job's one pod set
        "count": count,
        "template": {"spec": {"containers": [{"name": "workload", "resources": {"requests": {GPU: "8"}}}]}},
    }
    if topology:
        pod_set["topologyRequest"] = {"required": topology, "podIndexLabel": "batch.kubernetes.io/job-completion-index"}
    status: dict[str, Any] = {"conditions": conditions or []}
    if checks is not None:
        status["admissionChecks"] = checks
    if requeue is not None:
        status["requeueState"] = requeue
    if cluster_name:
        status["clusterName"] = cluster_name
    if nominated:
        status["nominatedClusterNames"] = nominated
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {
            "name": workload_name(job, kind),
            "namespace": NS,
            "uid": uid("workload", job),
            "generation": 1,
            "creationTimestamp": at(60),
            "labels": {"kueue.x-k8s.io/job-uid": uid(kind.lower(), job)},
            "ownerReferences": [
                {
                    "apiVersion": OWNER_API[kind],
                    "kind": kind,
                    "name": job,
                    "uid": uid(kind.lower(), job),
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {"queueName": queue, "active": active, "priority": 0, "podSets": [pod_set]},
        "status": status,
    }


def admitted(minutes_ago: float = 20) -> list[dict[str, Any]]:
    """QuotaReserved and Admitted as the scheduler and workload controller set them."""
    return [
        cond("QuotaReserved", "True", "QuotaReserved", f"Quota reserved in ClusterQueue {QUEUE}", minutes_ago),
        cond("Admitted", "True", "Admitted", "The workload is admitted", minutes_ago),
    ]


# Messages of pkg/scheduler/flavorassigner/flavorassigner.go (Assignment.Message, fitsResourceQuota)
def unused_quota(short: str, resource: str = GPU, flavor: str = FLAVOR) -> str:
    return f"couldn't assign flavors to pod set workload: insufficient unused quota for {resource} in flavor {flavor}, {short} more needed"


def max_quota(request: str, maximum: str, resource: str = GPU, flavor: str = FLAVOR) -> str:
    return (
        f"couldn't assign flavors to pod set workload: insufficient quota for {resource} in flavor {flavor}, "
        f"previously considered podsets requests (0) + current podset request ({request}) > maximum capacity ({maximum})"
    )


# pkg/cache/scheduler/tas_flavor_snapshot.go notFitMessage, formatReasons
def tas_not_fit(fit: int, total: int, nodes: int, excluded: str, topology: str = "gke-default") -> str:
    head = (
        f'topology "{topology}" allows to fit only {fit} out of {total} pod(s)' if fit else f'topology "{topology}" doesn\'t allow to fit any of {total} pod(s)'
    )
    return f"couldn't assign flavors to pod set workload: {head}. Total nodes: {nodes}; excluded: {excluded}"


def check(state: str, message: str = "", *, retries: int | None = None, after: int | None = None, name: str = CHECK) -> dict[str, Any]:
    """An AdmissionCheckState (workload_types.go AdmissionCheckState)."""
    found: dict[str, Any] = {"name": name, "state": state, "message": message, "lastTransitionTime": at(3)}
    if retries is not None:
        found["retryCount"] = retries
    if after is not None:
        found["requeueAfterSeconds"] = after
    return found


def provisioning_request(
    job: str = "llama", attempt: int = 1, conditions: list[dict[str, Any]] | None = None, kind: str = "JobSet", check_name: str = CHECK
) -> dict[str, Any]:
    """A ProvisioningRequest Kueue makes for the check (provisioning/controller.go: named
    <workload>-<check>-<attempt>, owned by the Workload), its conditions set by GKE's queued provisioning."""
    name = f"{workload_name(job, kind)}-{check_name}-{attempt}"
    return {
        "apiVersion": "autoscaling.x-k8s.io/v1",
        "kind": "ProvisioningRequest",
        "metadata": {
            "name": name,
            "namespace": NS,
            "labels": {"kueue.x-k8s.io/managed": "true"},
            "ownerReferences": [
                {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload", "name": workload_name(job, kind), "uid": uid("workload", job), "controller": True}
            ],
        },
        "spec": {
            "provisioningClassName": "queued-provisioning.gke.io",
            "podSets": [{"podTemplateRef": {"name": f"ppt-{name}-workload"}, "count": 4}],
            "parameters": {"maxRunDurationSeconds": "86400"},
        },
        "status": {"conditions": conditions or []},
    }


# ---------------------------------------------------------------------------------------------
# Pods, nodes, events


def pod(
    index: int,
    *,
    job: str = "llama",
    phase: str = "Running",
    node: str | None = None,
    containers: list[dict[str, Any]] | None = None,
    init: list[dict[str, Any]] | None = None,
    conditions: list[dict[str, Any]] | None = None,
    tolerations: list[dict[str, Any]] | None = None,
    started: float = 30,
) -> dict[str, Any]:
    """A pod of the JobSet's Indexed Job, labelled as JobSet v0.12.0 and the Job controller label them."""
    child = f"{job}-workload-0"
    name = f"{child}-{index}-{hashlib.sha1(f'{job}{index}'.encode()).hexdigest()[:5]}"
    status: dict[str, Any] = {"phase": phase, "conditions": conditions if conditions is not None else [cond("Ready", "True", "", "", started)]}
    status["conditions"] = [{k: v for k, v in c.items() if v != "" and k != "observedGeneration"} for c in status["conditions"]]
    if phase != "Pending" or node:
        status["startTime"] = at(started)
    status["containerStatuses"] = containers if containers is not None else [running_container()]
    if init is not None:
        status["initContainerStatuses"] = init
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": NS,
            "uid": uid("pod", name),
            "labels": {
                "jobset.sigs.k8s.io/jobset-name": job,
                "jobset.sigs.k8s.io/replicatedjob-name": "workload",
                "jobset.sigs.k8s.io/job-index": "0",
                "batch.kubernetes.io/job-name": child,
                "batch.kubernetes.io/job-completion-index": str(index),
            },
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": child, "uid": uid("job", child), "controller": True}],
        },
        "spec": {
            **({"nodeName": node} if node else {}),
            "nodeSelector": {"cloud.google.com/gke-nodepool": POOL},
            "tolerations": tolerations if tolerations is not None else [{"key": GPU, "operator": "Exists", "effect": "NoSchedule"}],
            "containers": [{"name": "workload", "image": IMAGE}],
        },
        "status": status,
    }


def running_container(name: str = "workload", restarts: int = 0) -> dict[str, Any]:
    return {
        "name": name,
        "image": IMAGE,
        "imageID": IMAGE_ID,
        "ready": True,
        "restartCount": restarts,
        "started": True,
        "state": {"running": {"startedAt": at(30)}},
    }


def waiting_container(reason: str, message: str = "", name: str = "workload", restarts: int = 0, last: dict[str, Any] | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {
        "name": name,
        "imageID": "",  # the kubelet's, until the image is pulled
        "image": IMAGE,
        "ready": False,
        "restartCount": restarts,
        "state": {"waiting": {"reason": reason, **({"message": message} if message else {})}},
    }
    if last:
        found["lastState"] = {"terminated": last}
    return found


def terminated_container(exit_code: int, reason: str, name: str = "workload", message: str = "") -> dict[str, Any]:
    ended = {"exitCode": exit_code, "reason": reason, "startedAt": at(40), "finishedAt": at(10), **({"message": message} if message else {})}
    return {"name": name, "image": IMAGE, "imageID": IMAGE_ID, "ready": False, "restartCount": 0, "state": {"terminated": ended}}


def unschedulable(message: str) -> list[dict[str, Any]]:
    """PodScheduled=False as kube-scheduler sets it."""
    return [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message, "lastTransitionTime": at(8)}]


def node(name: str, *, ready: bool = True, taints: list[dict[str, Any]] | None = None, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"cloud.google.com/gke-nodepool": POOL, **(labels or {})}},
        "spec": {"taints": taints or []},
        "status": {
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True" if ready else "False",
                    "reason": "KubeletReady" if ready else "KubeletNotReady",
                    "lastTransitionTime": at(30),
                }
            ]
        },
    }


def event(
    about: dict[str, Any], reason: str, message: str, *, minutes_ago: float = 4, component: str = "kubelet", kind: str = "Normal", first: float | None = None
) -> dict[str, Any]:
    """A core/v1 Event as the recorders write it."""
    name = about["metadata"]["name"]
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{name}.{hashlib.sha1((reason + message).encode()).hexdigest()[:16]}", "namespace": NS},
        "involvedObject": {"apiVersion": about["apiVersion"], "kind": about["kind"], "name": name, "namespace": NS, "uid": about["metadata"].get("uid", "")},
        "reason": reason,
        "message": message,
        "type": kind,
        "source": {"component": component},
        "count": 1,
        "firstTimestamp": at(first if first is not None else minutes_ago),
        "lastTimestamp": at(minutes_ago),
    }


def cluster_queue(name: str = QUEUE, pending: int = 0) -> dict[str, Any]:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": {},
        "status": {"pendingWorkloads": pending, "admittedWorkloads": 1},
    }


def local_queue(name: str = QUEUE, cq: str = QUEUE) -> dict[str, Any]:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"clusterQueue": cq},
        "status": {},
    }


def pending_item(job: str, position: int, kind: str = "JobSet", queue: str = QUEUE) -> dict[str, Any]:
    """One PendingWorkload of the visibility API (apis/visibility/v1beta2/types.go; positions from 0)."""
    return {
        "metadata": {"name": workload_name(job, kind), "namespace": NS},
        "priority": 0,
        "localQueueName": queue,
        "positionInClusterQueue": position,
        "positionInLocalQueue": position,
    }


def pending_summary(cq: str, items: list[dict[str, Any]]) -> dict[str, Any]:
    """The visibility API's answer, named after its queue as `trainstack status --dump` saves it."""
    return {"apiVersion": "visibility.kueue.x-k8s.io/v1beta2", "kind": "PendingWorkloadsSummary", "metadata": {"name": cq}, "items": items}


def multikueue_cluster(name: str, active: bool = True, message: str = "Connected") -> dict[str, Any]:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "MultiKueueCluster",
        "metadata": {"name": name},
        "spec": {"clusterSource": {"kubeConfig": {"locationType": "Secret", "location": f"{name}-kubeconfig"}}},
        "status": {"conditions": [cond("Active", "True" if active else "False", "Active" if active else "ClientConnectionFailed", message)]},
    }
