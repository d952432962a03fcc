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
