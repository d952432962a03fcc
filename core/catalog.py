"""Machine facts, pinned versions and list prices: the one place they are written down.

Every fact that differs by machine lives in a frozen record here, keyed by the name a user
writes in a stack file. Components read these records; no other module hard-codes a machine
type, an image tag or a chart version. Each fact cites its public source in a comment.

Prices are list on-demand prices in us-central1, read on PRICES_AS_OF from the Compute Engine
pricing pages; they are estimates (no discounts, no taxes) and are reported as such.
"""

from __future__ import annotations

import ipaddress
import itertools
import math
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Literal

from trainstack.core.errors import CatalogError

PRICES_AS_OF = "2025-06-01"
PRICES_SOURCE = "cloud.google.com/compute/vm-instance-pricing and /compute/gpus-pricing, us-central1"

# Spot and A4 prices: a snapshot of Google's Cloud Billing Catalog as SkyPilot's catalog records it
# (skypilot-org/skypilot-catalog 2c3d7ea catalogs/v9/gcp/vms.csv, us-central1, VM row plus GPU row;
# its date is not recorded in the copy read). Spot prices "can change up to once every day"
# (cloud.google.com/spot-vms/pricing), so these are estimates of a moving price.
SNAPSHOT_PRICES_SOURCE = "Cloud Billing Catalog snapshot: skypilot-org/skypilot-catalog 2c3d7ea catalogs/v9/gcp/vms.csv, us-central1"

# A dated copy of the same catalog, per machine type: Cyclenerd/google-cloud-pricing-cost-calculator
# dac3128 pricing.yml (generated 2026-08-20). Its us-central1 on-demand prices equal the list
# prices above for a2-highgpu-8g, a2-ultragpu-8g and a3-highgpu-8g; it has no a3-ultragpu-8g or
# a4 rows and no us-central1 a3-megagpu-8g row, which take SNAPSHOT_PRICES_SOURCE's.
CALCULATOR_PRICES_SOURCE = (
    "Cloud Billing Catalog as Cyclenerd/google-cloud-pricing-cost-calculator dac3128 pricing.yml (generated 2026-08-20) records it, us-central1"
)

# DWS (flex-start and queued provisioning) is billed at a discount on vCPUs, GPUs and TPUs of "up
# to 53%" (cloud.google.com/kubernetes-engine/docs/concepts/dws); no per-machine price was found,
# so a DWS pool is reported between on-demand and on-demand less that discount.
DWS_MAX_DISCOUNT = 0.53


class GpuDirect(StrEnum):
    """The GPU-to-NIC data path a machine uses; fixed by the machine, never by the user."""

    RDMA = "rdma"  # GPUDirect-RDMA over RoCE with the gIB NCCL plugin (A3 Ultra)
    TCPXO = "tcpxo"  # GPUDirect-TCPXO (A3 Mega)
    TCPX = "tcpx"  # GPUDirect-TCPX (A3 High)
    NONE = "none"  # plain NCCL over the primary NIC (A2)


@dataclass(frozen=True)
class Image:
    """A container image pinned by tag, by digest (with its tag beside it where there is one, as
    `repository:tag@digest`: the digest is what is pulled), or by digest alone where upstream
    publishes only digests.

    `platforms` are the `os/arch` pairs the image is published for, recorded only where a source
    shows them (a manifest list, an `-arm64` image name, the upstream running it on such nodes),
    cited beside the record; None: not recorded, so unknown (refused on Arm, see `runs_on`)."""

    repository: str
    tag: str = ""
    digest: str = ""
    platforms: tuple[str, ...] | None = None

    @property
    def ref(self) -> str:
        tag = f":{self.tag}" if self.tag else ""
        return f"{self.repository}{tag}@{self.digest}" if self.digest else f"{self.repository}{tag}"

    def runs_on(self, architecture: str) -> bool | None:
        """Whether the image is published for linux/`architecture`; None where unknown."""
        return None if self.platforms is None else f"linux/{architecture}" in self.platforms


@dataclass(frozen=True)
class Gpu:
    """An accelerator model.

    Attributes:
        name: the short name used by reports and `--accelerator-type` (h100, h200, a100).
        memory_mib: HBM per GPU as the driver reports it (`nvidia-smi --query-gpu=memory.total`).
        peak_tflops: peak dense tensor TFLOPS per GPU by precision (no sparsity).
    """

    name: str
    memory_mib: int
    peak_tflops: dict[str, float]

    @property
    def memory_bytes(self) -> int:
        return self.memory_mib * 2**20

    def peak(self, precision: str) -> float:
        """Peak dense TFLOPS at `precision`, or a CatalogError naming the ones it has."""
        try:
            return self.peak_tflops[precision]
        except KeyError:
            known = ", ".join(sorted(self.peak_tflops))
            raise CatalogError(f"{self.name} has no {precision} tensor peak; it has: {known}") from None


# NVIDIA H100 SXM datasheet: 989 TFLOPS BF16/FP16 dense, 1,979 FP8 dense (the recipes' MFU tool
# uses 1978). H200 has the same tensor cores as H100 SXM. A100 datasheet: 312 BF16/FP16 dense,
# no FP8. Memory as nvidia-smi reports it: H100 80GB 81559 MiB (NVIDIA/nccl#1264), H200 143771
# MiB, A100 40GB 40960 MiB, A100 80GB 81920 MiB ("80 GB" is about 85.5e9 bytes, not 80e9).
# B200: NVIDIA HGX B200 datasheet, 8 GPUs 36 PFLOPS FP16/BF16 and 72 PFLOPS FP8 with sparsity,
# so 2,250 and 4,500 dense per GPU; nvidia-smi on a4-highgpu-8g reports 183359 MiB.
# GB200 (A4X): NVIDIA's GB200 NVL72 specifications (nvidia.com/en-us/data-center/gb200-nvl72,
# per rack of 72 GPUs, with sparsity: FP16/BF16 360 PFLOPS, FP8 720 PFLOPS): 2,500 and 5,000 dense
# TFLOPS per GPU. Memory as nvidia-smi reports it on GB200 nodes: 189471 MiB, in every public
# nvidia-smi table of a GB200 found (several, in the stored GitHub index, whose repositories it
# does not name), 185 GiB, which Google rounds to 186 GB a GPU
# (cloud.google.com/compute/docs/instances/arm-on-compute, A4X).
GPUS: dict[str, Gpu] = {
    "gb200": Gpu("gb200", 189471, {"bf16": 2500.0, "fp16": 2500.0, "fp8": 5000.0}),
    "b200": Gpu("b200", 183359, {"bf16": 2250.0, "fp16": 2250.0, "fp8": 4500.0}),
    "h200": Gpu("h200", 143771, {"bf16": 989.0, "fp16": 989.0, "fp8": 1979.0}),
    "h100": Gpu("h100", 81559, {"bf16": 989.0, "fp16": 989.0, "fp8": 1979.0}),
    "a100": Gpu("a100", 40960, {"bf16": 312.0, "fp16": 312.0}),
    "a100-80gb": Gpu("a100-80gb", 81920, {"bf16": 312.0, "fp16": 312.0}),
}


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

