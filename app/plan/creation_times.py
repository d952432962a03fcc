"""Typical creation times of the resources a stack registers, each with its basis.

One representative figure (seconds, from the create call until Pulumi reports the resource
created) per key, for the deploy critical path. They are estimates from practice and the
providers' documented await behaviour, not measurements of any one deploy; change a figure
here, with its basis, when a measured deploy disagrees.

Keys are resource type tokens, plus a few refinements and families:

- GPU_NODE_POOL: a node pool of GPU machines created with nodes; EMPTY_NODE_POOL: any node
  pool created with zero nodes (autoscaling from 0). Other node pools use the type token.
- KUBERNETES_OBJECT: a Kubernetes object pulumi-kubernetes does not await (or told to skip
  its await), including every custom resource. Awaited kinds have their own entries.
- PROVIDER: an explicit provider resource (`pulumi:providers:<package>`).
- DEFAULT: any other custom resource type; the critical path report lists the types it timed so.
"""

from __future__ import annotations

from dataclasses import dataclass

from trainstack.app.plan.cost import NODE_POOL

GPU_NODE_POOL = f"{NODE_POOL}+gpu"
EMPTY_NODE_POOL = f"{NODE_POOL}+empty"
KUBERNETES_OBJECT = "kubernetes:*"
PROVIDER = "pulumi:providers:*"
DEFAULT = "*"
COMMAND = "command:local:Command"
PRELOAD_BUILD = f"{COMMAND}+preload"  # the preload disk image's build (components/image.py)


@dataclass(frozen=True)
class CreationTime:
    """A typical creation time in seconds and why that figure."""

    seconds: float
    basis: str


CREATION_TIMES: dict[str, CreationTime] = {
    # Project and IAM
    "gcp:projects/service:Service": CreationTime(60, "enabling a Google API: usually under a minute; container.googleapis.com can take 1-2 min"),
    "gcp:serviceaccount/account:Account": CreationTime(
        10, "service account: one call plus the provider's wait until it reads back (IAM is eventually consistent)"
    ),
    "gcp:projects/iAMMember:IAMMember": CreationTime(10, "IAM binding: a read-modify-write of the project policy, ~5-15 s"),
    "gcp:serviceaccount/iAMMember:IAMMember": CreationTime(10, "IAM binding on a service account (Workload Identity), ~5-15 s"),
    "gcp:storage/bucketIAMMember:BucketIAMMember": CreationTime(10, "IAM binding on a bucket, ~5-15 s"),
    "gcp:artifactregistry/repositoryIamMember:RepositoryIamMember": CreationTime(10, "IAM binding on a repository, ~5-15 s"),
    "gcp:secretmanager/secretIamMember:SecretIamMember": CreationTime(10, "IAM binding on a secret, ~5-15 s"),
    # Networking
    "gcp:compute/network:Network": CreationTime(30, "custom-mode VPC: 20-40 s in practice (a global operation)"),
    "gcp:compute/subnetwork:Subnetwork": CreationTime(30, "subnet with secondary ranges: 20-40 s in practice"),
    "gcp:compute/firewall:Firewall": CreationTime(15, "firewall rule: 10-20 s (a global operation)"),
    "gcp:compute/router:Router": CreationTime(20, "Cloud Router: 15-25 s"),
    "gcp:compute/routerNat:RouterNat": CreationTime(30, "Cloud NAT: an update of its router, 20-40 s"),
    "gcp:compute/address:Address": CreationTime(10, "static address: 5-15 s"),
    "gcp:compute/resourcePolicy:ResourcePolicy": CreationTime(10, "compact placement policy: metadata only, 5-15 s"),
    # GKE
    "gcp:container/cluster:Cluster": CreationTime(
        480,
        "GKE cluster: 6-10 min in practice (control plane, plus creating and deleting the default node pool when "
        "it is removed); GKE docs say creation takes several minutes",
    ),
    NODE_POOL: CreationTime(240, "CPU node pool of a few nodes: 3-5 min (instance template, instance groups, nodes booting and registering)"),
    GPU_NODE_POOL: CreationTime(
        900,
        "GPU node pool created with nodes (A3 Ultra/Mega/High, A2; compact placement, reservation, multi-NIC, GPU "
        "driver install): 10-20 min in practice; nodes boot in parallel, so one figure whatever the count",
    ),
    EMPTY_NODE_POOL: CreationTime(
        90,
        "node pool created with zero nodes (autoscaling from 0): instance template and groups only, 1-2 min; its "
        "nodes arrive when a workload asks for them, after the deploy",
    ),
    # Storage and images
    "gcp:storage/bucket:Bucket": CreationTime(3, "GCS bucket: one synchronous call, 1-3 s"),
    "gcp:compute/disk:Disk": CreationTime(10, "blank persistent disk: 5-15 s"),
    "gcp:filestore/instance:Instance": CreationTime(
        600, "Filestore instance: 5-10 min in practice; recipe 001 says its Filestore step 'may take 15 or more minutes'"
    ),
    "gcp:artifactregistry/repository:Repository": CreationTime(15, "Artifact Registry repository: 10-20 s"),
    COMMAND: CreationTime(
        1800,
        "the image build (Cloud Build of a NeMo image on nvcr.io/nvidia/nemo, tens of GB pulled and pushed): 20-40 min",
    ),
    PRELOAD_BUILD: CreationTime(
        1800,
        "the preload disk image's build (gke-disk-image-builder): a VM boots, pulls the image (a NeMo image's ~29 GB at the cold "
        "pull rate: ~13 min, catalog.startup), copies its unpacked layers to a disk, and an image is made of the disk: 20-40 min",
    ),
    # Kubernetes
    PROVIDER: CreationTime(2, "provider configure: reads its kubeconfig and discovers the API; creates nothing"),
    "pulumi:pulumi:StackReference": CreationTime(2, "reads another stack's outputs from the backend; creates nothing"),
    "kubernetes:helm.sh/v3:Release": CreationTime(
        90, "Helm release awaited until its Deployments and webhooks are ready (the Kueue or JobSet controller): 1-2 min"
    ),
    KUBERNETES_OBJECT: CreationTime(
        2,
        "one apply, no await (Namespace, ConfigMap, RBAC, PV/PVC, custom resources): 1-5 s; a JobSet is created this fast, and its job runs after the deploy",
    ),
    "kubernetes:apps/v1:Deployment": CreationTime(120, "awaited until Available: scheduling, image pull and readiness of its pods, 1-3 min"),
    "kubernetes:apps/v1:DaemonSet": CreationTime(
        120, "awaited until rolled out on every matching node (pulumi/pulumi-kubernetes#2953): image pull per node, 1-3 min"
    ),
    "kubernetes:apps/v1:StatefulSet": CreationTime(120, "awaited until its replicas are ready, 1-3 min"),
    "kubernetes:core/v1:Pod": CreationTime(60, "awaited until Ready: scheduling and image pull, ~1 min"),
    "kubernetes:core/v1:Service": CreationTime(
        120,
        "awaited until its endpoints are ready when it has a selector, so as long as its pods' rollout (1-3 min), plus a 10 s wait for stragglers",
    ),
    "kubernetes:batch/v1:Job": CreationTime(300, "awaited until Complete: a short setup job, ~5 min (the provider's default timeout is 10 min)"),
    DEFAULT: CreationTime(60, "a custom resource type not listed here: assume a minute, a typical create-and-poll"),
}
