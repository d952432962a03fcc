"""A4X jobs are admitted by Kueue 0.19.2, judged by Kueue's own DRA accounting (ported in
tests/kueue_dra.py from kubernetes-sigs/kueue v0.19.2 pkg/dra/claims.go, mapper.go and
pkg/workload/workload.go), run over what the stack renders: the Kueue Configuration in the chart's
values (`managerConfig.controllerManagerConfigYaml`), the ClusterQueue, the training JobSet, and the
ResourceClaimTemplate the DRA driver v25.3.0 makes from the job's ComputeDomain (its upstream
template, tests/upstream).

Kueue 0.19.2 has KueueDRAIntegration on by default (pkg/features/kube_features.go, Beta since 0.18)
and marks a Workload whose claims name an unmapped DeviceClass inadmissible, for good
(pkg/controller/core/workload_controller.go: a NotFound field error, SetRequeuedCondition false).
A job within one NVLink domain is required to stay in one sub-block (Cluster Toolkit 1047080
examples/gke-a4x/nccl-jobset-example.yaml).

On DRANET (A4X when the stack asks, A4X Max always) the pods also claim their node's RDMA NICs, a
ResourceClaimTemplate the stack renders itself (workloads/dranet.py), counted the same way: Kueue admits
the job only because the Configuration maps GKE's `mrdma.google.com` and the queue gives quota for it.
A4X Max's channels come from the DRA driver 25.8.0's template (tests/upstream)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from helpers import one, render
from kueue_dra import DRIVER_CHANNEL_CLASS, Inadmissible, devices_per_class, fits_somewhere, mapper, render_claim_template, workload_requests
from test_a4x_pools import a4x_raw
from trainstack.components.kueue import GKE_TOPOLOGY_LEVELS
from trainstack.core import catalog

RELEASE = "kubernetes:helm.sh/v3:Release"
KUEUE = "kubernetes:kueue.x-k8s.io/v1beta2"
DOMAIN = "kubernetes:resource.nvidia.com/v1beta1:ComputeDomain"
JOBSET = "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet"
JOB = "kubernetes:batch/v1:Job"
CHANNEL = "nvidia.com/compute-domain-channel"
MRDMA = catalog.MRDMA_RESOURCE
CLAIM_TEMPLATE = "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate"


def configuration(rendered) -> dict[str, Any]:
    return yaml.safe_load(one(rendered, RELEASE, "kueue").inputs["values"]["managerConfig"]["controllerManagerConfigYaml"])


def job_of(rendered):
    jobs = [r for r in rendered.registrations if r.type in (JOBSET, JOB) and "kueue.x-k8s.io/queue-name" in (r.inputs["metadata"].get("labels") or {})]
    (job,) = jobs
    return job


def cluster_queue_of(rendered, job) -> dict[str, Any]:
    """The ClusterQueue behind the job's LocalQueue."""
    local = job.inputs["metadata"]["labels"]["kueue.x-k8s.io/queue-name"]
    (lq,) = [r for r in rendered.registrations if r.type == f"{KUEUE}:LocalQueue" and r.inputs["metadata"]["name"] == local]
    (cq,) = [r for r in rendered.registrations if r.type == f"{KUEUE}:ClusterQueue" and r.inputs["metadata"]["name"] == lq.inputs["spec"]["clusterQueue"]]
    return cq.inputs["spec"]


def claim_templates(rendered, driver: str = "25.3.0") -> dict[str, dict[str, Any]]:
    """The namespace's ResourceClaimTemplates: what the DRA driver (chart `driver`) makes for each
    ComputeDomain, its channel's, and those the stack renders itself (DRANET's RDMA NICs)."""
    out = {r.inputs["metadata"]["name"]: r.inputs for r in rendered.registrations if r.type == CLAIM_TEMPLATE}
    for domain in (r for r in rendered.registrations if r.type == DOMAIN):
        name = domain.inputs["spec"]["channel"]["resourceClaimTemplate"]["name"]
        out[name] = render_claim_template(domain.inputs["metadata"]["namespace"], name, driver)
    return out


@pytest.fixture(scope="module")
def a4x():
    return render("a4x-llama3-70b")