# GKE "Maximize GPU network bandwidth" guides and the recipes: TCPX plugin v3.1.6 with RxDM
# v2.0.7 (recipe 003 pins these); TCPXO plugin v1.0.3 with RxDM v1.0.9 (recipe 002); gIB
# v1.0.3 (AI-Hypercomputer/gpu-recipes a3ultra jobset chart).
GPUDIRECT_IMAGES: dict[GpuDirect, GpuDirectImages] = {
    # TCPX without host networking, as GKE documents it: RxDM v2.0.11 (it needs the host's /sys
    # and /proc/sys) with plugin v3.1.7 (GoogleCloudPlatform/container-engine-accelerators
    # 10f8f865 gpudirect-tcpx/nccl-test-without-hostnetwork.yaml). The recipes (001: RxDM v2.0.9,
    # 003: v2.0.7 with plugin v3.1.6) ran TCPX on the host network instead.
    GpuDirect.TCPX: GpuDirectImages(
        nccl_plugin=Image(
            "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpx/nccl-plugin-gpudirecttcpx-dev",
            "v3.1.7",
        ),
        rxdm=Image("us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpx/tcpgpudmarxd-dev", "v2.0.11"),
    ),
    # TCPXO plugin v1.0.15 with RxDM v1.0.21: what Cluster Toolkit's A3 Mega example runs today
    # (GoogleCloudPlatform/cluster-toolkit 1047080 examples/gke-a3-megagpu: nccl_tcpxo_version,
    # nccl-test-latest.yaml), on GKE 1.32+ with GKE's default or latest driver. Recipe 002 pinned
    # v1.0.3 / v1.0.9 (2024, for GKE 1.28-1.30); trainstack's clusters follow their release
    # channel (1.32 and later), so the versions validated there are the ones pinned here.
    # Digests as NVIDIA/aicr pins each tag: the plugin in 17ec22a recipes/components/gke-nccl-tcpxo/
    # manifests/nccl-tcpxo-installer.yaml, RxDM in 3c2108c recipes/components/kubeflow-trainer/
    # manifests/torch-distributed-tcpxo-cluster-training-runtime.yaml (neither says index or
    # manifest; both are x86-only, for a3-megagpu-8g).
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
        # GKE's injector (GoogleCloudPlatform/container-engine-accelerators 3491157
        # nri_device_injector/nri-device-injector.yaml) reads the devices.gke.io/container.<name>
        # annotations; it is published by digest only.
        nri_device_injector=Image(
            "gcr.io/gke-release/nri-device-injector",
            digest="sha256:6e79483d52abdc28454bf186320b10a56b0f117a10e8d65d5c74dbb821a76970",
        ),
    ),
    # gIB v1.0.5: recipe 000 (gpu-recipes 27b47e7 training/a3ultra/llama3-1-405b/
    # nemo-pretraining-gke-resiliency/values.yaml network.gibVersion), also Cluster Toolkit v1.50's.
    GpuDirect.RDMA: GpuDirectImages(nccl_plugin=Image(GIB_REPOSITORY, "v1.0.5")),
}


@dataclass(frozen=True)
class Machine:
    """A GPU machine type, as GKE provisions it.

    Attributes:
        name: the Compute Engine machine type (`a3-ultragpu-8g`).
        accelerator: the GKE accelerator type, also the `cloud.google.com/gke-accelerator`
            node label value.
        gpu: the GPU model.
        gpus_per_node: GPUs attached to one VM.
        vcpus, memory_gb: the VM's vCPUs and memory (Kueue quotas are computed from these).
        local_ssds: bundled 375 GB local NVMe SSDs, used as ephemeral storage.
        gpudirect: the GPUDirect stack the machine's NICs support.
        gvnic_networks: extra gVNIC NICs beyond the primary, each on its own VPC.
        rdma_subnets: RDMA (MRDMA) NICs, all on one VPC made with the zone's RoCE profile.
        mtu: MTU of the extra networks.
        compact_placement: whether GKE supports a COMPACT placement policy for the pool.
        compact_with_flex_start: whether GKE allows compact placement with flex-start VMs.
        topology_labels: whether GKE labels the nodes with every level Kueue's Topology
            names (`cloud.google.com/gce-topology-block`, `-subblock`, `-host`); Kueue
            ignores a node that lacks one, so Topology Aware Scheduling is used only here.
        hourly_usd: list on-demand price per node-hour (estimate, see PRICES_AS_OF, or
            SNAPSHOT_PRICES_SOURCE where `price_source` says so); None where no source gives one
            (the machine is not priced, and plans say so).
        spot_hourly_usd: spot price per node-hour (from `spot_price_source`), else None.
        price_source: where `hourly_usd` comes from when it is not PRICES_SOURCE.
        spot_price_source: where `spot_hourly_usd` comes from.
        boot_disk_type: the boot disk type the machine attaches.
        default_queue: the Kueue queue name the upstream recipes use for the machine family.
        nic_cpu_bindings: per extra NIC, the CPU cores of the NCCL plugin's send and receive
            threads (`(tx, rx)`), where the GPUDirect stack binds them (TCPX); else empty.
        nccl_plugin: the machine's own NCCL plugin image where it differs from its GPUDirect
            stack's (GPUDIRECT_IMAGES), else None.
        nccl_tuner_config: the NCCL tuner file in the plugin for this machine (gIB ships one
            per machine), else "".
        nccl_socket_interfaces: the interfaces NCCL's bootstrap sockets use, where the recipes
            set them over the plugin's script, else empty.
        architecture: the CPU architecture of its nodes, as their `kubernetes.io/arch` label
            writes it; every image that runs there must be published for linux/<architecture>.
        accelerator_topology: the accelerator topology of the GPUs one multi-node NVLink domain
            joins (`1x72`), set in the pool's HIGH_THROUGHPUT workload policy; None where
            NVLink stays inside a node.
        reservation_only: its VMs come only from reserved capacity (no spot, DWS or on-demand).
        min_gke_minor: the oldest GKE minor version (`1.34`) its pools and their add-ons run
            on, else None.
    """

    name: str
    accelerator: str
    gpu: Gpu
    gpus_per_node: int
    vcpus: int
    memory_gb: int
    local_ssds: int
    gpudirect: GpuDirect
    gvnic_networks: int
    rdma_subnets: int
    mtu: int
    compact_placement: bool
    hourly_usd: float | None
    boot_disk_type: str = "pd-balanced"
    default_queue: str = "gpu-queue"
    compact_with_flex_start: bool = False
    topology_labels: bool = False
    nic_cpu_bindings: tuple[tuple[str, str], ...] = ()
    nccl_plugin: Image | None = None
    nccl_tuner_config: str = ""
    nccl_socket_interfaces: tuple[str, ...] = ()
    spot_hourly_usd: float | None = None
    price_source: str = PRICES_SOURCE
    spot_price_source: str = SNAPSHOT_PRICES_SOURCE
    architecture: str = "amd64"
    accelerator_topology: str | None = None
    reservation_only: bool = False
    min_gke_minor: str | None = None

    def gpus(self, nodes: int) -> int:
        """GPUs on `nodes` nodes of this machine."""
        return nodes * self.gpus_per_node

    @property
    def nvlink_domain_nodes(self) -> int | None:
        """Nodes in one multi-node NVLink domain (its topology's GPUs over the node's), or None."""
        if self.accelerator_topology is None:
            return None
        return math.prod(int(n) for n in self.accelerator_topology.split("x")) // self.gpus_per_node

    @property
    def extra_nics(self) -> int:
        """NICs beyond the primary one."""
        return self.gvnic_networks + self.rdma_subnets

    @property
    def gpudirect_images(self) -> GpuDirectImages | None:
        """The GPUDirect stack's images, with the machine's own NCCL plugin where it has one."""
        images = GPUDIRECT_IMAGES.get(self.gpudirect)
        if images is None or self.nccl_plugin is None:
            return images
        return replace(images, nccl_plugin=self.nccl_plugin)


