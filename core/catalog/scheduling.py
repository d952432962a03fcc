"""How Kueue and the DRA driver place and retry a job: facts of the pinned Kueue 0.19.2 and NVIDIA DRA
driver 25.3.0 that trainstack's queues and jobs are written against.

Sources, by record:
- COMPUTE_DOMAIN_CHANNEL_CLASS: the DeviceClass of a ComputeDomain's IMEX channel. The DRA driver's
  controller writes it into the ResourceClaimTemplate it makes for each ComputeDomain
  (NVIDIA/k8s-dra-driver-gpu v25.3.0 06db1a7 cmd/compute-domain-controller/computedomain.go
  `computeDomainDefaultChannelDeviceClass`, templates/compute-domain-workload-claim-template.tmpl.yaml:
  one request, `exactly.deviceClassName` only, so the API's defaults make it one device, allocationMode
  ExactCount, count 1).
- COMPUTE_DOMAIN_CHANNEL_RESOURCE: Kueue 0.19.2 accounts DRA devices by default
  (pkg/features/kube_features.go KueueDRAIntegration, Beta, on since 0.18) and marks a workload
  inadmissible when a DeviceClass its pods claim is not in the Configuration's
  `resources.deviceClassMappings` (pkg/dra/claims.go GetResourceRequestsForResourceClaimTemplates). This
  is the logical resource trainstack maps the channel to, and gives quota for in the queue of every machine
  with an NVLink domain across nodes.
- MRDMA_RESOURCE: the logical resource trainstack maps GKE DRANET's RDMA DeviceClass (catalog
  MRDMA_DEVICE_CLASS) to in Kueue's Configuration, as COMPUTE_DOMAIN_CHANNEL_RESOURCE for the channel; the
  queue of a DRANET pool gives quota for every RDMA NIC of its nodes.
- NVLINK_DOMAIN_LEVEL: the node label of the topology level one NVLink domain is: Cluster Toolkit 1047080
  examples/gke-a4x/nccl-jobset-example.yaml requires `kueue.x-k8s.io/podset-required-topology` on it, so
  the pods of a ComputeDomain (which cannot span NVLink domains) share one.
- PROVISIONING_RETRY_*: the Kueue ProvisioningRequestConfig retry strategy, written out: Kueue 0.19.2's own
  defaults (apis/kueue/v1beta2/provisioningrequestconfig_types.go `retryStrategy`: backoffLimitCount 3,
  backoffBaseSeconds 60, backoffMaxSeconds 1800). A failed request is retried while its attempt number is
  at most the limit (pkg/controller/admissionchecks/provisioning/controller.go syncCheckStates:
  `attempt <= backoffLimitCount` -> Retry, else Rejected): 4 requests in all, then the workload is
  deactivated (pkg/controller/core/workload_controller.go reconcileCheckBasedEviction: a Rejected check
  sets the DeactivationTarget).
- SCALE_UP_BUDGET_SECONDS: how long a job admitted on a flavor whose nodes do not exist yet (a pool scaling
  from zero with no ProvisioningRequest check: spot, flex-start, on-demand) may take to get every pod ready
  before Kueue's waitForPodsReady evicts it, which also withdraws the scale-up. 30 minutes, Kueue 0.19.2's
  own default timeout (apis/config/v1beta2/defaults.go DefaultWaitForPodsReadyTimeout). What it must hold,
  as far as sources say: a node's boot, 80 to 120 s
  (cloud.google.com/kubernetes-engine/docs/how-to/capacity-provisioning), and up to 15 minutes from a GPU
  node's Ready until its GPUs are allocatable (kubernetes/autoscaler cluster-autoscaler/utils/gpu, the
  GPU-allocatable workaround's commit message). The rest, about 13 minutes, is for the image pull: no
  source gives its time.
"""

from __future__ import annotations

COMPUTE_DOMAIN_CHANNEL_CLASS = "compute-domain-default-channel.nvidia.com"  # k8s-dra-driver-gpu v25.3.0
COMPUTE_DOMAIN_CHANNEL_RESOURCE = "nvidia.com/compute-domain-channel"  # trainstack's name, mapped in Kueue's Configuration
MRDMA_RESOURCE = "networking.gke.io/mrdma"  # trainstack's name, mapped in Kueue's Configuration
NVLINK_DOMAIN_LEVEL = "cloud.google.com/gce-topology-subblock"  # cluster-toolkit 1047080 examples/gke-a4x

# Kueue 0.19.2 apis/kueue/v1beta2/provisioningrequestconfig_types.go `retryStrategy` defaults
PROVISIONING_RETRY_LIMIT = 3
PROVISIONING_RETRY_BASE_SECONDS = 60
PROVISIONING_RETRY_MAX_SECONDS = 1800
SCALE_UP_BUDGET_SECONDS = 30 * 60  # Kueue 0.19.2 DefaultWaitForPodsReadyTimeout