def test_the_shipped_a4x_job_is_admitted_and_its_channels_counted(a4x) -> None:
    job = job_of(a4x)
    requests = workload_requests(job.inputs, claim_templates(a4x), configuration(a4x))
    assert requests[CHANNEL] == 16  # one channel a pod, 16 pods
    assert requests[MRDMA] == 16 * 4  # on DRANET: every pod claims its node's four RDMA NICs
    assert requests["nvidia.com/gpu"] == 64
    assert fits_somewhere(requests, cluster_queue_of(a4x, job)) == [one(a4x, f"{KUEUE}:ResourceFlavor").inputs["metadata"]["name"]]


def test_without_the_mapping_kueue_would_never_admit_it(a4x) -> None:
    """What the stack did before the mapping: Kueue's NotFound, the JobSet suspended for good."""
    config = {k: v for k, v in configuration(a4x).items() if k != "resources"}
    with pytest.raises(Inadmissible, match=f"DeviceClass {DRIVER_CHANNEL_CLASS} is not mapped"):
        workload_requests(job_of(a4x).inputs, claim_templates(a4x), config)


def test_without_the_quota_no_flavor_covers_the_channel(a4x) -> None:
    job = job_of(a4x)
    requests = workload_requests(job.inputs, claim_templates(a4x), configuration(a4x))
    queue = cluster_queue_of(a4x, job)
    group = queue["resourceGroups"][0]
    for resource in (CHANNEL, MRDMA):
        bare = {**queue, "resourceGroups": [{**group, "coveredResources": [r for r in group["coveredResources"] if r != resource]}]}
        with pytest.raises(Inadmissible, match=f"resource {resource} unavailable in ClusterQueue"):
            fits_somewhere(requests, bare)


@pytest.fixture(scope="module")
def a4x_max():
    return render("a4xmax-llama31-405b")


def test_the_shipped_a4x_max_job_is_admitted_with_its_channels_and_rdma_nics(a4x_max) -> None:
    """A4X Max: the DRA driver 25.8.0's channel template (catalog `dra_driver`) and eight MRDMA NICs a pod."""
    job = job_of(a4x_max)
    assert catalog.machine("a4x-maxgpu-4g-metal").dra_driver == catalog.DRA_DRIVER_CHART_GB300
    requests = workload_requests(job.inputs, claim_templates(a4x_max, "25.8.0"), configuration(a4x_max))
    assert (requests[CHANNEL], requests[MRDMA], requests["nvidia.com/gpu"]) == (16, 16 * 8, 64)
    assert fits_somewhere(requests, cluster_queue_of(a4x_max, job)) == [one(a4x_max, f"{KUEUE}:ResourceFlavor").inputs["metadata"]["name"]]


def test_without_the_mrdma_mapping_kueue_would_never_admit_a_dranet_job(a4x_max) -> None:
    config = configuration(a4x_max)
    mappings = [m for m in config["resources"]["deviceClassMappings"] if m["name"] != MRDMA]
    with pytest.raises(Inadmissible, match=f"DeviceClass {catalog.MRDMA_DEVICE_CLASS} is not mapped"):
        workload_requests(job_of(a4x_max).inputs, claim_templates(a4x_max, "25.8.0"), {**config, "resources": {"deviceClassMappings": mappings}})


def test_toolkits_all_nics_template_would_never_be_admitted(a4x_max) -> None:
    """Cluster Toolkit c765092 gke-node-pool resource-claim-template.yaml.tftpl (`default-rdma`, its
    default dranet_allocation_mode All): Kueue refuses allocation mode All, so trainstack asks ExactCount."""
    templates = claim_templates(a4x_max, "25.8.0")
    (ours,) = [name for name in templates if name.endswith("-rdma")]
    request = templates[ours]["spec"]["spec"]["devices"]["requests"][0]
    toolkit = {"exactly": {"deviceClassName": catalog.MRDMA_DEVICE_CLASS, "allocationMode": "All"}}
    templates[ours] = {"spec": {"spec": {"devices": {"requests": [{**request, **toolkit}]}}}}
    with pytest.raises(Inadmissible, match="All is not supported"):
        workload_requests(job_of(a4x_max).inputs, templates, configuration(a4x_max))


def test_the_25_8_channel_template_asks_one_channel_too() -> None:
    template = render_claim_template("ns", "t", "25.8.0")
    assert template["apiVersion"] == catalog.DRA_API
    assert devices_per_class(template["spec"]["spec"]) == {DRIVER_CHANNEL_CLASS: 1}