@dataclass(frozen=True)
class NicNetwork:
    """One extra GPU NIC network, named once here so VPCs, Kubernetes Network objects and pod
    interfaces agree.

    Attributes:
        name: the Kubernetes `Network` / `GKENetworkParamSet` name pods reference
            (`gvnic-1`, `rdma-0`..`rdma-7` on A3 Ultra; `vpc1`..`vpc8` on A3 Mega/High).
        kind: `gvnic` (its own VPC and subnet) or `rdma` (a subnet of the shared RDMA VPC).
        interface: the pod interface name it becomes (`eth1`, `eth2`, ...).
        cidr: the subnet's range, a /24 of the stack's GPU NIC range.
    """

    name: str
    kind: Literal["gvnic", "rdma"]
    interface: str
    cidr: str


# /24s of the GPU NIC /16 kept for each machine family: a family has at most 9 NICs.
NIC_FAMILY_BLOCK = 32


def nic_networks(machine: Machine, gpu_nic_cidr: str, prefix: str = "") -> list[NicNetwork]:
    """The extra NIC networks a machine needs, in interface order; `prefix` starts their names (a
    second machine family on one cluster keeps its Networks apart from the first's).

    GKE: "Any Pod-networks in a single GKE cluster can't have overlapping CIDR ranges"
    (cloud.google.com/kubernetes-engine/docs/how-to/setup-multinetwork-support-for-pods, General
    limitations). The unprefixed family takes the /16's first /24s, as it always did; a prefixed
    one the block of its GPUDirect stack (one family per stack on a cluster), so no two families'
    subnets meet, whatever the order of the pools.
    """
    block = NIC_FAMILY_BLOCK * (1 + list(GpuDirect).index(machine.gpudirect)) if prefix else 0
    subnets = itertools.islice(ipaddress.ip_network(gpu_nic_cidr).subnets(new_prefix=24), block, None)
    rdma = machine.gpudirect == GpuDirect.RDMA
    nets: list[NicNetwork] = []
    for i in range(machine.gvnic_networks):
        name = f"gvnic-{i + 1}" if rdma else f"vpc{i + 1}"
        nets.append(NicNetwork(f"{prefix}{name}", "gvnic", f"eth{len(nets) + 1}", str(next(subnets))))
    for i in range(machine.rdma_subnets):
        nets.append(NicNetwork(f"{prefix}rdma-{i}", "rdma", f"eth{len(nets) + 1}", str(next(subnets))))
    return nets


