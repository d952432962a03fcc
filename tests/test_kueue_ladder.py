"""The capacity ladder of a3mega-capacity-platform (reservation, DWS queued, spot), walked with
Kueue 0.19.2's own flavor assignment and ProvisioningRequest retries (ported in
tests/kueue_flavors.py) over the rendered ClusterQueue, ResourceFlavors, ProvisioningRequestConfig
and Kueue Configuration, for the job a3mega-gpt3-175b-capacity-job renders.

What it shows, as Kueue 0.19.2 does it:
- The ladder moves on quota, not on capacity: a job goes to the first flavor with unused quota
  (flavorFungibility TryNextFlavor also skips a flavor it could only get by preempting).
- A DWS request GKE fails is retried on the queued flavor, `backoffLimitCount` times, then the job is
  deactivated; it never falls to spot while the queued flavor's quota is free.
- Spot has no provisioning check: it is admitted on quota and its nodes are made after, under
  waitForPodsReady, whose timeout holds the scale-up budget.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import yaml

from helpers import load_platform, of_type, one, render
from kueue_dra import pod_requests, pod_sets
from kueue_flavors import Attempt, Job, Running, assign, provision
from trainstack.app.deploy.stacks import raw_stack_config
from trainstack.components.kueue import GpuFlavor, Kueue, KueueArgs, KueueSpec
from trainstack.core import catalog, rules
from trainstack.core.errors import ArgsError

PLATFORM = "a3mega-capacity-platform"
JOB_STACK = "a3mega-gpt3-175b-capacity-job"
KUEUE = "kubernetes:kueue.x-k8s.io/v1beta2"
RELEASE = "kubernetes:helm.sh/v3:Release"
JOBSET = "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet"
JOB = "kubernetes:batch/v1:Job"


@pytest.fixture(scope="module")
def ladder() -> dict[str, Any]:
    """The platform's queue as Kueue reads it: ClusterQueue spec, flavors by name (and by pool),
    the ProvisioningRequestConfigs' retry strategies by check name, and the Configuration."""
    rendered = render(PLATFORM)
    (cq,) = of_type(rendered, f"{KUEUE}:ClusterQueue")
    flavors = {r.inputs["metadata"]["name"]: r.inputs["spec"] for r in of_type(rendered, f"{KUEUE}:ResourceFlavor")}
    checks = {r.inputs["metadata"]["name"]: r.inputs["spec"]["parameters"]["name"] for r in of_type(rendered, f"{KUEUE}:AdmissionCheck")}
    configs = {r.inputs["metadata"]["name"]: r.inputs["spec"] for r in of_type(rendered, f"{KUEUE}:ProvisioningRequestConfig")}
    config = yaml.safe_load(one(rendered, RELEASE, "kueue").inputs["values"]["managerConfig"]["controllerManagerConfigYaml"])
    by_pool = {spec["nodeLabels"]["cloud.google.com/gke-nodepool"]: name for name, spec in flavors.items()}
    return {
        "queue": cq.inputs["spec"],
        "flavors": flavors,
        "pool": by_pool,
        "retry": {check: configs[config_name]["retryStrategy"] for check, config_name in checks.items()},
        "check": {pool: f"{pool}-provisioning" for pool in by_pool},
        "configuration": config,
    }


@pytest.fixture(scope="module")
def pod() -> dict[str, Any]:
    """The capacity job's training pod template, as its workload stack renders it."""
    jobs = [r for r in render(JOB_STACK).registrations if r.type in (JOBSET, JOB)]
    (job,) = jobs
    [(_, _, spec)] = pod_sets(job.inputs)
    return spec


def job(pod: dict[str, Any], nodes: int, priority: int = 0) -> Job:
    return Job(nodes, pod_requests(pod), pod.get("nodeSelector") or {}, pod.get("tolerations") or [], priority)


def holding(ladder: dict[str, Any], pool: str, pod: dict[str, Any], nodes: int, priority: int = 0) -> Running:
    """A workload of `nodes` of the same pods admitted on `pool`'s flavor."""
    return Running(ladder["pool"][pool], job(pod, nodes).requests(), priority)


