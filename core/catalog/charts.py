"""The pinned controllers: their Helm charts, the APIs and ports they serve, and the Kubernetes
version rendered objects are validated against.

Sources, by record:
- KUEUE_CHART, JOBSET_CHART: registry.k8s.io OCI charts; their versions match the CRDs bundled in
  app/schemas/crds.
- DRA_DRIVER_CHART: NVIDIA's DRA Driver for GPUs, for its ComputeDomains (IMEX across a multi-node NVLink
  domain): the chart repository, version and namespace Cluster Toolkit installs it from
  (GoogleCloudPlatform/cluster-toolkit 1047080 modules/management/kubectl-apply/main.tf
  install_nvidia_dra_driver, variables.tf `nvidia_dra_driver.version` v25.3.0); the chart is
  NVIDIA/k8s-dra-driver-gpu v25.3.0 (06db1a7) deployments/helm/nvidia-dra-driver-gpu, whose CRD is bundled
  in app/schemas/crds.
- DRA_DRIVER_CHART_GB300: the same chart at v25.8.0, which Cluster Toolkit's A4X Max blueprint installs
  (c765092 examples/gke-a4x-max-bm/gke-a4x-max-bm.yaml workload-manager-install `nvidia_dra_driver.version`
  v25.8.0); NVIDIA/k8s-dra-driver-gpu v25.8.0 (2ef1f2a), whose ComputeDomain CRD (a superset of 25.3.0's:
  `channel.allocationMode`, node `index` and `status`) is bundled in app/schemas/crds beside 25.3.0's.
- DRA_API, DRA_API_KUBERNETES: resource.k8s.io/v1, DRA's GA API, served from Kubernetes 1.34
  (kubernetes/api resource/v1; the DRA driver 25.8.0 chart's `resourceApiVersion` helper prefers it), in
  which GKE DRANET's ResourceClaimTemplates are written (Toolkit c765092 modules/compute/gke-node-pool/
  resource-claim-template.yaml.tftpl, examples/gke-a4x-max-bm/nccl-jobset-example.yaml). Objects of an
  API Kubernetes 1.32 does not serve are validated against the schemas of the minor that first does.
- DRA_BETA_APIS: the chart's DeviceClasses are resource.k8s.io/v1beta1 (its templates/deviceclass-*.yaml),
  beta APIs a GKE cluster serves only when asked: the four Toolkit's gke-a4x enables (1047080
  examples/gke-a4x/gke-a4x.yaml a4x-cluster `enable_k8s_beta_apis`).
- CONTROLLER_WEBHOOK_PORT, KUEUE_VISIBILITY_PORT: ports on the nodes the control plane calls for the pinned
  controllers: the Kueue and JobSet admission webhooks (their charts' manager `--webhook-port`/Configuration
  `webhook.port`) and Kueue's visibility API server (aggregated API, charts/kueue v0.19.2).
- The API versions are those the pinned controllers serve; COMPUTE_DOMAIN_API is the DRA driver's
  ComputeDomain (chart 25.3.0 CRD).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HelmChart:
    """An upstream Helm chart pinned by version (OCI registry or HTTP chart repository)."""

    name: str
    """The chart's name, also the release's."""
    repo: str
    """The OCI repository (`oci://registry.k8s.io/kueue/charts`) or the chart repository's URL
    (`https://helm.ngc.nvidia.com/nvidia`)."""
    version: str
    """The chart version."""
    namespace: str
    """The namespace the release installs into."""


KUEUE_CHART = HelmChart("kueue", "oci://registry.k8s.io/kueue/charts", "0.19.2", "kueue-system")
JOBSET_CHART = HelmChart("jobset", "oci://registry.k8s.io/jobset/charts", "0.12.0", "jobset-system")
# cluster-toolkit 1047080 modules/management/kubectl-apply; NVIDIA/k8s-dra-driver-gpu v25.3.0 (06db1a7)
DRA_DRIVER_CHART = HelmChart("nvidia-dra-driver-gpu", "https://helm.ngc.nvidia.com/nvidia", "25.3.0", "nvidia-dra-driver-gpu")
# cluster-toolkit c765092 examples/gke-a4x-max-bm; NVIDIA/k8s-dra-driver-gpu v25.8.0 (2ef1f2a)
DRA_DRIVER_CHART_GB300 = HelmChart("nvidia-dra-driver-gpu", "https://helm.ngc.nvidia.com/nvidia", "25.8.0", "nvidia-dra-driver-gpu")
# cluster-toolkit 1047080 examples/gke-a4x/gke-a4x.yaml `enable_k8s_beta_apis`
DRA_BETA_APIS = (
    "resource.k8s.io/v1beta1/deviceclasses",
    "resource.k8s.io/v1beta1/resourceclaims",
    "resource.k8s.io/v1beta1/resourceclaimtemplates",
    "resource.k8s.io/v1beta1/resourceslices",
)

CONTROLLER_WEBHOOK_PORT = 9443
KUEUE_VISIBILITY_PORT = 8082

KUEUE_API = "kueue.x-k8s.io/v1beta2"
KUEUE_CONFIG_API = "config.kueue.x-k8s.io/v1beta2"
JOBSET_API = "jobset.x-k8s.io/v1alpha2"
GKE_NETWORKING_API = "networking.gke.io/v1"
COMPUTE_DOMAIN_API = "resource.nvidia.com/v1beta1"
DRA_API = "resource.k8s.io/v1"
DRA_API_KUBERNETES = "1.34"  # the first minor serving DRA_API

# The Kubernetes minor version rendered objects are validated against.
KUBERNETES_VERSION = "1.32"