# Sources: cloud.google.com/compute/docs/accelerator-optimized-machines (GPUs, vCPUs, memory,
# bundled local SSD, NIC counts); cloud.google.com/kubernetes-engine/docs/how-to/
# gpu-bandwidth-gpudirect-tcpx (A3 High: 4 extra NICs; A3 Mega: 8; MTU 8244) and
# /gpu-bandwidth-gpudirect-rdma (A3 Ultra: 1 extra gVNIC + 8 RDMA NICs, MTU 8896);
# cloud.google.com/kubernetes-engine/docs/how-to/gpus (accelerator label values); A3 Ultra VMs
# attach Hyperdisk only ("supported disk types" in the accelerator-optimized machines page).
MACHINES: dict[str, Machine] = {
    m.name: m
    for m in (
        Machine(
            name="a3-ultragpu-8g",
            accelerator="nvidia-h200-141gb",
            gpu=GPUS["h200"],
            gpus_per_node=8,
            vcpus=224,
            memory_gb=2952,
            local_ssds=32,
            gpudirect=GpuDirect.RDMA,
            gvnic_networks=1,
            rdma_subnets=8,
            mtu=8896,
            compact_placement=True,
            hourly_usd=84.81,
            spot_hourly_usd=47.66,  # 6.68552 VM + 8 x 5.1215 H200
            boot_disk_type="hyperdisk-balanced",
            default_queue="a3-ultra",
            compact_with_flex_start=True,
            topology_labels=True,
            nccl_tuner_config="tuner_config_a3u.txtpb",
        ),
        # A4: what differs from A3 Ultra is the GPU, memory and the gIB release. Same RDMA
        # path: one extra gVNIC and eight RDMA NICs on the zone's RoCE VPC, MTU 8896 (Cluster
        # Toolkit 1047080 examples/gke-a4/gke-a4.yaml gke-a4-net-1 and gke-a4-rdma-net, 8
        # subnets; modules/network/gpu-rdma-vpc mtu default 8896), accelerator nvidia-b200 and
        # the queue `a4` (same file, kueue-configuration.yaml.tftpl, which gives the flavor the
        # gce-topology block/subblock/host levels), 32 local SSDs (modules/compute/gke-node-pool/
        # disk_definitions.tf). gIB v1.1.0 and tuner_config_a4.txtpb: gpu-recipes e515bfc
        # training/a4/llama3_70b/nemo-gke/nemo2507/64gpus-bf16-gbs256/recipe (values.yaml
        # network.gibVersion; templates/workload-job.yaml), as Toolkit's gke-a4 installs it.
        # Compact placement with flex-start: Toolkit gke-node-pool precondition `^(a3-ultragpu-|a4-|h4d-)`.
        # vCPUs, memory (GiB) and the only us-central1 zone (b): SNAPSHOT_PRICES_SOURCE.
        Machine(
            name="a4-highgpu-8g",
            accelerator="nvidia-b200",
            gpu=GPUS["b200"],
            gpus_per_node=8,
            vcpus=224,
            memory_gb=3968,
            local_ssds=32,
            gpudirect=GpuDirect.RDMA,
            gvnic_networks=1,
            rdma_subnets=8,
            mtu=8896,
            compact_placement=True,
            # A4 is billed as one B200 SKU for the whole node (no separate vCPU/memory price):
            # 8 x 11.277 on demand, 8 x 4.7183 spot. The same snapshot lists 8 x 8.055 in other
            # regions; which SKU is standard and which DWS it does not say, so the higher is used.
            hourly_usd=90.22,
            spot_hourly_usd=37.75,
            price_source=SNAPSHOT_PRICES_SOURCE,
            boot_disk_type="hyperdisk-balanced",
            default_queue="a4",
            compact_with_flex_start=True,
            topology_labels=True,
            nccl_plugin=Image(GIB_REPOSITORY, "v1.1.0"),
            nccl_tuner_config="tuner_config_a4.txtpb",
            # Every A4 chart of gpu-recipes (src/helm-charts/a4/*) exports "eth0,eth1".
            nccl_socket_interfaces=("eth0", "eth1"),
        ),
        # A4X (cloud.google.com/compute/docs/instances/arm-on-compute, "A4X Max and A4X machine
        # series"): 140 vCPUs and 884 GB on two NVIDIA Grace (Arm) sockets, four GB200 GPUs of
        # 186 GB, 12,000 GiB of bundled Local SSD, Hyperdisk only; GKE counts ephemeral local SSDs in
        # units of 375 GB (container v1beta1 EphemeralStorageLocalSsdConfig.local_ssd_count: "Each
        # local SSD is 375 GB in size"), so 32, as for A3 Ultra and A4 (Toolkit disk_definitions.tf).
        # NICs (cloud.google.com/compute/docs/gpus/gpu-network-bandwidth, "A4X machine types"): two
        # Titanium (gVNIC) NICs and four CX-7 RDMA NICs, that is one extra gVNIC and four RDMA subnets of one RoCE VPC, as Cluster Toolkit's gke-a4x built them before it
        # moved to DRANET (GoogleCloudPlatform/cluster-toolkit d1236e228^ examples/gke-a4x/
        # gke-a4x.yaml: gke-a4x-net-1, gke-a4x-rdma-net `<zone>-vpc-roce` with 4 subnets) and
        # NVIDIA's GKE guide names them (A4X: Network + GKENetworkParamSet pairs gvnic-1, rdma-0..
        # rdma-3; docs.nvidia.com/aicr/integrator-guide/gke-a-4-x-max-networking); MTU 8896 (Toolkit 1047080 modules/network/
        # gpu-rdma-vpc `mtu` default). gIB's arm64 build v1.1.0 (AI-Hypercomputer/gpu-recipes
        # 2e1fd5e training/a4x/llama3_70b/nemo-gke/nemo2602/64gpus-bf16-gbs256/values.yaml
        # `network.gibVersion`; Toolkit 1047080 examples/gke-a4x/gke-a4x.yaml gib template_vars).
        # Accelerator nvidia-gb200 x 4 and the queue `a4x`: Toolkit 1047080 examples/gke-a4x/
        # gke-a4x.yaml (vars.accelerator_type, guest_accelerator count) and kueue-configuration.yaml.tftpl.
        # One NVLink domain joins 72 GPUs (`accelerator_topology: "1x72"` of the HIGH_THROUGHPUT
        # workload policy in Toolkit 1047080 examples/gke-a4x/gke-a4x.yaml): 18 nodes. GKE labels
        # the nodes with block, sub-block and host (Toolkit's gke-a4x kueue-configuration.yaml.tftpl
        # Topology). DRA, through which IMEX reaches the pods, needs GKE 1.34 or later
        # (cloud.google.com/kubernetes-engine/docs/how-to/set-up-dra, "Requirements"). vCPUs and
        # memory also: Cyclenerd/google-cloud-pricing-cost-calculator dac3128 tools/machinetypes.csv
        # (140, 884.00). Not priced: neither billing-catalog copy has an a4x-highgpu-4g row
        # (SNAPSHOT_PRICES_SOURCE: a4-highgpu-8g is followed by c2-standard-16; CALCULATOR_PRICES_SOURCE:
        # a3-megagpu-8g is followed by c2-standard-16), and A4X capacity comes only as reservations
        # (docs.cloud.google.com/ai-hypercomputer/docs/create/create-mig-with-a4x).
        Machine(
            name="a4x-highgpu-4g",
            accelerator="nvidia-gb200",
            gpu=GPUS["gb200"],
            gpus_per_node=4,
            vcpus=140,
            memory_gb=884,
            local_ssds=32,
            gpudirect=GpuDirect.RDMA,
            gvnic_networks=1,
            rdma_subnets=4,
            mtu=8896,
            compact_placement=True,
            hourly_usd=None,
            boot_disk_type="hyperdisk-balanced",
            default_queue="a4x",
            topology_labels=True,
            architecture="arm64",
            nccl_plugin=Image(f"{GIB_REPOSITORY}-arm64", "v1.1.0", platforms=("linux/arm64",)),
            # The A4X recipe exports both after set_nccl_env.sh (its templates/workload-job.yaml):
            # gIB's A3 Ultra tuner file, and bootstrap sockets on the two gVNICs.
            nccl_tuner_config="tuner_config_a3u.txtpb",
            nccl_socket_interfaces=("eth0", "eth1"),
            accelerator_topology="1x72",
            # Cluster Director's consumption options list A4X under future reservations for blocks
            # of capacity only, not under calendar mode, flex-start, spot or on-demand
            # (docs.cloud.google.com/cluster-director/docs/choose-consumption-option, read 2026-11-25).
            reservation_only=True,
            min_gke_minor="1.34",
        ),
        Machine(
            name="a3-megagpu-8g",
            accelerator="nvidia-h100-mega-80gb",
            gpu=GPUS["h100"],
            gpus_per_node=8,
            vcpus=208,
            memory_gb=1872,
            local_ssds=16,
            gpudirect=GpuDirect.TCPXO,
            gvnic_networks=8,
            rdma_subnets=0,
            mtu=8244,
            compact_placement=True,
            hourly_usd=92.15,
            spot_hourly_usd=50.2,  # 5.15632 VM + 8 x 5.6299 H100 Mega
            default_queue="a3-mega",
        ),
        Machine(
            name="a3-highgpu-8g",
            accelerator="nvidia-h100-80gb",
            gpu=GPUS["h100"],
            gpus_per_node=8,
            vcpus=208,
            memory_gb=1872,
            local_ssds=16,
            gpudirect=GpuDirect.TCPX,
            gvnic_networks=4,
            rdma_subnets=0,
            mtu=8244,
            compact_placement=True,
            hourly_usd=88.49,
            spot_hourly_usd=53.09,
            spot_price_source=CALCULATOR_PRICES_SOURCE,
            default_queue="a3-queue",
            # GKE TCPX guide: the first two NICs sit on NUMA node 0, the last two on node 1.
            nic_cpu_bindings=(
                ("8-21,112-125", "22-35,126-139"),
                ("8-21,112-125", "22-35,126-139"),
                ("60-73,164-177", "74-87,178-191"),
                ("60-73,164-177", "74-87,178-191"),
            ),
        ),
        Machine(
            name="a2-highgpu-8g",
            accelerator="nvidia-tesla-a100",
            gpu=GPUS["a100"],
            gpus_per_node=8,
            vcpus=96,
            memory_gb=680,
            local_ssds=0,
            gpudirect=GpuDirect.NONE,
            gvnic_networks=0,
            rdma_subnets=0,
            mtu=1460,
            compact_placement=True,
            hourly_usd=29.39,
            spot_hourly_usd=16.97,
            spot_price_source=CALCULATOR_PRICES_SOURCE,
        ),
        Machine(
            name="a2-ultragpu-8g",
            accelerator="nvidia-a100-80gb",
            gpu=GPUS["a100-80gb"],
            gpus_per_node=8,
            vcpus=96,
            memory_gb=1360,
            local_ssds=8,
            gpudirect=GpuDirect.NONE,
            gvnic_networks=0,
            rdma_subnets=0,
            mtu=1460,
            compact_placement=True,
            hourly_usd=40.55,
            spot_hourly_usd=23.42,
            spot_price_source=CALCULATOR_PRICES_SOURCE,
        ),
    )
}


