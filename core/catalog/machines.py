"""GPU and CPU machine types, as GKE provisions them, keyed by the name a stack file writes.

Prices are estimates; `price_source` and `spot_price_source` name where each comes from (catalog.prices).

Sources, for every GPU machine: cloud.google.com/compute/docs/accelerator-optimized-machines (GPUs, vCPUs,
memory, bundled local SSD, NIC counts); cloud.google.com/kubernetes-engine/docs/how-to/
gpu-bandwidth-gpudirect-tcpx (A3 High: 4 extra NICs; A3 Mega: 8; MTU 8244) and
/gpu-bandwidth-gpudirect-rdma (A3 Ultra: 1 extra gVNIC + 8 RDMA NICs, MTU 8896);
cloud.google.com/kubernetes-engine/docs/how-to/gpus (accelerator label values); A3 Ultra VMs attach
Hyperdisk only ("supported disk types" in the accelerator-optimized machines page). The GKE TCPX guide:
A3 High's first two NICs sit on NUMA node 0, the last two on node 1 (`nic_cpu_bindings`).

a4-highgpu-8g: what differs from A3 Ultra is the GPU, memory and the gIB release. Same RDMA path: one extra
gVNIC and eight RDMA NICs on the zone's RoCE VPC, MTU 8896 (Cluster Toolkit 1047080
examples/gke-a4/gke-a4.yaml gke-a4-net-1 and gke-a4-rdma-net, 8 subnets; modules/network/gpu-rdma-vpc mtu
default 8896), accelerator nvidia-b200 and the queue `a4` (same file, kueue-configuration.yaml.tftpl, which
gives the flavor the gce-topology block/subblock/host levels), 32 local SSDs (modules/compute/gke-node-pool/
disk_definitions.tf). gIB v1.1.0 and tuner_config_a4.txtpb: gpu-recipes e515bfc
training/a4/llama3_70b/nemo-gke/nemo2507/64gpus-bf16-gbs256/recipe (values.yaml network.gibVersion;
templates/workload-job.yaml), as Toolkit's gke-a4 installs it. Compact placement with flex-start: Toolkit
gke-node-pool precondition `^(a3-ultragpu-|a4-|h4d-)`. vCPUs, memory (GiB) and the only us-central1 zone
(b): SNAPSHOT_PRICES_SOURCE. A4 is billed as one B200 SKU for the whole node (no separate vCPU/memory
price): 8 x 11.277 on demand, 8 x 4.7183 spot. The same snapshot lists 8 x 8.055 in other regions; which
SKU is standard and which DWS it does not say, so the higher is used. Every A4 chart of gpu-recipes
(src/helm-charts/a4/*) exports NCCL's socket interfaces "eth0,eth1".

a4x-highgpu-4g (cloud.google.com/compute/docs/instances/arm-on-compute, "A4X Max and A4X machine series"):
- Shape: 140 vCPUs and 884 GB on two NVIDIA Grace (Arm) sockets, four GB200 GPUs of 186 GB, 12,000 GiB
  of bundled Local SSD, Hyperdisk only. GKE counts ephemeral local SSDs in units of 375 GB (container
  v1beta1 EphemeralStorageLocalSsdConfig.local_ssd_count: "Each local SSD is 375 GB in size"), so 32, as
  for A3 Ultra and A4 (Toolkit disk_definitions.tf). vCPUs and memory also:
  Cyclenerd/google-cloud-pricing-cost-calculator dac3128 tools/machinetypes.csv (140, 884.00).
- NICs (cloud.google.com/compute/docs/gpus/gpu-network-bandwidth, "A4X machine types"): two Titanium
  (gVNIC) NICs and four CX-7 RDMA NICs, that is one extra gVNIC and four RDMA subnets of one RoCE VPC, as
  Cluster Toolkit's gke-a4x built them before it moved to DRANET (GoogleCloudPlatform/cluster-toolkit
  d1236e228^ examples/gke-a4x/gke-a4x.yaml: gke-a4x-net-1, gke-a4x-rdma-net `<zone>-vpc-roce` with 4
  subnets) and NVIDIA's GKE guide names them (A4X: Network + GKENetworkParamSet pairs gvnic-1,
  rdma-0..rdma-3; docs.nvidia.com/aicr/integrator-guide/gke-a-4-x-max-networking); MTU 8896 (Toolkit
  1047080 modules/network/gpu-rdma-vpc `mtu` default).
- gIB's arm64 build v1.1.0 (AI-Hypercomputer/gpu-recipes 2e1fd5e
  training/a4x/llama3_70b/nemo-gke/nemo2602/64gpus-bf16-gbs256/values.yaml `network.gibVersion`; Toolkit
  1047080 examples/gke-a4x/gke-a4x.yaml gib template_vars). The A4X recipe exports both after
  set_nccl_env.sh (its templates/workload-job.yaml): gIB's A3 Ultra tuner file, and bootstrap sockets on
  the two gVNICs.
- Accelerator nvidia-gb200 x 4 and the queue `a4x`: Toolkit 1047080 examples/gke-a4x/gke-a4x.yaml
  (vars.accelerator_type, guest_accelerator count) and kueue-configuration.yaml.tftpl.
- One NVLink domain joins 72 GPUs (`accelerator_topology: "1x72"` of the HIGH_THROUGHPUT workload policy
  in Toolkit 1047080 examples/gke-a4x/gke-a4x.yaml): 18 nodes. GKE labels the nodes with block, sub-block
  and host (Toolkit's gke-a4x kueue-configuration.yaml.tftpl Topology).
- DRA, through which IMEX reaches the pods, needs GKE 1.34 or later
  (cloud.google.com/kubernetes-engine/docs/how-to/set-up-dra, "Requirements").
- Not priced: neither billing-catalog copy has an a4x-highgpu-4g row (SNAPSHOT_PRICES_SOURCE:
  a4-highgpu-8g is followed by c2-standard-16; CALCULATOR_PRICES_SOURCE: a3-megagpu-8g is followed by
  c2-standard-16), and A4X capacity comes only as reservations
  (docs.cloud.google.com/ai-hypercomputer/docs/create/create-mig-with-a4x).
- Reservation only: Cluster Director's consumption options list A4X under future reservations for blocks
  of capacity only, not under calendar mode, flex-start, spot or on-demand
  (docs.cloud.google.com/cluster-director/docs/choose-consumption-option, read 2026-11-25).
- DRANET: Cluster Toolkit's gke-a4x moved to it (c765092 examples/gke-a4x/gke-a4x.yaml a4x-pool
  `enable_dranet: true`, cluster `enable_dataplane_v2: true`, PR #5835 eac0114b6; before it d1236e228^
  attached the NIC VPCs through multi-networking). GKE makes the NIC networks (accelerator network profile
  `auto`); pods claim the RDMA NICs. trainstack keeps multi-networking the default for A4X, so a live
  stack is not replaced by an upgrade; `gpuPool.networking: dranet` moves a stack (README, A4X on DRANET).
- DRA driver: Toolkit's gke-a4x installs the chart at kubectl-apply's default, v25.3.0 (c765092
  modules/management/kubectl-apply/variables.tf `nvidia_dra_driver.version`).

a4x-maxgpu-4g-metal (A4X Max, bare metal; Cluster Toolkit c765092 examples/gke-a4x-max-bm/, its README and
gke-a4x-max-bm.yaml, unless said otherwise):
- Shape: 144 vCPUs, 960 GB, four GB300 GPUs (1,116 GB in all), 12,000 GiB of bundled Local SSD (32 of
  GKE's 375 GB units, as A4X), 6 physical NICs (cloud.google.com/compute/docs/accelerator-optimized-machines,
  "A4X Max machine types"); Arm (Grace) hosts, as A4X; hyperdisk-balanced boot disk; accelerator
  nvidia-gb300 x 4; queue `a4x-max` (kueue-configuration.yaml.tftpl); one 1x72 NVLink domain of 18 nodes
  (workload_policy `accelerator_topology: "1x72"`, README: 18 nodes for 1x72 in one sub-block).
- NICs: one extra NIC of type IDPF on its own VPC (gke-a4x-max-net-1 `nic_type: "IDPF"`) and eight MRDMA
  NICs on one VPC made with the zone's RoCE *metal* profile, which makes their one subnet
  (gke-a4x-max-rdma-net; catalog.gpudirect). The pods reach them through DRANET, not multi-networking:
  the pool is labelled `cloud.google.com/gke-networking-dra-driver: "true"` and attaches the VPCs itself,
  and Toolkit's NCCL test claims eight `mrdma.google.com` devices a pod (nccl-jobset-example.yaml
  `nccl-test-all-mrdma`); Dataplane V2 on the cluster (`enable_dataplane_v2: true`). The pool also
  carries the label `cloud.google.com/gke-dpv2-unified-cni: "cni-migration"` (a4x-max-pool
  `kubernetes_labels`), which no public document explains; it is set as the blueprint sets it.
- GKE 1.34.3-gke.1318000 or later, GPU driver 580.95.05 or later, which GKE installs by default from that
  version (README, Requirements); the blueprint pins a version prefix of 1.35.
- Hugepages: 4096 of 2 MiB on every node (`linux_node_config.hugepages_config.hugepage_size_2m`), for
  the asapd-lite DaemonSet (asapd-lite-installer.yaml) the machine needs on its nodes.
- Shielded nodes off on the cluster (`enable_shielded_nodes: false`): bare metal.
- Reservation only, through an allowlisted project (README, Requirements 1; the compute docs' "you must
  reserve capacity"); the pool consumes a specific reservation (`SPECIFIC_RESERVATION`). AI Hypercomputer
  states it as a limitation of every A4X Max instance: the reservation-bound provisioning model, "other
  provisioning models are not supported" (docs.cloud.google.com/ai-hypercomputer/docs/create/create-a4xmax-mig,
  Limitations, read 2026-11-28), so no spot, flex-start or queued pool. No GKE page on A4X Max was among
  the stored copies searched; GKE makes the pool's instances through Compute Engine, which holds the rule.
  Boot disk: "You can't use Persistent Disk ... You can only use Google Cloud Hyperdisk"
  (docs.cloud.google.com/ai-hypercomputer/docs/create/create-a4xmax-instances-in-bulk, Limitations, read
  2026-11-28); the pool's boot disk type is this record's (no key sets it).
- Zones: "only ... in certain regions and zones" (create-a4xmax-instances-in-bulk, Limitations); no
  complete listing found, a partial one warned by (zones.py MACHINE_ZONES_NAMED, the recorded departure).
- NVIDIA DRA driver v25.8.0 (workload-manager-install `nvidia_dra_driver.version`).
- gIB: Toolkit's NCCL test runs the image nccl-gib-a4x-max-arm64 v1.1.1 with gIB under /usr/local/gib
  (nccl-jobset-example.yaml: LD_LIBRARY_PATH /usr/local/nvidia/lib64:/usr/local/gib/lib64); no A4X Max
  tuner file is named upstream.
- Not priced: no billing-catalog copy read has an a4x-maxgpu-4g-metal row.

g4-standard-384 (G4; cloud.google.com/compute/docs/accelerator-optimized-machines, "G4 machine series";
Cluster Toolkit c765092 examples/gke-g4/):
- Shape: 384 vCPUs, 1,440 GB, eight RTX PRO 6000 GPUs (96 GB GDDR7 each), up to 12,000 GiB of Titanium
  SSD (attached on request, none bundled), 2 physical NICs, 400 Gbps; accelerator nvidia-rtx-pro-6000.
- Fabric: no GPUDirect. "RDMA networking and the Google gIB plugin are not supported for G4 machines, the
  G4 instances use standard TCP/IP networking" (examples/gke-g4/README.md, NCCL tests); the GPUs of one
  node exchange data peer to peer over PCIe (the compute docs: "G4 GPU peer-to-peer communication"), NCCL
  told so with NCCL_P2P_LEVEL SYS on the 8-GPU g4-standard-384 (README; nccl-test.yaml). No NVLink.
  NCCL across nodes runs on the primary gVNIC; Toolkit's blueprint adds a second VPC (gke-g4-net-1) to the
  cluster and pool, which no pod of its examples uses: trainstack adds none.
- GKE 1.32.11-gke.1174000 or later (examples/gke-g4/README.md, NOTE).
- Placement: none; G4 is not among the machines GKE places compactly (Toolkit's compact-placement
  precondition, see a4-highgpu-8g) and the blueprint sets no placement policy.
- Not priced: no billing-catalog copy read has a g4 row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from trainstack.core.catalog.charts import DRA_DRIVER_CHART, DRA_DRIVER_CHART_GB300, HelmChart
from trainstack.core.catalog.gpudirect import GIB_REPOSITORY, GPUDIRECT_IMAGES, ROCE, ROCE_METAL, Dranet, GpuDirect, GpuDirectImages, RdmaVpcProfile
from trainstack.core.catalog.gpus import GPUS, Gpu
from trainstack.core.catalog.images import Image
from trainstack.core.catalog.prices import CALCULATOR_PRICES_SOURCE, PRICES_SOURCE, SNAPSHOT_PRICES_SOURCE
from trainstack.core.errors import CatalogError


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
        gib_dir: where the machine's own gIB image keeps gIB, copied into the pod as it is (an
            image that is no installer), else "" (the plugin image's installer runs).
        nccl_socket_interfaces: the interfaces NCCL's bootstrap sockets use, where the recipes
            set them over the plugin's script, else empty.
        architecture: the CPU architecture of its nodes, as their `kubernetes.io/arch` label
            writes it; every image that runs there must be published for linux/<architecture>.
        accelerator_topology: the accelerator topology of the GPUs one multi-node NVLink domain
            joins (`1x72`), set in the pool's HIGH_THROUGHPUT workload policy; None where
            NVLink stays inside a node.
        reservation_only: the provider's rule that its VMs come only from reserved capacity (no
            spot, flex-start or queued, nor on-demand outside a reservation), with its source; None
            where other capacity serves.
        min_gke_minor: the oldest GKE minor version (`1.34`) its pools and their add-ons run
            on, else None.
        min_gke_version: the oldest GKE version (`1.34.3-gke.1318000`) its nodes run on, where a
            patch is the floor, else None.
        gpu_driver_version: the oldest GPU driver its GPUs run with, where a source names one
            (GKE installs it by default from `min_gke_version`), else None.
        nic_type: the NIC type of its extra non-RDMA NICs (`GVNIC`; `IDPF` on A4X Max).
        rdma_profile: the network profile its RDMA VPC is created with (catalog.gpudirect).
        dranet: how its RDMA NICs reach pods through GKE's DRANET, where GKE offers it, else None.
        hugepages_2m: 2 MiB hugepages the pool reserves on every node (0: none).
        node_daemonsets: the DaemonSets (catalog manifests, by name) its nodes need.
        node_labels: Kubernetes labels its pools put on every node, where a source sets them.
        bare_metal: a bare metal machine (no hypervisor): the cluster takes no shielded nodes.
        dra_driver: the NVIDIA DRA driver chart its ComputeDomains need (a machine with a
            multi-node NVLink domain), else None; `dra_driver_image` names its image in IMAGES.
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
    gib_dir: str = ""
    nccl_socket_interfaces: tuple[str, ...] = ()
    spot_hourly_usd: float | None = None
    price_source: str = PRICES_SOURCE
    spot_price_source: str = SNAPSHOT_PRICES_SOURCE
    architecture: str = "amd64"
    accelerator_topology: str | None = None
    reservation_only: str | None = None
    min_gke_minor: str | None = None
    min_gke_version: str | None = None
    gpu_driver_version: str | None = None
    nic_type: str = "GVNIC"
    rdma_profile: RdmaVpcProfile = ROCE
    dranet: Dranet | None = None
    hugepages_2m: int = 0
    node_daemonsets: tuple[str, ...] = ()
    node_labels: tuple[tuple[str, str], ...] = ()
    bare_metal: bool = False
    dra_driver: HelmChart | None = None
    dra_driver_image: str | None = None

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
        # Sources: module docstring, a4-highgpu-8g.
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
            # 8 x 11.277 on demand, 8 x 4.7183 spot: one B200 SKU for the whole node (module docstring)
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
        # Sources: module docstring, a4x-highgpu-4g.
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
            # the A4X recipe's templates/workload-job.yaml (module docstring)
            nccl_tuner_config="tuner_config_a3u.txtpb",
            nccl_socket_interfaces=("eth0", "eth1"),
            accelerator_topology="1x72",
            reservation_only="blocks of a future reservation: docs.cloud.google.com/cluster-director/docs/choose-consumption-option",
            min_gke_minor="1.34",
            # Toolkit c765092 examples/gke-a4x (enable_dranet), kubectl-apply's DRA driver default
            dranet=Dranet(managed_networks=True),
            dra_driver=DRA_DRIVER_CHART,
            dra_driver_image="nvidia-dra-driver",
        ),
        # Sources: module docstring, a4x-maxgpu-4g-metal.
        Machine(
            name="a4x-maxgpu-4g-metal",
            accelerator="nvidia-gb300",
            gpu=GPUS["gb300"],
            gpus_per_node=4,
            vcpus=144,
            memory_gb=960,
            local_ssds=32,
            gpudirect=GpuDirect.RDMA,
            gvnic_networks=1,
            rdma_subnets=8,
            mtu=8896,
            compact_placement=True,
            hourly_usd=None,
            boot_disk_type="hyperdisk-balanced",
            default_queue="a4x-max",
            topology_labels=True,
            architecture="arm64",
            nccl_plugin=Image("us-docker.pkg.dev/gce-ai-infra/gpudirect-gib/nccl-gib-a4x-max-arm64", "v1.1.1", platforms=("linux/arm64",)),
            gib_dir="/usr/local/gib",  # Toolkit's A4X Max nccl-jobset-example.yaml LD_LIBRARY_PATH
            nccl_socket_interfaces=("eth0",),  # gpu-recipes 2e1fd5e training/a4x-max/*/templates/workload-job.yaml
            accelerator_topology="1x72",
            reservation_only=(
                "the reservation-bound provisioning model, no other: docs.cloud.google.com/ai-hypercomputer/docs/create/create-a4xmax-mig, Limitations"
            ),
            min_gke_minor="1.34",
            min_gke_version="1.34.3-gke.1318000",
            gpu_driver_version="580.95.05",
            nic_type="IDPF",
            rdma_profile=ROCE_METAL,
            dranet=Dranet(managed_networks=False, required=True),
            hugepages_2m=4096,
            node_daemonsets=("asapd-lite",),
            node_labels=(("cloud.google.com/gke-dpv2-unified-cni", "cni-migration"),),  # a4x-max-pool kubernetes_labels
            bare_metal=True,
            dra_driver=DRA_DRIVER_CHART_GB300,
            dra_driver_image="nvidia-dra-driver-25.8.0",
        ),
        # Sources: module docstring, g4-standard-384.
        Machine(
            name="g4-standard-384",
            accelerator="nvidia-rtx-pro-6000",
            gpu=GPUS["rtx-pro-6000"],
            gpus_per_node=8,
            vcpus=384,
            memory_gb=1440,
            local_ssds=0,
            gpudirect=GpuDirect.NONE,
            gvnic_networks=0,
            rdma_subnets=0,
            mtu=1460,
            compact_placement=False,
            hourly_usd=None,
            default_queue="g4",  # trainstack's: Toolkit's gke-g4 installs Kueue with no queue
            min_gke_version="1.32.11-gke.1174000",
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


@dataclass(frozen=True)
class CpuMachine:
    """A CPU machine type for controller pools, build machines and servers."""

    name: str
    vcpus: int
    memory_gb: int
    hourly_usd: float
    boot_disk_type: str = "pd-balanced"


# cloud.google.com/compute/docs/general-purpose-machines (shapes); prices: PRICES_SOURCE.
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
