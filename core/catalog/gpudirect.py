"""GPUDirect stacks: the GPU-to-NIC data path of each machine and the images that run it.

Sources, by record:
- The GKE "Maximize GPU network bandwidth" guides and the recipes: TCPX plugin v3.1.6 with RxDM v2.0.7
  (recipe 003 pins these); TCPXO plugin v1.0.3 with RxDM v1.0.9 (recipe 002); gIB v1.0.3
  (AI-Hypercomputer/gpu-recipes a3ultra jobset chart). The pins below moved on from these, as follows.
- TCPX: without host networking, as GKE documents it: RxDM v2.0.11 (it needs the host's /sys and
  /proc/sys) with plugin v3.1.7 (GoogleCloudPlatform/container-engine-accelerators 10f8f865
  gpudirect-tcpx/nccl-test-without-hostnetwork.yaml). The recipes (001: RxDM v2.0.9, 003: v2.0.7 with
  plugin v3.1.6) ran TCPX on the host network instead.
- TCPXO: plugin v1.0.15 with RxDM v1.0.21, what Cluster Toolkit's A3 Mega example runs today
  (GoogleCloudPlatform/cluster-toolkit 1047080 examples/gke-a3-megagpu: nccl_tcpxo_version,
  nccl-test-latest.yaml), on GKE 1.32+ with GKE's default or latest driver. Recipe 002 pinned v1.0.3 /
  v1.0.9 (2024, for GKE 1.28-1.30); trainstack's clusters follow their release channel (1.32 and later),
  so the versions validated there are the ones pinned here. Digests as NVIDIA/aicr pins each tag: the
  plugin in 17ec22a recipes/components/gke-nccl-tcpxo/manifests/nccl-tcpxo-installer.yaml, RxDM in
  3c2108c recipes/components/kubeflow-trainer/manifests/torch-distributed-tcpxo-cluster-training-runtime.yaml
  (neither says index or manifest; both are x86-only, for a3-megagpu-8g). GKE's NRI device injector
  (GoogleCloudPlatform/container-engine-accelerators 3491157 nri_device_injector/nri-device-injector.yaml)
  reads the devices.gke.io/container.<name> annotations; it is published by digest only.
- RDMA: gIB v1.0.5, recipe 000 (gpu-recipes 27b47e7 training/a3ultra/llama3-1-405b/
  nemo-pretraining-gke-resiliency/values.yaml network.gibVersion), also Cluster Toolkit v1.50's.
- RoCE VPC profiles (`RdmaVpcProfile`): an RDMA VPC is created with its zone's network profile, named
  `<zone>-vpc-roce` for the VM machines (A3 Ultra, A4, A4X: Cluster Toolkit 1047080 examples/gke-a4/
  gke-a4.yaml gke-a4-rdma-net `network_profile`) and `<zone>-vpc-roce-metal` for bare metal (A4X Max:
  Toolkit c765092 examples/gke-a4x-max-bm/gke-a4x-max-bm.yaml gke-a4x-max-rdma-net). A RoCE metal VPC takes
  no subnet of ours: the profile makes one, `default-subnet-1-<vpc>`, and every MRDMA NIC joins it,
  IPv6 only (Toolkit c765092 modules/network/gpu-rdma-vpc/main.tf `is_roce_metal`: no template subnets,
  8 interfaces of nic_type MRDMA and stack_type IPV6_ONLY on that subnet; cloud.google.com/vpc/docs/
  network-profiles).
- DRANET (`Dranet`): GKE's managed DRA driver for networking. From GKE 1.34.1-gke.1829001, on a cluster
  with Dataplane V2, GKE installs the DeviceClass `mrdma.google.com` (RDMA NICs) and runs the driver on
  nodes labelled `cloud.google.com/gke-networking-dra-driver: "true"`; a pod gets NICs by claiming
  devices of that class (docs.cloud.google.com/kubernetes-engine/docs/how-to/allocate-network-resources-dra;
  Toolkit c765092 modules/compute/gke-node-pool/main.tf `enable_dranet_actual`, gpu_direct.tf
  `dranet_min_version`, check `dranet_requirements`). Two ways in Toolkit: `enable_dranet` (A4X since
  PR #5835, eac0114b6) sets the pool's `accelerator_network_profile` to `auto`, so GKE makes the NIC
  networks and no additional networks may be named (check `dranet_additional_networks_conflict`); the A4X
  Max blueprint labels the pool and attaches its own VPCs (gke-a4x-max-bm.yaml a4x-max-pool
  `kubernetes_labels`, `additional_networks`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from trainstack.core.catalog.images import Image


class GpuDirect(StrEnum):
    """The GPU-to-NIC data path a machine uses; fixed by the machine, never by the user."""

    RDMA = "rdma"  # GPUDirect-RDMA over RoCE with the gIB NCCL plugin (A3 Ultra)
    TCPXO = "tcpxo"  # GPUDirect-TCPXO (A3 Mega)
    TCPX = "tcpx"  # GPUDirect-TCPX (A3 High)
    NONE = "none"  # plain NCCL over the primary NIC (A2)


@dataclass(frozen=True)
class GpuDirectImages:
    """Images of a GPUDirect stack.

    Attributes:
        nccl_plugin: the NCCL net plugin image; run as an installer DaemonSet on every node
            (TCPX, TCPXO, RDMA) and, for TCPXO/RDMA, as the workload's plugin source.
        rxdm: the receive-datapath manager sidecar (TCPX, TCPXO), else None.
        nri_device_injector: the NRI device injector DaemonSet image (TCPXO), else None.
    """

    nccl_plugin: Image
    rxdm: Image | None = None
    nri_device_injector: Image | None = None


@dataclass(frozen=True)
class RdmaVpcProfile:
    """The network profile an RDMA VPC is created with (`projects/<p>/global/networkProfiles/<zone>-<suffix>`).

    Attributes:
        suffix: what follows the zone in the profile's name (`vpc-roce`).
        predefined_subnet: the profile makes the VPC's one subnet (`default-subnet-1-<vpc>`), which
            every RDMA NIC joins; else there is one subnet of ours per RDMA NIC.
    """

    suffix: str
    predefined_subnet: bool = False

    def path(self, project: str, zone: str) -> str:
        """The profile's resource path for a VPC in `project` serving `zone`."""
        return f"projects/{project}/global/networkProfiles/{zone}-{self.suffix}"

    def subnet(self, vpc: str) -> str:
        """The predefined subnet of a VPC named `vpc` made with this profile."""
        return f"default-subnet-1-{vpc}"