# The zones offering each GPU machine type, as Compute Engine listed them: skypilot-org/skypilot-catalog
# @2c3d7ea7d76bf84cf80d382e946c1609571485fd catalogs/v9/gcp/vms.csv (the AvailabilityZone of each row of
# the machine type; the snapshot SNAPSHOT_PRICES_SOURCE reads prices from), read 2026-11-25. SkyPilot
# builds it from the Compute Engine API: zones().list, then machineTypes().list in each zone, keeping
# the series it prices and dropping a row whose price it cannot find (skypilot-org/skypilot@a2f08cf
# sky/catalog/data_fetchers/fetch_gcp.py). So it is one project's view on one date that may miss a
# zone but names none that lacks the machine, and it is not Google's "GPU regions and zones" page (no
# stored copy of that page held these rows): validate refuses only what it is sure of
# (rules.machine_zone). a4x-highgpu-4g (GB200) has no row: the fetcher keeps no a4x series, and the
# zones found for it are single sightings, not a listing (Cluster Toolkit 1047080 tools/cloud-build/
# daily-tests/tests/gke-a4x.yml tests in us-central1-b; xpk's gb200-4 recipe uses us-central1-a as a
# golden fixture). A partial row would refuse every zone it misses, so any zone of the region passes.
MACHINE_ZONES_AS_OF = "2026-11-25"
MACHINE_ZONES_SOURCE = "skypilot-org/skypilot-catalog@2c3d7ea catalogs/v9/gcp/vms.csv"
MACHINE_ZONES: dict[str, frozenset[str]] = {
    machine: frozenset(zones.split())
    for machine, zones in {
        "a4-highgpu-8g": "asia-northeast1-b asia-southeast1-b europe-north1-b europe-north1-c europe-west4-b "
        "us-central1-b us-east1-b us-east4-b us-south1-b us-west2-c us-west3-b us-west3-c",
        "a3-ultragpu-8g": "asia-south1-b asia-south2-c europe-west1-b europe-west4-a us-central1-b us-east4-b us-east5-a us-south1-b us-west1-c",
        "a3-megagpu-8g": "asia-east1-c asia-northeast1-b asia-southeast1-b asia-southeast1-c australia-southeast1-c "
        "europe-north1-c europe-west1-b europe-west1-c europe-west3-c europe-west4-b europe-west4-c us-central1-a "
        "us-central1-b us-central1-c us-east4-a us-east4-b us-east4-c us-east5-a us-west1-a us-west1-b us-west4-a",
        "a3-highgpu-8g": "asia-east1-c asia-northeast1-b asia-south1-c asia-south2-b asia-southeast1-b asia-southeast1-c "
        "australia-southeast1-c europe-north1-c europe-west1-b europe-west1-c europe-west3-c europe-west4-b "
        "europe-west4-c europe-west9-c us-central1-a us-central1-b us-central1-c us-east4-a us-east4-b us-east4-c "
        "us-east5-a us-west1-a us-west1-b us-west4-a",
        "a2-ultragpu-8g": "asia-southeast1-c europe-west4-a us-central1-a us-central1-c us-east4-c us-east5-a us-east5-b",
        "a2-highgpu-8g": "asia-northeast1-a asia-northeast1-c asia-northeast3-a asia-northeast3-b asia-southeast1-a "
        "asia-southeast1-b asia-southeast1-c europe-west4-a europe-west4-b me-west1-a me-west1-c us-central1-a "
        "us-central1-b us-central1-c us-central1-f us-east1-b us-west1-b us-west3-b us-west4-b",
    }.items()
}


@dataclass(frozen=True)
class CpuMachine:
    """A CPU machine type for controller pools, build machines and servers."""

    name: str
    vcpus: int
    memory_gb: int
    hourly_usd: float
    boot_disk_type: str = "pd-balanced"


# cloud.google.com/compute/docs/general-purpose-machines (shapes); prices as above.
CPU_MACHINES: dict[str, CpuMachine] = {
    m.name: m
    for m in (
        CpuMachine("e2-standard-4", 4, 16, 0.134),
        CpuMachine("e2-standard-8", 8, 32, 0.268),
        CpuMachine("e2-standard-16", 16, 64, 0.536),
        CpuMachine("e2-highcpu-32", 32, 32, 0.792),
        CpuMachine("n2-standard-8", 8, 32, 0.388),
        CpuMachine("n2-standard-16", 16, 64, 0.777),
    )
}


def machine(name: str) -> Machine:
    """The GPU machine record for `name`, or a CatalogError listing the known names."""
    try:
        return MACHINES[name]
    except KeyError:
        raise CatalogError(f"unknown GPU machine type {name!r}; known: {', '.join(sorted(MACHINES))}") from None


