"""Why a job's Kueue Workload is not admitted: its QuotaReserved condition read in plain words
(which resource is short in which flavor and by how much, where Topology Aware Scheduling failed),
its admission checks and their ProvisioningRequests, waitForPodsReady evictions and backoff, and
deactivation; with its position in the queue. The vocabulary and its sources: sources.py."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

from trainstack.app.status import sources as src
from trainstack.app.status.facts import QUEUED, Why, ago, brief, condition, is_true, name_of, namespace_of, parse_time, utc
from trainstack.app.status.snapshot import Cluster, meta

POOL_SIZE = "the GPU pool's size (trainstack:gpuPool.nodeCount or .autoscaling.maxNodes; trainstack:gpuPools[i] with several)"


def explain(cluster: Cluster, workload: dict[str, Any], now: datetime) -> Why:
    """A Workload that is not admitted: the first blocker Kueue records, in the order it applies them."""
    why = _deactivated(workload) or _backoff(workload, now)
    if why is None:
        reserved = condition(workload, src.QUOTA_RESERVED)
        if is_true(workload, src.QUOTA_RESERVED) or (reserved and reserved.get("message") == src.FAILED_CHECKS_MESSAGE):
            why = checks(cluster, workload, now)
        else:
            why = _quota(workload, reserved)
    why.facts.setdefault("workload", name_of(workload))
    evicted = condition(workload, src.EVICTED)
    if evicted is not None and evicted.get("status") == "True" and why.facts.get("evicted") is None:
        why.detail.append(f"last evicted: {evicted.get('reason', '')}: {evicted.get('message', '')}")
    if count := ((workload.get("status") or {}).get("requeueState") or {}).get("count"):
        why.detail.append(f"requeued {count} time(s) after evictions")
    why.facts["conditions"] = [brief(c) for c in (workload.get("status") or {}).get("conditions") or []]
    _position(cluster, workload, why)
    return why


# ---------------------------------------------------------------------------------------------
# QuotaReserved=False


def _quota(workload: dict[str, Any], reserved: dict[str, Any] | None) -> Why:
    queue = (workload.get("spec") or {}).get("queueName", "?")
    if reserved is None:
        return Why(QUEUED, f"waiting for Kueue to evaluate it in LocalQueue {queue}", "nothing to do: Kueue's scheduler has not reached it yet")
    reason, message = str(reserved.get("reason", "")), str(reserved.get("message", ""))
    facts: dict[str, Any] = {"reason": reason, "message": message}
    if found := src.MAX_QUOTA.search(message):
        return Why(
            QUEUED,
            f"needs {_amount(found['before'], found['request'])} {found['resource']} in flavor {found['flavor']}, more than its ClusterQueue can ever give ({found['max']})",
            f"shrink the job (trainstack:workload.nodes) or raise {POOL_SIZE} and run `trainstack up`: no wait will admit it",
            facts=facts | {"resource": found["resource"], "flavor": found["flavor"], "maximum": found["max"]},
        )
    if found := src.UNUSED_QUOTA.search(message):
        shorts = [(m["resource"], m["flavor"], m["short"]) for m in src.UNUSED_QUOTA.finditer(message)]
        short = "; ".join(f"{r} short by {s} in flavor {f}" for r, f, s in shorts)
        return Why(
            QUEUED,
            f"waiting for quota: {short}",
            f"wait for running jobs in the ClusterQueue to finish (or preempt them with a higher trainstack:workload.priorityClass), or raise {POOL_SIZE}",
            detail=[message] + (["Kueue is preempting lower-priority workloads for it"] if src.PREEMPTING in message else []),
            facts=facts | {"short": [{"resource": r, "flavor": f, "amount": s} for r, f, s in shorts]},
        )
    if found := src.TAS_FIT.search(message):
        return _topology(workload, found, message, facts)
    if found := src.TAS_NO_DOMAINS.search(message):
        return Why(
            QUEUED,
            f"Topology Aware Scheduling finds no node at topology level {found['level']}",
            "the GPU nodes lack that level's label: check the pool's nodes exist and carry it, or relax the job's topology",
            facts=facts | {"level": found["level"]},
        )
    if found := src.UNTOLERATED_FLAVOR_TAINT.search(message):
        return Why(
            QUEUED,
            f"no flavor fits: flavor {found['flavor']} has taint {found['taint']} that the job does not tolerate",
            "add the toleration to the job (trainstack:workload.tolerations) or use a queue whose flavor fits",
            facts=facts,
        )
    if found := src.FLAVOR_AFFINITY.search(message):
        return Why(
            QUEUED,
            f"no flavor fits: flavor {found['flavor']} does not match the job's node affinity",
            "drop the node selector or affinity, or submit to the queue of that machine",
            facts=facts,
        )
    if reason == src.MISCONFIGURED or src.MISSING_QUEUE.search(message):
        return Why(
            QUEUED,
            f"Kueue cannot queue it: {message}",
            "submit it to a LocalQueue of the platform (`trainstack validate` lists them), or `trainstack up` the platform",
            facts=facts,
        )
    if reason == src.SUSPENDED or src.INACTIVE_QUEUE.search(message):
        return Why(QUEUED, f"its queue is stopped: {message}", "resume the queue: set its spec.stopPolicy to None (`kubectl edit`)", facts=facts)
    if reason == src.WAITING_FOR_PODS_READY or src.WAITING_FOR_PODS_READY_MESSAGE in message:
        return Why(
            QUEUED,
            "waitForPodsReady blocks admission until the jobs admitted before it have all their pods ready",
            "wait, or find why the earlier job's pods are not ready (`trainstack status` on it); trainstack:kueue.waitForPodsReady.blockAdmission: false lifts the block",
            facts=facts,
        )
    if reason == src.ADMISSION_GATED:
        return Why(QUEUED, f"Kueue holds it: {message}", "remove the kueue.x-k8s.io/admission-gated-by annotation once the gate's owner is done", facts=facts)
    if reason == src.WAITING_FOR_PREEMPTED:
        return Why(
            QUEUED, "waiting for the workloads Kueue preempted for it to release their quota", "nothing to do: it is admitted once they stop", facts=facts
        )
    return Why(
        QUEUED,
        f"Kueue: {reason or 'pending'}{': ' + message if message else ''}",
        "nothing to do until Kueue's next scheduling pass, unless the message names a problem",
        facts=facts,
    )


def _amount(before: str, request: str) -> str:
    return request if before in ("0", "") else f"{request} (with {before} for its other pod sets)"


def _topology(workload: dict[str, Any], found: re.Match[str], message: str, facts: dict[str, Any]) -> Why:
    levels = [lvl for ps in (workload.get("spec") or {}).get("podSets") or [] for lvl in _levels(ps)]
    level = ", ".join(dict.fromkeys(levels)) or "the topology's lowest level"
    fit, total, unit = int(found["fit"] or 0), found["total"], found["unit"]
    excluded = src.TAS_EXCLUDED.search(message)
    detail = [message]
    cause = f"Topology Aware Scheduling cannot place it within one {level} of topology {found['topology']}: {fit} of {total} {unit}s fit"
    fix = "wait for running jobs in that domain to finish, shrink the job, or make its topology preferred instead of required (trainstack:workload.topology)"
    if excluded:
        cause += f" ({excluded['nodes']} nodes, excluded: {excluded['excluded']})"
        if "taint" in excluded["excluded"]:
            fix = "untaint or repair the excluded nodes (kubectl describe nodes), " + fix
    return Why(QUEUED, cause, fix, detail=detail, facts=facts | {"topology": found["topology"], "level": levels, "fit": fit, "total": int(total)})


def _levels(pod_set: dict[str, Any]) -> list[str]:
    request = pod_set.get("topologyRequest") or {}
    return [v for v in (request.get("required"), request.get("preferred")) if isinstance(v, str)]


# ---------------------------------------------------------------------------------------------
# Admission checks and ProvisioningRequests


def checks(cluster: Cluster, workload: dict[str, Any], now: datetime) -> Why:
    """Quota is reserved (or was, until a check failed): the first check not Ready, with the
    ProvisioningRequest behind it when it is the provisioning check."""
    states = (workload.get("status") or {}).get("admissionChecks") or []
    waiting = [s for s in states if s.get("state") != src.CHECK_READY]
    if not waiting:
        return Why(QUEUED, "every admission check is Ready; Kueue admits it at its next pass", "nothing to do")
    check = min(waiting, key=lambda s: (s.get("state") != src.CHECK_REJECTED, s.get("state") != src.CHECK_RETRY))
    name, state, message = str(check.get("name", "?")), str(check.get("state", "?")), str(check.get("message", ""))
    facts: dict[str, Any] = {
        "admissionCheck": {k: check.get(k) for k in ("name", "state", "message", "retryCount", "requeueAfterSeconds", "lastTransitionTime")}
    }
    request = provisioning_request(cluster, workload, name)
    retry = _retry_note(check, now)
    if request is None:
        return Why(
            QUEUED,
            f"admission check {name} is {state}{': ' + message if message else ''}",
            "nothing to do while it is Pending; a Rejected check deactivates the job" + retry,
            facts=facts,
        )
    why = _provisioning(request, state)
    why.facts |= facts | {
        "provisioningRequest": {"name": name_of(request), "conditions": [brief(c) for c in (request.get("status") or {}).get("conditions") or []]}
    }
    why.detail.append(f"admission check {name}: {state}{' (' + message + ')' if message else ''}{retry}")
    return why


def provisioning_request(cluster: Cluster, workload: dict[str, Any], check: str) -> dict[str, Any] | None:
    """The Workload's latest ProvisioningRequest for `check`: `<workload>-<check>-<attempt>`, the highest attempt."""
    pattern = re.compile(re.escape(f"{name_of(workload)}-{check}-") + r"(\d+)$")
    owned = [r for r in cluster.of("ProvisioningRequest") if namespace_of(r) == namespace_of(workload) and pattern.match(name_of(r))]
    return max(owned, key=lambda r: int(pattern.match(name_of(r)).group(1)), default=None)  # type: ignore[union-attr]


