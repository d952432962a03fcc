"""Kueue 0.19.2's flavor assignment and ProvisioningRequest retries, ported: which flavor of a
ClusterQueue a job lands on, and what a failed provisioning request does to it.

Ported rules (kubernetes-sigs/kueue v0.19.2, 8eab687):
- `findFlavorForPodSets` (pkg/scheduler/flavorassigner/flavorassigner.go): the flavors of the
  resource group in order; a flavor whose labels the pod's node selector contradicts, or whose
  taints the pod and the flavor's tolerations leave untolerated, is skipped (`checkFlavorForPodSets`);
  per covered resource `fitsResourceQuota`: above the nominal quota is `noFit`; within what is
  unused is `fit`; otherwise preemption is simulated: `preempt` when lower-priority workloads hold
  the flavor (the ClusterQueue's `withinClusterQueue: LowerPriority`), else `noPreemptionCandidates`.
  The flavor's mode is its worst resource's. `shouldTryNextFlavor`: on `noFit` and
  `noPreemptionCandidates` always, on `preempt` when `whenCanPreempt: TryNextFlavor`; otherwise the
  search stops there. When every flavor was tried, the best mode wins (`isPreferred`); only `fit`
  admits at once, `preempt` admits after evicting, the others leave the job pending.
- The scan starts at the first flavor: a job evicted by its admission check is requeued afresh, its
  last assignment gone (pkg/cache/queue/manager.go AddOrUpdateWorkload carries progress only for a
  workload still queued; pkg/scheduler/scheduler.go lastAssignmentOutdated drops it once the
  ClusterQueue changed, and an eviction changes it).
- `syncCheckStates` (pkg/controller/admissionchecks/provisioning/controller.go): a Failed
  ProvisioningRequest with attempt number <= `retryStrategy.backoffLimitCount` sets the check to
  Retry (the workload is evicted and requeued after `base * 2^(n-1)`, capped at `backoffMaxSeconds`,
  pkg/workload/admissionchecks.go UpdateAdmissionCheckRequeueState), a later one to Rejected, and a
  Rejected check deactivates the workload (pkg/controller/core/workload_controller.go
  reconcileCheckBasedEviction).

Departures: no cohorts (no borrowing, no reclaim; trainstack makes none), one PodSet, node affinity
beyond `nodeSelector` and partial admission are not ported.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kueue_dra import quantity

NO_FIT, NO_CANDIDATES, PREEMPT, FIT = 0, 1, 2, 4  # preemptionMode's order (reclaim, 3, needs a cohort)
MODES = {NO_FIT: "noFit", NO_CANDIDATES: "noPreemptionCandidates", PREEMPT: "preempt", FIT: "fit"}


@dataclass(frozen=True)
class Job:
    """A Workload of one PodSet: `pods` pods of `per_pod` requests, with the pod's node selector
    and tolerations, at `priority`."""

    pods: int
    per_pod: Mapping[str, float]
    node_selector: Mapping[str, str] = field(default_factory=dict)
    tolerations: Sequence[Mapping[str, str]] = ()
    priority: int = 0

    def requests(self) -> dict[str, float]:
        return {k: v * self.pods for k, v in self.per_pod.items()}


@dataclass(frozen=True)
class Running:
    """A workload already admitted on `flavor`, holding `usage`, at `priority`."""

    flavor: str
    usage: Mapping[str, float]
    priority: int = 0


@dataclass(frozen=True)
class Assignment:
    flavor: str | None  # None: pending, no flavor admits it now
    mode: str
    checks: tuple[str, ...] = ()  # admission checks the flavor adds (admissionChecksStrategy.onFlavors)


def _tolerated(taint: Mapping[str, str], tolerations: Sequence[Mapping[str, str]]) -> bool:
    for t in tolerations:
        if t.get("effect") not in (None, "", taint.get("effect")):
            continue
        if t.get("operator") == "Exists" and t.get("key") in (None, "", taint["key"]):
            return True
        if t.get("key") == taint["key"] and t.get("value", "") == taint.get("value", ""):
            return True
    return False


def flavor_matches(job: Job, flavor: Mapping[str, Any]) -> bool:
    """checkFlavorForPodSets: the pod's node selector, on the flavor's own label keys only, matches
    its labels; every NoSchedule/NoExecute taint of the flavor is tolerated."""
    labels = flavor.get("nodeLabels") or {}
    if any(labels[k] != v for k, v in job.node_selector.items() if k in labels):
        return False
    tolerations = [*job.tolerations, *(flavor.get("tolerations") or [])]
    return all(_tolerated(t, tolerations) for t in flavor.get("nodeTaints") or [] if t.get("effect") in ("NoSchedule", "NoExecute"))


def _mode(request: float, nominal: float, used: float, lower_priority_used: float) -> int:
    """fitsResourceQuota without a cohort: maximum capacity and nominal quota coincide."""
    if request > nominal:
        return NO_FIT
    if request <= nominal - used:
        return FIT
    return PREEMPT if request <= nominal - used + lower_priority_used else NO_CANDIDATES


def _should_try_next(mode: int, fungibility: Mapping[str, str]) -> bool:
    if mode in (NO_FIT, NO_CANDIDATES):
        return True
    return mode == PREEMPT and fungibility.get("whenCanPreempt", "TryNextFlavor") == "TryNextFlavor"


def assign(job: Job, cluster_queue: Mapping[str, Any], flavors: Mapping[str, Mapping[str, Any]], running: Sequence[Running] = ()) -> Assignment:
    """The flavor Kueue picks for `job` in `cluster_queue` (its spec), with `flavors` the
    ResourceFlavor specs by name and `running` the workloads already admitted in the queue."""
    (group,) = cluster_queue["resourceGroups"]
    requests = job.requests()
    missing = [r for r in requests if r not in group["coveredResources"]]
    if missing:
        return Assignment(None, f"resource {missing[0]} unavailable in ClusterQueue")
    fungibility = cluster_queue.get("flavorFungibility") or {}
    best_name, best = None, NO_FIT
    for entry in group["flavors"]:
        name = entry["name"]
        if not flavor_matches(job, flavors[name]):
            continue
        quota = {r["name"]: quantity(r["nominalQuota"]) for r in entry["resources"]}
        here = [w for w in running if w.flavor == name]
        mode = min(
            _mode(
                requests[r],
                quota[r],
                sum(w.usage.get(r, 0) for w in here),
                sum(w.usage.get(r, 0) for w in here if w.priority < job.priority),
            )
            for r in requests
        )
        if not _should_try_next(mode, fungibility):
            best_name, best = name, mode
            break
        if mode > best:
            best_name, best = name, mode
    if best not in (FIT, PREEMPT):
        return Assignment(None, MODES[best])
    checks = tuple(
        c["name"] for c in (cluster_queue.get("admissionChecksStrategy") or {}).get("admissionChecks", []) if best_name in c.get("onFlavors", [best_name])
    )
    return Assignment(best_name, MODES[best], checks)


@dataclass(frozen=True)
class Attempt:
    flavor: str | None
    request: int  # the ProvisioningRequest's attempt number (0: no request)
    outcome: str  # Provisioned, Retry, Rejected, or Pending (no flavor)
    requeue_after_s: int = 0


def provision(
    job: Job,
    cluster_queue: Mapping[str, Any],
    flavors: Mapping[str, Mapping[str, Any]],
    retry_strategies: Mapping[str, Mapping[str, int]],
    provisioned: Mapping[str, bool],
    running: Sequence[Running] = (),
) -> list[Attempt]:
    """Admission of `job` when every ProvisioningRequest of a check named in `provisioned` is
    answered that way (True: Provisioned, False: Failed), until the job runs, waits, or is
    deactivated; `retry_strategies` are the checks' ProvisioningRequestConfig retryStrategy."""
    history: list[Attempt] = []
    attempts: dict[str, int] = {}
    while True:
        chosen = assign(job, cluster_queue, flavors, running)
        if chosen.flavor is None:
            return [*history, Attempt(None, 0, "Pending")]
        if not chosen.checks:
            return [*history, Attempt(chosen.flavor, 0, "Provisioned")]
        (check,) = chosen.checks
        attempts[check] = attempt = attempts.get(check, 0) + 1
        if provisioned[check]:
            return [*history, Attempt(chosen.flavor, attempt, "Provisioned")]
        retry = retry_strategies[check]
        if attempt > retry["backoffLimitCount"]:
            return [*history, Attempt(chosen.flavor, attempt, "Rejected")]
        backoff = min(retry["backoffBaseSeconds"] * 2 ** (attempt - 1), retry["backoffMaxSeconds"])
        history.append(Attempt(chosen.flavor, attempt, "Retry", backoff))