def cpu_machine(name: str) -> CpuMachine:
    """The CPU machine record for `name`, or a CatalogError listing the known names."""
    try:
        return CPU_MACHINES[name]
    except KeyError:
        raise CatalogError(f"unknown CPU machine type {name!r}; known: {', '.join(sorted(CPU_MACHINES))}") from None


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


# registry.k8s.io OCI charts; versions match the CRDs in trainstack/schemas/crds.
KUEUE_CHART = HelmChart("kueue", "oci://registry.k8s.io/kueue/charts", "0.19.2", "kueue-system")
JOBSET_CHART = HelmChart("jobset", "oci://registry.k8s.io/jobset/charts", "0.12.0", "jobset-system")
# NVIDIA's DRA Driver for GPUs, for its ComputeDomains (IMEX across a multi-node NVLink domain):
# the chart repository, version and namespace Cluster Toolkit installs it from
# (GoogleCloudPlatform/cluster-toolkit 1047080 modules/management/kubectl-apply/main.tf
# install_nvidia_dra_driver, variables.tf `nvidia_dra_driver.version` v25.3.0); the chart is
# NVIDIA/k8s-dra-driver-gpu v25.3.0 (06db1a7) deployments/helm/nvidia-dra-driver-gpu, whose CRD
# is bundled in app/schemas/crds.
DRA_DRIVER_CHART = HelmChart("nvidia-dra-driver-gpu", "https://helm.ngc.nvidia.com/nvidia", "25.3.0", "nvidia-dra-driver-gpu")
# The chart's DeviceClasses are resource.k8s.io/v1beta1 (its templates/deviceclass-*.yaml), beta
# APIs a GKE cluster serves only when asked: the four Toolkit's gke-a4x enables (1047080
# examples/gke-a4x/gke-a4x.yaml a4x-cluster `enable_k8s_beta_apis`).
DRA_BETA_APIS = (
    "resource.k8s.io/v1beta1/deviceclasses",
    "resource.k8s.io/v1beta1/resourceclaims",
    "resource.k8s.io/v1beta1/resourceclaimtemplates",
    "resource.k8s.io/v1beta1/resourceslices",
)

# Ports on the nodes the control plane calls for the pinned controllers: the Kueue and JobSet
# admission webhooks (their charts' manager `--webhook-port`/Configuration `webhook.port`) and
# Kueue's visibility API server (aggregated API, charts/kueue v0.19.2).
CONTROLLER_WEBHOOK_PORT = 9443
KUEUE_VISIBILITY_PORT = 8082

# API versions served by the pinned controllers.
KUEUE_API = "kueue.x-k8s.io/v1beta2"
KUEUE_CONFIG_API = "config.kueue.x-k8s.io/v1beta2"
JOBSET_API = "jobset.x-k8s.io/v1alpha2"
GKE_NETWORKING_API = "networking.gke.io/v1"
COMPUTE_DOMAIN_API = "resource.nvidia.com/v1beta1"  # the DRA driver's ComputeDomain (chart 25.3.0 CRD)

# The DeviceClass of a ComputeDomain's IMEX channel: the DRA driver's controller writes it into the
# ResourceClaimTemplate it makes for each ComputeDomain (NVIDIA/k8s-dra-driver-gpu v25.3.0 06db1a7
# cmd/compute-domain-controller/computedomain.go `computeDomainDefaultChannelDeviceClass`,
# templates/compute-domain-workload-claim-template.tmpl.yaml: one request, `exactly.deviceClassName`
# only, so the API's defaults make it one device, allocationMode ExactCount, count 1).
COMPUTE_DOMAIN_CHANNEL_CLASS = "compute-domain-default-channel.nvidia.com"
# Kueue 0.19.2 accounts DRA devices by default (pkg/features/kube_features.go KueueDRAIntegration,
# Beta, on since 0.18) and marks a workload inadmissible when a DeviceClass its pods claim is not in
# the Configuration's `resources.deviceClassMappings` (pkg/dra/claims.go
# GetResourceRequestsForResourceClaimTemplates). The logical resource trainstack maps the channel
# to, and gives quota for in the queue of every machine with an NVLink domain across nodes.
COMPUTE_DOMAIN_CHANNEL_RESOURCE = "nvidia.com/compute-domain-channel"
# The node label of the topology level one NVLink domain is: Cluster Toolkit 1047080
# examples/gke-a4x/nccl-jobset-example.yaml requires `kueue.x-k8s.io/podset-required-topology` on it,
# so the pods of a ComputeDomain (which cannot span NVLink domains) share one.
NVLINK_DOMAIN_LEVEL = "cloud.google.com/gce-topology-subblock"

# Kueue ProvisioningRequestConfig retry strategy, written out: Kueue 0.19.2's own defaults
# (apis/kueue/v1beta2/provisioningrequestconfig_types.go `retryStrategy`: backoffLimitCount 3,
# backoffBaseSeconds 60, backoffMaxSeconds 1800). A failed request is retried while its attempt
# number is at most the limit (pkg/controller/admissionchecks/provisioning/controller.go
# syncCheckStates: `attempt <= backoffLimitCount` -> Retry, else Rejected): 4 requests in all, then
# the workload is deactivated (pkg/controller/core/workload_controller.go
# reconcileCheckBasedEviction: a Rejected check sets the DeactivationTarget).
PROVISIONING_RETRY_LIMIT = 3
PROVISIONING_RETRY_BASE_SECONDS = 60
PROVISIONING_RETRY_MAX_SECONDS = 1800
# How long a job admitted on a flavor whose nodes do not exist yet (a pool scaling from zero with no
# ProvisioningRequest check: spot, flex-start, on-demand) may take to get every pod ready before
# Kueue's waitForPodsReady evicts it, which also withdraws the scale-up. 30 minutes, Kueue 0.19.2's
# own default timeout (apis/config/v1beta2/defaults.go DefaultWaitForPodsReadyTimeout). What it
# must hold, as far as sources say: a node's boot, 80 to 120 s (cloud.google.com/kubernetes-engine/
# docs/how-to/capacity-provisioning), and up to 15 minutes from a GPU node's Ready until its GPUs are
# allocatable (kubernetes/autoscaler cluster-autoscaler/utils/gpu, the GPU-allocatable workaround's
# commit message). The rest, about 13 minutes, is for the image pull: no source gives its time.
SCALE_UP_BUDGET_SECONDS = 30 * 60

# The Kubernetes minor version rendered objects are validated against.
KUBERNETES_VERSION = "1.32"

