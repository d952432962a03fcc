"""IMEX on A4X through NVIDIA's DRA driver: the driver from its pinned chart with Cluster Toolkit's
GKE values (1047080 modules/management/kubectl-apply/main.tf install_nvidia_dra_driver), one
ComputeDomain per job sized to the job's nodes, and every training pod claiming its channel as the
upstream recipe does (gpu-recipes 2e1fd5e training/a4x/llama3_70b/nemo-gke/nemo2602/
64gpus-bf16-gbs256/templates/workload-job.yaml). Every object passes its schema: core kinds the
Kubernetes 1.32 one, the ComputeDomain the DRA driver v25.3.0 CRD bundled in app/schemas/crds."""

from __future__ import annotations

from typing import Any

import pytest

from helpers import of_type, one, render
from test_a4x_pools import a4x_raw
from trainstack.app.schemas.validate import crd_for, validate_object
from trainstack.core import catalog

JOBSET = "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet"
JOB = "kubernetes:batch/v1:Job"
DOMAIN = "kubernetes:resource.nvidia.com/v1beta1:ComputeDomain"
RELEASE = "kubernetes:helm.sh/v3:Release"


@pytest.fixture(scope="module")
def rendered():
    return render("a3ultra-405b", a4x_raw())  # an 18-node A4X pool, a 16-node job


def pod_spec(reg) -> dict:
    spec = reg.inputs["spec"]
    template = spec["replicatedJobs"][0]["template"]["spec"]["template"] if "replicatedJobs" in spec else spec["template"]
    return template["spec"]


def test_the_compute_domain_spans_exactly_the_jobs_nodes(rendered) -> None:
    domain = one(rendered, DOMAIN)
    job = one(rendered, JOBSET)
    assert domain.inputs["spec"] == {"numNodes": 16, "channel": {"resourceClaimTemplate": {"name": "llama31-405b-channel"}}}
    assert domain.inputs["metadata"]["name"] == job.inputs["metadata"]["name"] == "llama31-405b"
    assert domain.inputs["metadata"]["namespace"] == job.inputs["metadata"]["namespace"]
    assert job.inputs["spec"]["replicatedJobs"][0]["template"]["spec"]["parallelism"] == 16


@pytest.mark.parametrize("nodes", [1, 9, 18])
def test_the_compute_domain_follows_the_job_not_the_pool(nodes: int) -> None:
    rendered = render("a3ultra-405b", a4x_raw(trainstack_workload={"nodes": nodes}))
    assert one(rendered, DOMAIN).inputs["spec"]["numNodes"] == nodes == pod_parallelism(one(rendered, JOBSET))


def pod_parallelism(job) -> int:
    return job.inputs["spec"]["replicatedJobs"][0]["template"]["spec"]["parallelism"]


@pytest.mark.parametrize("controller", ["jobset", "job"])
def test_every_training_pod_claims_the_domains_channel(controller: str) -> None:
    rendered = render("a3ultra-405b", a4x_raw(trainstack_workload={"controller": controller}))
    job = one(rendered, JOBSET if controller == "jobset" else JOB)
    spec = pod_spec(job)
    template = one(rendered, DOMAIN).inputs["spec"]["channel"]["resourceClaimTemplate"]["name"]
    assert spec["resourceClaims"] == [{"name": "compute-domain-channel", "resourceClaimTemplateName": template}]
    (workload,) = [c for c in spec["containers"] if c["name"] == "workload"]
    assert workload["resources"]["claims"] == [{"name": "compute-domain-channel"}]
    assert workload["resources"]["limits"] == {"nvidia.com/gpu": 4}


def test_the_job_waits_for_its_domain_and_the_domain_for_the_driver(rendered) -> None:
    domain = one(rendered, DOMAIN)
    assert domain.urn in one(rendered, JOBSET).dependencies
    driver = next(r for r in of_type(rendered, RELEASE) if r.inputs["name"] == "nvidia-dra-driver-gpu")
    assert driver.urn in domain.dependencies


def test_pods_tolerate_gkes_arm_taint_and_run_gibs_arm64_build(rendered) -> None:
    spec = pod_spec(one(rendered, JOBSET))
    assert {"key": "kubernetes.io/arch", "operator": "Equal", "value": "arm64", "effect": "NoSchedule"} in spec["tolerations"]
    assert [c["image"] for c in spec["initContainers"]] == ["us-docker.pkg.dev/gce-ai-infra/gpudirect-gib/nccl-plugin-gib-arm64:v1.1.0"]
    flavor = one(rendered, "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor")
    assert {"key": "kubernetes.io/arch", "operator": "Equal", "value": "arm64", "effect": "NoSchedule"} in flavor.inputs["spec"]["tolerations"]