def test_the_mapping_names_the_class_the_driver_writes() -> None:
    """The catalog's class is the driver's constant, and its template asks one device of it."""
    template = render_claim_template("ns", "t")
    assert catalog.COMPUTE_DOMAIN_CHANNEL_CLASS == DRIVER_CHANNEL_CLASS
    assert devices_per_class(template["spec"]["spec"]) == {DRIVER_CHANNEL_CLASS: 1}


@pytest.mark.parametrize(("controller", "nodes"), [("jobset", 18), ("job", 9), ("jobset", 1)])
def test_every_a4x_job_size_and_controller_is_admitted(controller: str, nodes: int) -> None:
    rendered = render("a3ultra-405b", a4x_raw(trainstack_workload={"controller": controller, "nodes": nodes}))
    job = job_of(rendered)
    requests = workload_requests(job.inputs, claim_templates(rendered), configuration(rendered))
    assert requests[CHANNEL] == nodes
    assert fits_somewhere(requests, cluster_queue_of(rendered, job))


def test_machines_without_imex_map_nothing_and_cover_no_channel() -> None:
    rendered = render("a3ultra-405b")
    assert "resources" not in configuration(rendered)
    job = job_of(rendered)
    assert not {CHANNEL, MRDMA} & set(cluster_queue_of(rendered, job)["resourceGroups"][0]["coveredResources"])


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            {"devices": {"requests": [{"name": "a", "exactly": {"deviceClassName": "c", "count": 2}}, {"name": "b", "exactly": {"deviceClassName": "c"}}]}},
            {"c": 3},
        ),
        ({"devices": {"requests": [{"name": "a", "exactly": {"deviceClassName": "c", "allocationMode": "All"}}]}}, "All is not supported"),
        ({"devices": {"requests": [{"name": "a", "firstAvailable": [{"name": "x", "deviceClassName": "c"}]}]}}, "FirstAvailable"),
        ({"devices": {"requests": [{"name": "a", "exactly": {"deviceClassName": "c", "adminAccess": True}}]}}, "AdminAccess"),
    ],
)
def test_the_port_counts_and_refuses_as_claims_go_does(spec: dict[str, Any], expected: Any) -> None:
    if isinstance(expected, str):
        with pytest.raises(Inadmissible, match=expected):
            devices_per_class(spec)
    else:
        assert devices_per_class(spec) == expected


def test_the_first_mapping_of_a_class_wins_as_in_mapper_go() -> None:
    config = {"resources": {"deviceClassMappings": [{"name": "a", "deviceClassNames": ["x"]}, {"name": "b", "deviceClassNames": ["x", "y"]}]}}
    assert mapper(config) == {"x": "a", "y": "b"}


# --- one NVLink domain -----------------------------------------------------------------------------


def topology_annotations(rendered) -> dict[str, str]:
    spec = job_of(rendered).inputs["spec"]
    template = spec["replicatedJobs"][0]["template"]["spec"]["template"] if "replicatedJobs" in spec else spec["template"]
    return {k: v for k, v in template["metadata"]["annotations"].items() if k.startswith("kueue.x-k8s.io/podset-")}


def test_a_job_within_one_nvlink_domain_is_required_to_stay_in_one(a4x) -> None:
    assert topology_annotations(a4x) == {"kueue.x-k8s.io/podset-required-topology": catalog.NVLINK_DOMAIN_LEVEL}
    # the Topology has that level, so Kueue can place it (a level it lacks is never admitted)
    levels = [level["nodeLabel"] for level in one(a4x, f"{KUEUE}:Topology").inputs["spec"]["levels"]]
    assert catalog.NVLINK_DOMAIN_LEVEL in levels
    assert levels == list(GKE_TOPOLOGY_LEVELS)


def test_on_a_pool_of_two_domains_a_small_job_still_stays_in_one_and_a_large_one_keeps_its_request() -> None:
    pool = {"nodeCount": 36}
    small = render("a3ultra-405b", a4x_raw(pool, trainstack_workload={"nodes": 16}))
    assert topology_annotations(small) == {"kueue.x-k8s.io/podset-required-topology": catalog.NVLINK_DOMAIN_LEVEL}
    large = render("a3ultra-405b", a4x_raw(pool, trainstack_workload={"nodes": 20}))
    assert topology_annotations(large) == {"kueue.x-k8s.io/podset-preferred-topology": "kubernetes.io/hostname"}


def test_other_machines_keep_the_topology_they_ask_for() -> None:
    assert topology_annotations(render("a3ultra-405b")) == {"kueue.x-k8s.io/podset-preferred-topology": "kubernetes.io/hostname"}