# Storage list prices (estimates, per GiB-month): Filestore tiers
# (cloud.google.com/filestore/pricing), PD-SSD (cloud.google.com/compute/disks-image-pricing),
# GCS Standard (cloud.google.com/storage/pricing; billed on use, so an empty bucket costs 0).
STORAGE_GIB_MONTH_USD: dict[str, float] = {
    "filestore-BASIC_HDD": 0.16,
    "filestore-BASIC_SSD": 0.30,
    "filestore-ZONAL": 0.25,
    "filestore-REGIONAL": 0.45,
    "filestore-ENTERPRISE": 0.45,
    "pd-ssd": 0.17,
    "pd-balanced": 0.10,
    "gcs-standard": 0.020,
}
HOURS_PER_MONTH = 730
# GKE Standard cluster management fee per cluster-hour (cloud.google.com/kubernetes-engine/pricing).
GKE_CLUSTER_HOURLY_USD = 0.10


@dataclass(frozen=True)
class StorageTier:
    """The capacities a storage tier (Filestore, Managed Lustre) takes, in GiB: (minimum, maximum,
    step) ranges; a capacity is the minimum of its range plus a whole number of steps."""

    ranges: tuple[tuple[int, int, int], ...]

    @property
    def min_gib(self) -> int:
        return self.ranges[0][0]

    @property
    def max_gib(self) -> int:
        return self.ranges[-1][1]


# cloud.google.com/filestore/docs/service-tiers (basic: 1 TiB (HDD) or 2.5 TiB (SSD) to 63.9 TiB
# in GiB steps; the minimums as hashicorp/terraform-provider-google@e03b762 website/docs/r/
# filestore_instance.html.markdown `capacity_gb` gives them), .../service-tiers-zonal (1 TiB to 9.75 TiB in 256 GiB steps; 10 TiB to 100 TiB
# in 2.5 TiB steps) and .../service-tiers-regional (higher range as zonal), read 2026-11-25.
# REGIONAL's lower range is 100 GiB to 10,239 GiB (docs.cloud.google.com/filestore/docs/
# service-tiers-regional.md.txt, read 2026-11-25); the stored copy breaks off at its minimum
# scaling size, and 10,239 - 100 = 10,139 is prime: no step above 1 GiB reaches that maximum (an
# earlier copy of .../service-tiers gave REGIONAL 1 TiB to 9.75 TiB in 256 GiB units; the tier page
# has since widened it). ENTERPRISE: 1 TiB to 10 TiB, up or down in 256 GiB units (the comparison
# table of cloud.google.com/filestore/docs/service-tiers#enterprise_tier, a stored copy read
# 2026-11-25; the retired "enterprise-limited" page's 512 GiB to 20 TiB no longer applies).
FILESTORE_TIERS: dict[str, StorageTier] = {
    "BASIC_HDD": StorageTier(((1024, 65434, 1),)),
    "BASIC_SSD": StorageTier(((2560, 65434, 1),)),
    "ZONAL": StorageTier(((1024, 9984, 256), (10240, 102400, 2560))),
    "REGIONAL": StorageTier(((100, 10239, 1), (10240, 102400, 2560))),
    "ENTERPRISE": StorageTier(((1024, 10240, 256),)),
}

# Managed Lustre, by per-unit throughput (MB/s per TiB; the instance's perUnitStorageThroughput):
# Managed Lustre docs "Performance tiers" and "Increase capacity"
# (docs.cloud.google.com/managed-lustre/docs/performance-tiers), read 2026-11-25 from stored
# copies: minimum, maximum, and the step, which grows past a threshold (1000: 9,000 GiB up to
# 1,530,000, then 72,000). The larger step's range starts at its first multiple above the
# threshold, as each maximum is a multiple of it. The Dynamic tier is not offered here.
LUSTRE_TIERS: dict[int, StorageTier] = {
    1000: StorageTier(((9000, 1530000, 9000), (1584000, 10008000, 72000))),
    500: StorageTier(((18000, 3060000, 18000), (3168000, 20016000, 144000))),
    250: StorageTier(((36000, 6120000, 36000), (6336000, 40032000, 288000))),
    125: StorageTier(((72000, 12240000, 72000),)),
}
# Private services access for Managed Lustre: a VPC_PEERING range on the cluster's VPC (the
# driver's e2e test and Cluster Toolkit's examples reserve /20 and /16; the docs ask /23 or larger).
LUSTRE_PSA_PREFIX = 20
# The CSI driver of GKE's Managed Lustre addon (GoogleCloudPlatform/lustre-csi-driver 89f1eb7
# pkg/csi_driver/lustre_driver.go); its static volumeHandle is `<project>/<zone>/<instance>`
# (pkg/util/util.go ParseVolumeID), its volumeAttributes `ip` and `filesystem` (controller.go).
LUSTRE_CSI_DRIVER = "lustre.csi.storage.gke.io"
# LNet's port on the instance, which the VPC admits from the private services access range
# (lustre-csi-driver kmod_installer.go: 988; 6988 only for gke-support-enabled instances, not made here).
LUSTRE_LNET_PORT = 988
# The oldest GKE node version whose Lustre CSI driver takes port 988 without the legacy LNet port
# 6988 (the workaround for the gke-metadata-server's own port 988, which every trainstack node runs
# under GKE_METADATA): GKE API LustreCsiDriverConfig.enable_legacy_lustre_port, "required ONLY ...
# [when] the GKE node version is older than 1.33.2-gke.4655000 [or] connecting to a Lustre instance
# that has the 'gke-support-enabled' flag" (google.container.v1, docs.cloud.google.com/python/docs/
# reference/container/latest/google.cloud.container_v1.types.LustreCsiDriverConfig, read 2026-11-25).
# trainstack takes the first branch: port 988, no legacy port, an instance without gke-support-enabled,
# on nodes of that version or newer (rules.lustre_gke_version). lustre-csi-driver 89f1eb7
# test/k8s-integration/cluster.go gives 1.33.2-gke.1072000 as the managed driver's oldest node
# version, the floor of the driver alone, below the port's.
LUSTRE_PORT_988_MIN_GKE = "1.33.2-gke.4655000"

# The MTU of a VPC trainstack creates for a cluster with RDMA machines or Managed Lustre: 8896, the
# largest GCP allows (cloud.google.com/vpc/docs/mtu; terraform-provider-google 017d2f5
# google/services/compute/resource_compute_network.go `mtu`: 1300 to 8896, default 1460). Managed
# Lustre creates its VPCs with it and reports up to about 10% more throughput than at 1460
# (docs.cloud.google.com/managed-lustre/docs/vpc `--mtu=8896`; .../managed-lustre/docs/performance,
# read 2026-11-25); the RDMA machines' NIC VPCs take it already (`Machine.mtu`).
JUMBO_MTU = 8896

