"""The controllers' own vocabulary that `trainstack status` reads: condition types, reasons, states
and the messages they write, each ported from where it is defined (no upstream code copied).

Kueue v0.19.2 (kubernetes-sigs/kueue@v0.19.2):
- apis/kueue/v1beta2/workload_types.go: the Workload's condition types, the QuotaReserved reasons
  (the granular ones are written only with the `UnadmittedWorkloadsObservability` feature gate,
  Beta and off by default in 0.19, pkg/features/kube_features.go; without it the scheduler writes
  the same messages under the legacy reason `Pending`), the eviction reasons, the check states.
- pkg/scheduler/flavorassigner/flavorassigner.go `fitsResourceQuota`, `Status.Message`,
  `Assignment.Message`: "couldn't assign flavors to pod set P: " then the sorted reasons joined
  by ", ": "insufficient unused quota for R in flavor F, Q more needed", "insufficient quota for
  R in flavor F, previously considered podsets requests (A) + current podset request (B) >
  maximum capacity (M)", "untolerated taint T in flavor F", "flavor F doesn't match node affinity".
- pkg/cache/scheduler/tas_flavor_snapshot.go `notFitMessage`, `multiLayerNotFitMessage`,
  `findLevelWithFitDomains`: `topology "T" allows to fit only K out of N pod(s)`, `... doesn't
  allow to fit any of N pod(s)`, then ". Total nodes: N; excluded: taint "k": n, resource "r": n"
  and `no topology domains at level: L`.
- pkg/scheduler/scheduler.go: "The workload has failed admission checks",
  "waiting for all admitted workloads to be in PodsReady condition", ". Pending the preemption of
  N workload(s)"; workload_controller.go getQueueBlocker: "LocalQueue q doesn't exist",
  "ClusterQueue q is inactive".
- pkg/controller/core/workload_controller.go: "Exceeded the PodsReady timeout ns/name"
  (waitForPodsReady eviction, then status.requeueState count/requeueAt), a rejected check or the
  requeuing limit sets DeactivationTarget and the eviction reason `Deactivated[DueTo<cause>]`
  (pkg/workload/patching/patching.go ReasonWithCause) with "The workload is deactivated due to ...".
- pkg/controller/admissionchecks/provisioning/{provisioning.go,controller.go}: the
  ProvisioningRequest `<workload>-<check>-<attempt>`, owned by the Workload; the check's message
  "Retrying after failure: <Failed message>", "Retrying after booking expired: ...", the
  Provisioned message while Accepted, Rejected after `retryStrategy.backoffLimitCount`.
- apis/visibility/v1beta2/types.go: PendingWorkloadsSummary, positions counted from 0.
- pkg/controller/admissionchecks/multikueue/workload.go: `status.clusterName` (the worker that
  admitted it), `status.nominatedClusterNames`, "The workload was admitted on \"w\"".

Cluster autoscaler (kubernetes/autoscaler): ProvisioningRequest condition types at 55c37cd
cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1/types.go; reasons at 0099905
cluster-autoscaler/provisioningrequest/conditions/conditions.go. GKE's queued provisioning (DWS)
writes the same types with its own messages, e.g. "Max nodepool size reached, affected
nodepools: P" (kubernetes-sigs/kueue#5129). The scale-up event: `TriggeredScaleUp` "pod
triggered scale-up: [{group 0->4 (max: 4)}]" (processors/status/eventing_scale_up_processor.go).

JobSet v0.12.0 (kubernetes-sigs/jobset@v0.12.0): condition types in
api/jobset/v1alpha2/jobset_types.go; reasons and messages in pkg/constants/constants.go; the
failure policy's decision, "... (first failed job: J)", in pkg/controllers/failure_policy.go.

Kubelet (kubernetes/kubernetes; names unchanged across releases, read at 0a2f5b1 and 00bdb3f): waiting
reasons in pkg/kubelet/images/types.go (ErrImagePull, ImagePullBackOff, InvalidImageName,
ErrImageNeverPull) and pkg/kubelet/container/sync_result.go (CrashLoopBackOff); event reasons in
pkg/kubelet/events/event.go (Pulling, Pulled, FailedMount) and the image manager's message
`Pulling image "<image>"`; `OOMKilled` is the terminated reason the container runtime reports.

GKE (GoogleCloudPlatform/gke-mcp@11ba085 skills/gke-ai-troubleshooting-handle-disruption-gpu-tpu/
SKILL.md): the taint `cloud.google.com/impending-node-termination` and the node label
`cloud.google.com/scheduled-maintenance-time` (seconds since the epoch).

NCCL (NVIDIA/nccl@021e804 src/nccl.h.in `ncclResult_t`) result names and `NCCL WARN` lines; NVIDIA
driver Xid lines `NVRM: Xid (PCI:...): N, ...` (docs.nvidia.com/deploy/xid-errors).
"""

from __future__ import annotations

import re

# --- Kueue: Workload conditions, reasons, check states ----------------------------------------
QUOTA_RESERVED, ADMITTED, PODS_READY, EVICTED, REQUEUED, FINISHED = "QuotaReserved", "Admitted", "PodsReady", "Evicted", "Requeued", "Finished"
DEACTIVATION_TARGET = "DeactivationTarget"

WAITING_FOR_QUOTA = "WaitingForQuota"
EXCEEDS_MAX_QUOTA = "ExceedsMaxQuota"
TOPOLOGY_PLACEMENT_FAILED = "TopologyPlacementFailed"
NO_MATCHING_FLAVOR = "NoMatchingFlavor"
WAITING_FOR_PREEMPTED = "WaitingForPreemptedWorkloads"
MISCONFIGURED = "Misconfigured"
SUSPENDED = "Suspended"
WAITING_FOR_PODS_READY = "WaitingForPodsReady"
ADMISSION_GATED = "AdmissionGated"
INADMISSIBLE = "Inadmissible"  # legacy, without the feature gate