def _provisioning(request: dict[str, Any], state: str) -> Why:
    name = name_of(request)
    klass = (request.get("spec") or {}).get("provisioningClassName", "")
    dws = "DWS" if "queued-provisioning" in klass else "the autoscaler"
    failed, expired, revoked = (condition(request, t) for t in (src.PR_FAILED, src.PR_BOOKING_EXPIRED, src.PR_CAPACITY_REVOKED))
    provisioned = condition(request, src.PR_PROVISIONED)
    retrying = (
        "Kueue retries it after a backoff"
        if state == src.CHECK_RETRY
        else "Kueue deactivates the job (the check is Rejected)"
        if state == src.CHECK_REJECTED
        else ""
    )
    if failed and failed.get("status") == "True":
        message = str(failed.get("message", ""))
        if pools := src.MAX_NODEPOOL_SIZE.search(message):
            where = f" ({pools['pools']})" if pools["pools"] else ""
            return Why(
                QUEUED,
                f"{dws} cannot provision it: the node pool is at its maximum size{where}",
                f"raise {POOL_SIZE} or wait for the jobs holding that pool's nodes to end; {retrying or 'Kueue retries it'} (kubernetes-sigs/kueue#5129)",
                detail=[f"ProvisioningRequest {name}: Failed: {message}"],
            )
        return Why(
            QUEUED,
            f"{dws} failed to provision it: {message or failed.get('reason', 'no message')}",
            (retrying or "Kueue retries it") + "; a request that keeps failing needs more capacity in the zone or a smaller job",
            detail=[f"ProvisioningRequest {name}: Failed ({failed.get('reason', '')})"],
        )
    if revoked and revoked.get("status") == "True":
        return Why(
            QUEUED,
            f"{dws} revoked the capacity it had provisioned: {revoked.get('message', '')}",
            "Kueue deactivates the job; reactivate it (spec.active: true on its Workload) or resubmit it once capacity returns",
        )
    if expired and expired.get("status") == "True":
        return Why(
            QUEUED,
            f"the booked capacity expired before the pods used it: {expired.get('message', '')}",
            f"find why the pods did not schedule in time (kubectl describe pods); {retrying or 'Kueue retries it'}",
        )
    if provisioned and provisioned.get("status") == "True":
        return Why(QUEUED, f"{dws} provisioned the nodes; Kueue admits it at its next pass", "nothing to do")
    if is_true(request, src.PR_ACCEPTED):
        message = str((provisioned or {}).get("message", ""))
        return Why(
            QUEUED,
            f"{dws} accepted ProvisioningRequest {name} and has not found capacity yet" + (f": {message}" if message else ""),
            "nothing to fix: it waits until all the nodes can be had at once; to start sooner, shrink the job or use a reservation",
        )
    return Why(
        QUEUED,
        f"ProvisioningRequest {name} waits for {dws} to accept it",
        "nothing to do unless it stays so for minutes: then check the cluster autoscaler is on for the pool",
    )