# Other pinned images, by role. An image without `platforms` has none recorded (unknown), so it
# runs on amd64 nodes only (see Image.runs_on and workloads.platform_problems). Sources: the resiliency recipe (supervisor and trainer image:
# gpu-recipes 27b47e7 .../nemo-pretraining-gke-resiliency/values.yaml workload.image, the same era
# as its 1800 s heartbeat timeouts); GoogleCloudPlatform/container-engine-accelerators
# nvidia-driver-installer/cos/daemonset-preloaded.yaml (COS driver installer); the Kubernetes
# e2e NFS server image (see below); NGC catalog (framework base images).
IMAGES: dict[str, Image] = {
    "resiliency": Image(
        "us-central1-docker.pkg.dev/deeplearning-images/reproducibility/pytorch-gpu-goodput",
        "nemo24.12.01-A3Mega-20250605",
    ),
    "nvidia-driver-installer-cos": Image("cos-nvidia-installer", "fixed"),
    # Digest of the multi-arch index as cilium/alpine-curl's Dockerfile pins it.
    "pause": Image("registry.k8s.io/pause", "3.10", "sha256:ee6521f290b2168b6e0935a181d4cff9be1ac3f505666ef0e3c98fae8199917a"),
    # Kubernetes' own e2e NFS server (kubernetes/kubernetes test/utils/image/manifest.go), an OCI
    # image containerd 2 pulls; `volume-nfs:0.8` is Docker schema 1, which GKE 1.33+ cannot pull.
    # Same contract: privileged, exports /exports. The digest is the one registry.k8s.io promotes
    # as tag 1.4 (kubernetes/k8s.io e10ab5f registry.k8s.io/images/k8s-staging-e2e-test-images/
    # images.yaml); that tag is a manifest list (kubernetes/kubernetes 00dd02f test/images/
    # image-util.sh pushes one per tag) of linux/amd64, arm64, ppc64le and s390x (f9cfc9d
    # test/images/volume/nfs/BASEIMAGE).
    "nfs-server": Image("registry.k8s.io/e2e-test-images/volume/nfs", "1.4", "sha256:c3e380bb5a92095288b4dd586a250c560612afbabf53fb2a057e99fff75f038f"),
    "tensorboard": Image("tensorflow/tensorflow", "2.17.0"),
    "nemo-24.07": Image("nvcr.io/nvidia/nemo", "24.07"),
    # Published for both architectures: the upstream recipes run this tag on A4X's arm64 nodes
    # and on A3 Ultra's amd64 ones (AI-Hypercomputer/gpu-recipes 2e1fd5e training/a4x/llama3_70b/
    # nemo-gke/nemo2602/64gpus-bf16-gbs256/values.yaml and training/a3ultra/deepseek_v3/
    # megatron-bridge-gke/nemo2602/256gpus-bf16-seq4096-gbs2048/recipe/values.yaml `workload.image`).
    "nemo-26.02": Image("nvcr.io/nvidia/nemo", "26.02", platforms=("linux/amd64", "linux/arm64")),
    # The DRA driver chart's image (DRA_DRIVER_CHART 25.3.0 renders nvcr.io/nvidia/k8s-dra-driver-gpu
    # at its appVersion, v25.3.0): Toolkit's gke-a4x runs its controller on the x86 system pool
    # (e2-standard-16, affinity nvidia.com/gpu DoesNotExist) and its kubelet plugin on the arm64
    # GB200 nodes (cluster-toolkit 1047080 examples/gke-a4x/gke-a4x.yaml, modules/management/
    # kubectl-apply/main.tf), so it is published for both.
    "nvidia-dra-driver": Image("nvcr.io/nvidia/k8s-dra-driver-gpu", "v25.3.0", platforms=("linux/amd64", "linux/arm64")),
    "nemofw-training-23.05": Image("nvcr.io/ea-bignlp/nemofw-training", "23.05-py3"),
    # Digest as tensorwavecloud/ScalarLM 80b89ce Dockerfile pins the tag (it does not say whether
    # index or amd64 manifest; the image is built on Cloud Build's x86 workers either way).
    "pytorch-23.05": Image("nvcr.io/nvidia/pytorch", "23.05-py3", "sha256:d5aa1e516e68afab9cd3ecaaeac3dd2178618bd26cd7ad96762ed53e32e9e0bd"),
    # Recipe 003's base: GoogleCloudPlatform/ai-infra-cluster-provisioning 26e3b34
    # sample_workloads/lit-gpt-demo/Dockerfile (torch 2.1, which lit-gpt 6178c7cc needs). Digest:
    # the tag's, as BuildKit resolved it in the recipe's own build log (d9d860e
    # sample_workloads/lit-gpt-demo/README.md, Troubleshooting: `[1/8] FROM ...@sha256:...`);
    # BuildKit prints the digest of the descriptor the tag resolves to, the index for a
    # multi-platform tag (moby/buildkit d0f8125 util/imageutil/config.go: Config returns desc.Digest).
    "pytorch-23.09": Image("nvcr.io/nvidia/pytorch", "23.09-py3", "sha256:b62b664b830dd9f602e2657f471286a075e463ac75d10ab8e8073596fcb36639"),
    "cloud-sdk": Image("gcr.io/google.com/cloudsdktool/google-cloud-cli", "502.0.0-slim"),
    # Cloud Build's Docker builder: the steps of a build that logs in to a registry first
    # (components/image.py); `gcloud builds submit --tag` runs the same builder unnamed.
    "cloud-builder": Image("gcr.io/cloud-builders/docker"),
    # Runs `nsenter` into the host for the TCPXO node setup (aperture devices, import-helper);
    # container-engine-accelerators gpudirect-tcpxo/nccl-tcpxo-installer.yaml uses unpinned
    # `ubuntu`, pinned here to the Ubuntu 24.04 build of 2026-09-11 (GKE pulls Docker Hub through
    # mirror.gcr.io). Digest of its OCI index (linux/amd64, arm/v7, arm64/v8, ppc64le):
    # docker-library/repo-info 1c2b9d9 repos/ubuntu/remote/noble-20260911.md.
    "node-setup": Image("ubuntu", "noble-20260911", "sha256:b648a2094b746b16f8e688364f6fa0504788b209f328c54bf9e677f238a142df"),
    # (new pinned images go above this line, each with its source in a comment)
}


# NGC's early-access organization: pulling from it needs an NGC API key of an account with that
# access (recipe 001's base, nvcr.io/ea-bignlp/nemofw-training; GoogleCloudPlatform/
# ai-infra-cluster-provisioning ca1fbce sample_workloads/megatron-demo README: access to these
# images is obtained by registering with NVIDIA).
NGC_REGISTRY = "nvcr.io"
NGC_EARLY_ACCESS = f"{NGC_REGISTRY}/ea-bignlp/"


def image(role: str) -> Image:
    """The pinned image for `role`, or a CatalogError listing the known roles."""
    try:
        return IMAGES[role]
    except KeyError:
        raise CatalogError(f"no pinned image for {role!r}; known: {', '.join(sorted(IMAGES))}") from None