EVICTED_PODS_READY_TIMEOUT = "PodsReadyTimeout"
EVICTED_ADMISSION_CHECK = "AdmissionCheck"
EVICTED_PREEMPTED = "Preempted"
EVICTED_NODE_FAILURES = "NodeFailures"
DEACTIVATED = "Deactivated"  # the eviction reason's prefix: Deactivated, DeactivatedDueTo<cause>
REQUEUING_LIMIT_EXCEEDED = "RequeuingLimitExceeded"

CHECK_PENDING, CHECK_READY, CHECK_RETRY, CHECK_REJECTED = "Pending", "Ready", "Retry", "Rejected"

FAILED_CHECKS_MESSAGE = "The workload has failed admission checks"
WAITING_FOR_PODS_READY_MESSAGE = "waiting for all admitted workloads to be in PodsReady condition"
PREEMPTING = ". Pending the preemption of"  # scheduler.go, appended to the assignment's message
# workload_controller.go getQueueBlocker
MISSING_QUEUE = re.compile(r"(?:LocalQueue|ClusterQueue) \S+ doesn't exist")
INACTIVE_QUEUE = re.compile(r"(?:LocalQueue|ClusterQueue) \S+ is inactive")

UNUSED_QUOTA = re.compile(r"insufficient unused quota for (?P<resource>\S+) in flavor (?P<flavor>\S+), (?P<short>\S+) more needed")
MAX_QUOTA = re.compile(
    r"insufficient quota for (?P<resource>\S+) in flavor (?P<flavor>\S+), previously considered podsets requests \((?P<before>[^)]*)\)"
    r" \+ current podset request \((?P<request>[^)]*)\) > maximum capacity \((?P<max>[^)]*)\)"
)
TAS_FIT = re.compile(
    r"topology \"(?P<topology>[^\"]+)\" (?:allows to fit only (?P<fit>\d+) out of|doesn't allow to fit any of) (?P<total>\d+) (?P<unit>pod|slice)\(s\)"
)
TAS_EXCLUDED = re.compile(r"Total nodes: (?P<nodes>\d+); excluded: (?P<excluded>.*)$")
TAS_NO_DOMAINS = re.compile(r"no topology domains at level: (?P<level>\S+)")
UNTOLERATED_FLAVOR_TAINT = re.compile(r"untolerated taint (?P<taint>.+?) in flavor (?P<flavor>\S+)")
FLAVOR_AFFINITY = re.compile(r"flavor (?P<flavor>\S+) doesn't match node affinity")

PODSET_REQUIRED_TOPOLOGY = "kueue.x-k8s.io/podset-required-topology"
PODSET_PREFERRED_TOPOLOGY = "kueue.x-k8s.io/podset-preferred-topology"

# --- Cluster autoscaler: ProvisioningRequest --------------------------------------------------
PR_ACCEPTED, PR_PROVISIONED, PR_FAILED, PR_BOOKING_EXPIRED, PR_CAPACITY_REVOKED = "Accepted", "Provisioned", "Failed", "BookingExpired", "CapacityRevoked"
CAPACITY_NOT_FOUND = "CapacityIsNotFound"
MAX_NODEPOOL_SIZE = re.compile(r"max node ?pool size reached(?:, affected nodepools: (?P<pools>.+))?", re.IGNORECASE)
SCALE_UP = re.compile(r"(?P<group>\S+) (?P<current>\d+)->(?P<new>\d+) \(max: (?P<max>\d+)\)")
TRIGGERED_SCALE_UP, NOT_TRIGGER_SCALE_UP = "TriggeredScaleUp", "NotTriggerScaleUp"

# --- JobSet ---------------------------------------------------------------------------------
JOBSET_COMPLETED, JOBSET_FAILED, JOBSET_SUSPENDED = "Completed", "Failed", "Suspended"
REACHED_MAX_RESTARTS = "ReachedMaxRestarts"
FAILED_JOBS = "FailedJobs"
FAIL_JOBSET_ACTION = "FailJobSetFailurePolicyAction"
FIRST_FAILED_JOB = re.compile(r"\(first failed job: (?P<job>[^)]+)\)")
JOBSET_NAME_LABEL = "jobset.sigs.k8s.io/jobset-name"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
COMPLETION_INDEX_LABEL = "batch.kubernetes.io/job-completion-index"
JOB_INDEX_LABEL = "jobset.sigs.k8s.io/job-index"

# --- Kubelet and scheduler ------------------------------------------------------------------
IMAGE_PULL_FAILURES = ("ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull")
CRASH_LOOP = "CrashLoopBackOff"
OOM_KILLED = "OOMKilled"
PULLING, PULLED, FAILED_MOUNT, FAILED_SCHEDULING = "Pulling", "Pulled", "FailedMount", "FailedScheduling"

# --- GKE ------------------------------------------------------------------------------------
IMPENDING_TERMINATION_TAINT = "cloud.google.com/impending-node-termination"
SCHEDULED_MAINTENANCE_LABEL = "cloud.google.com/scheduled-maintenance-time"
NODE_POOL_LABEL = "cloud.google.com/gke-nodepool"

# --- NCCL and the GPU driver ----------------------------------------------------------------
NCCL_ERROR = re.compile(
    r"(NCCL WARN .*|.*\b(?:ncclUnhandledCudaError|ncclSystemError|ncclInternalError|ncclInvalidArgument|ncclInvalidUsage|ncclRemoteError|ncclTimeout)\b.*"
    r"|.*NCCL error.*)"
)
XID = re.compile(r"Xid \((?P<pci>[^)]*)\): (?P<code>\d+)")