def _retry_note(check: dict[str, Any], now: datetime) -> str:
    if check.get("state") != src.CHECK_RETRY:
        return ""
    count = check.get("retryCount")
    after = check.get("requeueAfterSeconds")
    since = parse_time(check.get("lastTransitionTime"))
    note = f"; retry {count}" if count else ""
    if after is not None and since is not None:
        note += f", requeued at {utc(since + timedelta(seconds=int(after)))}"
    return note


# ---------------------------------------------------------------------------------------------
# Eviction, backoff, deactivation


def _deactivated(workload: dict[str, Any]) -> Why | None:
    evicted = condition(workload, src.EVICTED)
    by_kueue = evicted is not None and evicted.get("status") == "True" and str(evicted.get("reason", "")).startswith(src.DEACTIVATED)
    if (workload.get("spec") or {}).get("active", True) and not by_kueue:
        return None
    reason = str((evicted or {}).get("reason", ""))
    message = str((evicted or {}).get("message", "")) or "spec.active is false"
    cause = reason.removeprefix(src.DEACTIVATED).removeprefix("DueTo")
    reactivate = f'kubectl patch workloads.kueue.x-k8s.io {name_of(workload)} -n {namespace_of(workload)} --type=merge -p \'{{"spec":{{"active":true}}}}\''
    if cause == src.REQUEUING_LIMIT_EXCEEDED:
        fix = f"its pods never all got ready in time (see the evictions in the detail): fix that, then reactivate it: {reactivate}"
    elif cause == src.EVICTED_ADMISSION_CHECK:
        fix = f"an admission check was rejected (the message says why): fix that, then reactivate it: {reactivate}"
    else:
        fix = f"reactivate it when wanted: {reactivate}"
    return Why(QUEUED, f"deactivated: {message}", fix, facts={"evicted": brief(evicted), "active": (workload.get("spec") or {}).get("active", True)})