ROCE = RdmaVpcProfile("vpc-roce")
ROCE_METAL = RdmaVpcProfile("vpc-roce-metal", predefined_subnet=True)


@dataclass(frozen=True)
class Dranet:
    """How a machine's RDMA NICs reach pods through GKE's DRANET (module docstring).

    Attributes:
        managed_networks: GKE makes the NIC networks (the pool's accelerator network profile
            `auto`); else the pool attaches the stack's NIC VPCs and is labelled for the driver.
        required: the machine reaches its RDMA NICs only through DRANET (no multi-networking
            Network objects).
    """

    managed_networks: bool
    required: bool = False


DRANET_MIN_GKE = "1.34.1-gke.1829001"  # cluster-toolkit c765092 gke-node-pool/gpu_direct.tf dranet_min_version
DRANET_NODE_LABEL = "cloud.google.com/gke-networking-dra-driver"  # gke-node-pool/main.tf kubernetes_labels
MRDMA_DEVICE_CLASS = "mrdma.google.com"  # installed by GKE from DRANET_MIN_GKE (allocate-network-resources-dra)

GIB_REPOSITORY = "us-docker.pkg.dev/gce-ai-infra/gpudirect-gib/nccl-plugin-gib"

GPUDIRECT_IMAGES: dict[GpuDirect, GpuDirectImages] = {
    # container-engine-accelerators 10f8f865 gpudirect-tcpx/nccl-test-without-hostnetwork.yaml
    GpuDirect.TCPX: GpuDirectImages(
        nccl_plugin=Image(
            "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpx/nccl-plugin-gpudirecttcpx-dev",
            "v3.1.7",
        ),
        rxdm=Image("us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpx/tcpgpudmarxd-dev", "v2.0.11"),
    ),
    # cluster-toolkit 1047080 examples/gke-a3-megagpu; digests: NVIDIA/aicr 17ec22a, 3c2108c
    GpuDirect.TCPXO: GpuDirectImages(
        nccl_plugin=Image(
            "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev",
            "v1.0.15",
            "sha256:4c9f0de3f39455a2ea35e844e0fc92564ca5629f6b03250fde40e8160719dae4",
        ),
        rxdm=Image(
            "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev",
            "v1.0.21",
            "sha256:8d9e10fd589a34ab8a0aa64f7e70ad075c8f1c69bea176350f8d211367697e3d",
        ),
        # container-engine-accelerators 3491157 nri_device_injector/nri-device-injector.yaml
        nri_device_injector=Image(
            "gcr.io/gke-release/nri-device-injector",
            digest="sha256:6e79483d52abdc28454bf186320b10a56b0f117a10e8d65d5c74dbb821a76970",
        ),
    ),
    # gpu-recipes 27b47e7 training/a3ultra/llama3-1-405b/nemo-pretraining-gke-resiliency/values.yaml
    GpuDirect.RDMA: GpuDirectImages(nccl_plugin=Image(GIB_REPOSITORY, "v1.0.5")),
}