def test_the_flavors_are_tried_in_config_order(ladder) -> None:
    order = [f["name"] for f in ladder["queue"]["resourceGroups"][0]["flavors"]]
    assert order == [ladder["pool"][p] for p in ("a3-mega-reserved", "a3-mega-queued", "a3-mega-spot")]


@pytest.mark.parametrize(
    ("busy", "nodes", "lands_on"),
    [
        ((), 32, "a3-mega-reserved"),  # the reservation first
        ((), 1, "a3-mega-reserved"),
        ((("a3-mega-reserved", 20),), 12, "a3-mega-reserved"),  # what is left of it still fits
        ((("a3-mega-reserved", 20),), 13, "a3-mega-queued"),  # not all of it: the next rung
        ((("a3-mega-reserved", 32),), 32, "a3-mega-queued"),
        ((("a3-mega-reserved", 32), ("a3-mega-queued", 8)), 24, "a3-mega-queued"),
        ((("a3-mega-reserved", 32), ("a3-mega-queued", 8)), 25, "a3-mega-spot"),
        ((("a3-mega-reserved", 32), ("a3-mega-queued", 32), ("a3-mega-spot", 31)), 1, "a3-mega-spot"),
        ((("a3-mega-reserved", 32), ("a3-mega-queued", 32), ("a3-mega-spot", 32)), 1, None),  # waits for quota
        ((), 33, None),  # larger than any pool: never admitted
    ],
)
def test_each_job_size_lands_on_the_first_rung_with_unused_quota(ladder, pod, busy, nodes: int, lands_on: str | None) -> None:
    running = [holding(ladder, pool, pod, n) for pool, n in busy]
    assigned = assign(job(pod, nodes), ladder["queue"], ladder["flavors"], running)
    assert assigned.flavor == (ladder["pool"][lands_on] if lands_on else None), assigned
    if lands_on == "a3-mega-queued":
        assert assigned.checks == (ladder["check"]["a3-mega-queued"],)  # admitted once GKE provisions
    elif lands_on:
        assert assigned.checks == ()


def test_a_higher_priority_job_takes_the_next_rung_rather_than_preempting(ladder, pod) -> None:
    """flavorFungibility whenCanPreempt TryNextFlavor: a free rung wins over preemption; with no
    free rung left, the job preempts on the first flavor where it could."""
    low = [holding(ladder, "a3-mega-reserved", pod, 32, priority=100)]
    high = job(pod, 16, priority=1000)
    assert assign(high, ladder["queue"], ladder["flavors"], low).flavor == ladder["pool"]["a3-mega-queued"]
    full = [*low, holding(ladder, "a3-mega-queued", pod, 32, 1000), holding(ladder, "a3-mega-spot", pod, 32, 1000)]
    preempting = assign(high, ladder["queue"], ladder["flavors"], full)
    assert (preempting.flavor, preempting.mode) == (ladder["pool"]["a3-mega-reserved"], "preempt")


def test_a_failed_dws_request_is_retried_on_the_queued_rung_then_the_job_is_deactivated(ladder, pod) -> None:
    """GKE has no DWS capacity: Kueue asks again (backoff 60s, 120s, 240s), then rejects the check
    and deactivates the job. Spot, with free quota all along, is never tried."""
    check = ladder["check"]["a3-mega-queued"]
    retry = ladder["retry"][check]
    assert retry == {
        "backoffLimitCount": catalog.PROVISIONING_RETRY_LIMIT,
        "backoffBaseSeconds": catalog.PROVISIONING_RETRY_BASE_SECONDS,
        "backoffMaxSeconds": catalog.PROVISIONING_RETRY_MAX_SECONDS,
    }
    reserved_full = [holding(ladder, "a3-mega-reserved", pod, 32)]
    walk = provision(job(pod, 16), ladder["queue"], ladder["flavors"], ladder["retry"], {check: False}, reserved_full)
    queued = ladder["pool"]["a3-mega-queued"]
    assert walk == [
        Attempt(queued, 1, "Retry", 60),
        Attempt(queued, 2, "Retry", 120),
        Attempt(queued, 3, "Retry", 240),
        Attempt(queued, 4, "Rejected"),  # the workload is deactivated: resubmit it, or reactivate it
    ]
    assert ladder["pool"]["a3-mega-spot"] not in {a.flavor for a in walk}