def _backoff(workload: dict[str, Any], now: datetime) -> Why | None:
    state = (workload.get("status") or {}).get("requeueState") or {}
    evicted = condition(workload, src.EVICTED)
    if not state or is_true(workload, src.QUOTA_RESERVED):
        return None
    at = parse_time(state.get("requeueAt"))
    if at is None or at <= now:
        return None
    count = state.get("count", 0)
    message = str((evicted or {}).get("message", ""))
    by = "waitForPodsReady" if (evicted or {}).get("reason") == src.EVICTED_PODS_READY_TIMEOUT else "Kueue"
    return Why(
        QUEUED,
        f"evicted {count} time(s) by {by} ({message or (evicted or {}).get('reason', 'evicted')}); back in the queue at {utc(at)}, in {ago(now, at)}",
        "find why its pods did not all get ready in time (image pull, scale-up, volumes: the last attempt's events), "
        "or raise trainstack:kueue.waitForPodsReady.timeout",
        facts={"requeueState": state, "evicted": brief(evicted)},
    )


# ---------------------------------------------------------------------------------------------
# Position


def _position(cluster: Cluster, workload: dict[str, Any], why: Why) -> None:
    """Its place in its ClusterQueue from the visibility API's answer, if the dump holds it;
    else the ClusterQueue's count of pending workloads."""
    for summary in cluster.of("PendingWorkloadsSummary"):
        for item in summary.get("items") or []:
            if meta(item).get("name") == name_of(workload) and meta(item).get("namespace") == namespace_of(workload):
                position = int(item.get("positionInClusterQueue", 0)) + 1
                total = len(summary.get("items") or [])
                why.facts["position"] = {
                    "clusterQueue": meta(summary).get("name"),
                    "inClusterQueue": position,
                    "inLocalQueue": int(item.get("positionInLocalQueue", 0)) + 1,
                }
                why.detail.insert(0, f"position {position} of {total} pending in ClusterQueue {meta(summary).get('name')}")
                return
    queue = ((workload.get("status") or {}).get("admission") or {}).get("clusterQueue")
    for cq in cluster.of("ClusterQueue"):
        if queue in (None, name_of(cq)) and (pending := (cq.get("status") or {}).get("pendingWorkloads")) is not None and _serves(cluster, cq, workload):
            why.facts["position"] = {"clusterQueue": name_of(cq), "pending": pending}
            why.detail.insert(0, f"{pending} workload(s) pending in ClusterQueue {name_of(cq)} (position: needs the visibility API)")
            return


def _serves(cluster: Cluster, cq: dict[str, Any], workload: dict[str, Any]) -> bool:
    queue = cluster.get("LocalQueue", (workload.get("spec") or {}).get("queueName", ""), namespace_of(workload))
    return queue is not None and (queue.get("spec") or {}).get("clusterQueue") == name_of(cq)