def test_the_driver_is_installed_as_toolkit_installs_it_on_gke(rendered) -> None:
    driver = next(r for r in of_type(rendered, RELEASE) if r.inputs["name"] == "nvidia-dra-driver-gpu")
    inputs = driver.inputs
    assert (inputs["chart"], inputs["version"], inputs["repositoryOpts"], inputs["namespace"]) == (
        "nvidia-dra-driver-gpu",
        "25.3.0",
        {"repo": "https://helm.ngc.nvidia.com/nvidia"},
        "nvidia-dra-driver-gpu",
    )
    values = inputs["values"]
    assert values["image"] == {"repository": "nvcr.io/nvidia/k8s-dra-driver-gpu", "tag": "v25.3.0"}  # the chart's appVersion
    assert values["nvidiaDriverRoot"] == "/home/kubernetes/bin/nvidia"
    assert values["resources"] == {"gpus": {"enabled": False}}
    controller_terms = values["controller"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert controller_terms == [{"matchExpressions": [{"key": "nvidia.com/gpu", "operator": "DoesNotExist"}]}]
    plugin_terms = values["kubeletPlugin"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert plugin_terms == [
        {
            "matchExpressions": [
                {"key": "cloud.google.com/gke-accelerator", "operator": "In", "values": ["nvidia-gb200"]},
                {"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]},
            ]
        }
    ]
    assert values["kubeletPlugin"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"},
        {"key": "kubernetes.io/arch", "operator": "Equal", "value": "arm64", "effect": "NoSchedule"},
    ]
    quota = one(rendered, "kubernetes:core/v1:ResourceQuota")
    assert quota.inputs["metadata"]["namespace"] == "nvidia-dra-driver-gpu" and quota.urn in driver.dependencies
    assert quota.inputs["spec"]["scopeSelector"]["matchExpressions"] == [
        {"operator": "In", "scopeName": "PriorityClass", "values": ["system-node-critical", "system-cluster-critical"]}
    ]


def test_kueue_and_jobset_charts_keep_their_oci_reference(rendered) -> None:
    charts = {r.inputs["name"]: r.inputs for r in of_type(rendered, RELEASE) if r.inputs["name"] in ("kueue", "jobset")}
    assert sorted(charts) == ["jobset", "kueue"]
    for release in charts.values():
        assert release["chart"].startswith("oci://") and "repositoryOpts" not in release


def test_every_rendered_kubernetes_object_passes_its_schema(rendered) -> None:
    objects = [r for r in rendered.registrations if r.type.startswith("kubernetes:") and r.type != RELEASE and "apiVersion" in r.inputs]
    assert any(r.type == DOMAIN for r in objects)
    problems = [f"{r.type} {r.name}: {p}" for r in objects for p in validate_object(r.inputs)]
    assert problems == []


def test_the_training_pod_passes_the_kubernetes_pod_schema(rendered) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": pod_spec(one(rendered, JOBSET))}
    assert validate_object(pod) == []


def test_the_bundled_crd_refuses_a_domain_without_its_size() -> None:
    assert crd_for(catalog.COMPUTE_DOMAIN_API, "ComputeDomain") is not None
    domain: dict[str, Any] = {
        "apiVersion": catalog.COMPUTE_DOMAIN_API,
        "kind": "ComputeDomain",
        "metadata": {"name": "d", "namespace": "ml"},
        "spec": {"channel": {"resourceClaimTemplate": {"name": "d-channel"}}, "numNodes": 2},
    }
    assert validate_object(domain) == []
    del domain["spec"]["numNodes"]
    assert any("numNodes" in e for e in validate_object(domain))
    domain["spec"] |= {"numNodes": 2, "size": 2}
    assert any("size" in e for e in validate_object(domain))


def test_machines_without_a_multi_node_nvlink_domain_get_none_of_it() -> None:
    rendered = render("a3ultra-405b")
    assert of_type(rendered, DOMAIN) == []
    assert "resourceClaims" not in pod_spec(one(rendered, JOBSET))
    assert all(r.inputs["name"] != "nvidia-dra-driver-gpu" for r in of_type(rendered, RELEASE))