def test_a_dws_request_that_succeeds_admits_the_job_on_the_queued_rung(ladder, pod) -> None:
    check = ladder["check"]["a3-mega-queued"]
    walk = provision(job(pod, 16), ladder["queue"], ladder["flavors"], ladder["retry"], {check: True}, [holding(ladder, "a3-mega-reserved", pod, 32)])
    assert walk == [Attempt(ladder["pool"]["a3-mega-queued"], 1, "Provisioned")]


def test_spot_is_admitted_on_quota_and_waits_for_its_nodes_under_the_scale_up_budget(ladder, pod) -> None:
    """No check on spot: Kueue admits at once and the autoscaler starts; waitForPodsReady must not
    evict the job before nodes, driver and image are there (catalog SCALE_UP_BUDGET_SECONDS)."""
    busy = [holding(ladder, "a3-mega-reserved", pod, 32), holding(ladder, "a3-mega-queued", pod, 32)]
    assert assign(job(pod, 8), ladder["queue"], ladder["flavors"], busy).checks == ()
    timeout = ladder["configuration"]["waitForPodsReady"]["timeout"]
    assert rules.duration_seconds(timeout) >= catalog.SCALE_UP_BUDGET_SECONDS


def test_the_job_tolerates_only_what_its_flavor_adds(ladder, pod) -> None:
    """The job selects its machine only; each flavor adds its pool and taints (Kueue merges the
    flavor's nodeLabels and tolerations into admitted pods), so every rung matches it."""
    assert ladder["flavors"]
    for name, flavor in ladder["flavors"].items():
        assert set(pod.get("nodeSelector") or {}) <= set(flavor["nodeLabels"]), name


# --- the timeout a pool that scales up gets ---------------------------------------------------------


def test_an_unset_timeout_is_raised_to_the_budget_only_where_a_pool_waits_for_the_autoscaler() -> None:
    capacity = load_platform(PLATFORM, raw_stack_config(PLATFORM))
    assert capacity.kueue.wait_for_pods_ready.timeout == "30m"  # the stack states it
    unset = raw_stack_config(PLATFORM)
    del unset["trainstack:kueue"]["waitForPodsReady"]
    assert load_platform(PLATFORM, unset).pods_ready_timeout == "30m"
    fixed = load_platform("a3mega-gpt3-175b", raw_stack_config("a3mega-gpt3-175b"))
    assert fixed.pods_ready_timeout == fixed.kueue.wait_for_pods_ready.timeout == "10m"


def test_a_queued_pool_alone_needs_no_budget_its_check_waits_for_the_nodes() -> None:
    raw = raw_stack_config(PLATFORM)
    raw["trainstack:gpuPools"] = raw["trainstack:gpuPools"][:2]  # reserved + queued
    raw["trainstack:kueue"]["waitForPodsReady"] = {"timeout": "10m"}
    assert load_platform(PLATFORM, raw).pods_ready_timeout == "10m"


def test_the_component_refuses_a_short_timeout_on_an_autoscaled_flavor_by_the_same_rule() -> None:
    spot = GpuFlavor("spot", "spot", "a3-megagpu-8g", 8, topology_aware=False, autoscaled=True)
    spec = KueueSpec.model_validate({"localQueue": "q", "clusterQueue": "q", "waitForPodsReady": {"timeout": "10m"}})
    with pytest.raises(ArgsError, match=r"waitForPodsReady\.timeout.*must be at least 30m: spot scales up"):
        KueueArgs.checked(KueueArgs(spec, "default", [spot]), Kueue, "kueue")
    queued = dataclasses.replace(spot, queued=True)
    assert KueueArgs.checked(KueueArgs(spec, "default", [queued]), Kueue, "kueue")
