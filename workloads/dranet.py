"""A training pod's RDMA NICs through GKE's DRANET: one ResourceClaimTemplate per job, of the
machine's RDMA NICs, which every training pod claims.

GKE installs the DeviceClass `mrdma.google.com` on a cluster with DRANET
(docs.cloud.google.com/kubernetes-engine/docs/how-to/allocate-network-resources-dra). Cluster Toolkit's
templates ask for every device on the node (c765092 modules/compute/gke-node-pool/
resource-claim-template.yaml.tftpl `default-rdma`, `allocationMode: All`) or for the A4X Max's eight
(examples/gke-a4x-max-bm/nccl-jobset-example.yaml `nccl-test-all-mrdma`, ExactCount 8). trainstack writes
ExactCount with the machine's RDMA NICs (catalog `rdma_subnets`), the same devices on a node the job has
to itself: Kueue 0.19.2 refuses a claim in allocation mode All (pkg/dra/claims.go countDevicesPerClass)
and counts an ExactCount claim against the quota its Configuration maps the class to
(components.kueue, catalog MRDMA_DEVICE_CLASS).
"""

from __future__ import annotations

from trainstack.core import catalog
from trainstack.workloads.pod import Json, PodParts

CLAIM = "rdma"
REQUEST = "req-mrdma"  # Toolkit's request name


def claim_template_name(job: str) -> str:
    """The job's ResourceClaimTemplate of RDMA NICs."""
    return f"{job}-rdma"


def claim_template(job: str, namespace: str, machine: catalog.Machine) -> Json:
    """The ResourceClaimTemplate of one pod's RDMA NICs: every RDMA NIC of a node of `machine`."""
    exactly = {"deviceClassName": catalog.MRDMA_DEVICE_CLASS, "allocationMode": "ExactCount", "count": machine.rdma_subnets}
    return {
        "apiVersion": catalog.DRA_API,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": claim_template_name(job), "namespace": namespace, "labels": {"app.kubernetes.io/managed-by": "trainstack"}},
        "spec": {"spec": {"devices": {"requests": [{"name": REQUEST, "exactly": exactly}]}}},
    }


def parts(job: str) -> PodParts:
    """The training pod's claim on its node's RDMA NICs."""
    return PodParts(resource_claims=({"name": CLAIM, "resourceClaimTemplateName": claim_template_name(job)},))
