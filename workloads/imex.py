"""IMEX across a multi-node NVLink domain, through NVIDIA's DRA driver: one ComputeDomain per job,
sized to the job's nodes, whose channel every training pod claims.

As the upstream A4X recipe does it (AI-Hypercomputer/gpu-recipes 2e1fd5e training/a4x/llama3_70b/
nemo-gke/nemo2602/64gpus-bf16-gbs256/templates/workload-job.yaml): a `ComputeDomain` with
`numNodes` = the job's nodes and `channel.resourceClaimTemplate.name`, and a pod `resourceClaims`
entry `compute-domain-channel` naming that template, claimed by the workload container
(`resources.claims`). The DRA driver's controller creates the ResourceClaimTemplate from the
ComputeDomain (NVIDIA/k8s-dra-driver-gpu v25.3.0; Cluster Toolkit 1047080 examples/gke-a4x/
nccl-jobset-example.yaml creates only the ComputeDomain too).
"""

from __future__ import annotations

from trainstack.components.kueue import GKE_TOPOLOGY_LEVELS
from trainstack.core import catalog
from trainstack.workloads.pod import Json, PodParts

CLAIM = "compute-domain-channel"
# The topology level of one NVLink domain (catalog NVLINK_DOMAIN_LEVEL), and the levels within it.
DOMAIN_LEVEL = catalog.NVLINK_DOMAIN_LEVEL
WITHIN_DOMAIN = GKE_TOPOLOGY_LEVELS[GKE_TOPOLOGY_LEVELS.index(DOMAIN_LEVEL) :]


def within_one_domain(machine: catalog.Machine, nodes: int) -> bool:
    """Whether a job of `nodes` nodes fits one multi-node NVLink domain of `machine` (and so must
    stay in one: its ComputeDomain cannot span two)."""
    return machine.nvlink_domain_nodes is not None and nodes <= machine.nvlink_domain_nodes


def channel_template(job: str) -> str:
    """The ResourceClaimTemplate the job's ComputeDomain has the driver create."""
    return f"{job}-channel"


def compute_domain(job: str, namespace: str, nodes: int) -> Json:
    """The job's ComputeDomain (named like the job), spanning its `nodes` nodes."""
    return {
        "apiVersion": catalog.COMPUTE_DOMAIN_API,
        "kind": "ComputeDomain",
        "metadata": {"name": job, "namespace": namespace, "labels": {"app.kubernetes.io/managed-by": "trainstack"}},
        "spec": {"numNodes": nodes, "channel": {"resourceClaimTemplate": {"name": channel_template(job)}}},
    }


def parts(job: str) -> PodParts:
    """The training pod's claim on the job's ComputeDomain channel."""
    return PodParts(resource_claims=({"name": CLAIM, "resourceClaimTemplateName": channel_template(job)},))
