"""Node pools and the service account their nodes run as.

A pool's spec (`GpuPoolSpec`, `CpuPoolSpec`) is what a stack file's `trainstack:gpuPools` entry or
`trainstack:cpuPool` holds, with its rules; the component's Args are the spec and where the pool
goes (project, cluster, account, NIC networks, labels). The pool decides its placement from the
spec (`GpuPoolSpec.compact`).

Pods choose a pool by the labels GKE puts on every node (the pool's name, the accelerator):
`GpuNodePool.node_selector`. GPU nodes carry `GPU_TAINT`, so only pods with
`GpuNodePool.tolerations` land there; the CPU pool, where controllers run, is untainted.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import pulumi
import pulumi_gcp as gcp
from pydantic import BaseModel, model_validator

from trainstack.components.args import Args, KeyPath, Problem, deprecated_keys
from trainstack.components.k8s_provider import ACCELERATOR_LABEL, NODE_POOL_LABEL
from trainstack.components.options import Children
from trainstack.core import catalog, rules
from trainstack.core.errors import ABSENT
from trainstack.core.spec import Duration, NodePoolName, ProjectId, Section, ZoneId, bounded, by_rule, rule_errors

# A pool's boot disk, unless the stack file sets one.
GPU_BOOT_DISK_GB = 200
CPU_BOOT_DISK_GB = 100


def _named(zones: list[str] | None) -> Iterator[Problem]:
    """A component's pool names its zones: the stack file's defaults are the stack's."""
    if not zones:
        yield Problem(("zones",), ABSENT, "required key is missing") if zones is None else Problem(("zones",), zones, "must not be empty")


def _cluster_zone(location: Any, zone: Any) -> str | None:
    """rules.cluster_zone once both are known (not Outputs)."""
    return rules.cluster_zone(location, zone) if isinstance(location, str) and isinstance(zone, str) else None


@dataclass(frozen=True)
class Taint:
    """A node taint as Kubernetes writes it (`effect` NoSchedule, PreferNoSchedule, NoExecute)."""

    key: str
    value: str
    effect: str

    @property
    def gke_effect(self) -> str:
        """The GKE API's spelling of the effect (NO_SCHEDULE)."""
        return {"NoSchedule": "NO_SCHEDULE", "PreferNoSchedule": "PREFER_NO_SCHEDULE", "NoExecute": "NO_EXECUTE"}[self.effect]

    def toleration(self) -> dict[str, str]:
        """The pod toleration of exactly this taint."""
        return {"key": self.key, "operator": "Equal", "value": self.value, "effect": self.effect}


# GKE taints every GPU node with this (cloud.google.com/kubernetes-engine/docs/how-to/gpus);
# the GPU pool sets it explicitly so it holds whatever creates the pool.
GPU_TAINT = Taint("nvidia.com/gpu", "present", "NoSchedule")


def gpu_pool_selector(pool: str, machine: catalog.Machine) -> dict[str, str]:
    """The node selector of a GPU pool: its name and accelerator, as GKE labels its nodes."""
    return {ACCELERATOR_LABEL: machine.accelerator, NODE_POOL_LABEL: pool}


# GKE's taint on Arm nodes, which everything upstream runs on A4X tolerates: the recipe's pods
# (gpu-recipes 2e1fd5e training/a4x/llama3_70b/nemo-gke/nemo2602/64gpus-bf16-gbs256/templates/
# workload-job.yaml), Toolkit's job templates, Kueue flavor and DRA kubelet plugin (cluster-toolkit
# 1047080 examples/gke-a4x/gke-a4x.yaml, kueue-configuration.yaml.tftpl, modules/management/
# kubectl-apply/main.tf).
ARM_TAINT = Taint("kubernetes.io/arch", "arm64", "NoSchedule")


def gpu_tolerations(machine: catalog.Machine) -> list[dict[str, str]]:
    """What a pod on a GPU pool of `machine` tolerates: the GPU taint, and GKE's Arm taint on Arm nodes."""
    return [GPU_TAINT.toleration(), *([ARM_TAINT.toleration()] if machine.architecture == ARM_TAINT.value else [])]


CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform"

# What a node needs and no more: write logs and metrics, read its own metadata. Pulling images
# is granted on the stack's own repository (WorkloadImageArgs.readers), not the project's.
NODE_ROLES = (
    "roles/logging.logWriter",
    "roles/monitoring.metricWriter",
    "roles/monitoring.viewer",
    "roles/stackdriver.resourceMetadata.writer",
)

_DRIVER_VERSIONS = {"default": "DEFAULT", "latest": "LATEST", "daemonset": "INSTALLATION_DISABLED"}


@dataclass(frozen=True)
class NodeServiceAccountArgs(Args):
    """Arguments of NodeServiceAccount."""

    project: str
    """The project of the account and its role grants."""
    account_id: str
    """The account ID: 6-30 characters, unique in the project."""

    _checks = {"project": rules.PROJECT_ID, "account_id": rules.ACCOUNT_ID}


class NodeServiceAccount(pulumi.ComponentResource):
    """A least-privilege service account for nodes, granted `NODE_ROLES` on the project.

    Depend on this component (not only on `email`) so nodes start after the grants exist."""

    account: gcp.serviceaccount.Account
    """The service account."""
    email: pulumi.Output[str]
    """The account's email, what a node pool runs as."""

    def __init__(self, name: str, args: NodeServiceAccountArgs, opts: pulumi.ResourceOptions | None = None):
        args = NodeServiceAccountArgs.checked(args, type(self), name)
        super().__init__("trainstack:gcp:NodeServiceAccount", name, None, opts)
        kids = Children(self, name, opts)
        self.account = gcp.serviceaccount.Account(
            **kids.main(was="account"),
            project=args.project,
            account_id=args.account_id,
            display_name="trainstack GKE nodes",
        )
        self.email = self.account.email
        for role in NODE_ROLES:
            gcp.projects.IAMMember(
                **kids(role.removeprefix("roles/")),
                project=args.project,
                role=role,
                member=self.account.member,
            )
        self.register_outputs({"email": self.email})


DWS = ("flex-start", "queued")
NO_RESERVATION = ("spot", *DWS)
"""The capacities whose VMs consume no reservation (GKE NodeConfig.reservationAffinity)."""


def default_affinity(provisioning: object) -> str:
    """The reservation affinity of a pool that names no reservation: none for spot, flex-start and
    queued capacity, which cannot consume one (GKE NodeConfig.reservationAffinity), else any."""
    return "none" if provisioning in NO_RESERVATION else "any"


class Autoscaling(Section):
    """The autoscaler's bounds, for the whole pool."""

    min_nodes: Annotated[int, bounded(rules.NODE_COUNT)] = 0
    """The fewest nodes the autoscaler keeps (0 lets the pool empty)."""
    max_nodes: Annotated[int, bounded(rules.AUTOSCALING_MAX)]
    """The most nodes the autoscaler makes."""

    @model_validator(mode="after")
    def _rules(self) -> Autoscaling:
        # The autoscaler's minimum is not above its maximum.
        if wrong := rules.min_max(self.min_nodes, self.max_nodes):
            rule_errors("Autoscaling", [Problem(("minNodes",), self.min_nodes, wrong)])
        return self


class Reservation(Section):
    """Which Compute Engine reservation the pool consumes."""

    # terraform-provider-google container node_config reservation_affinity.consume_reservation_type.
    affinity: Literal["none", "any", "specific"] = "any"
    """`specific`: the reservation named; `any`: any reservation that matches; `none`: none."""
    name: Annotated[str, by_rule(rules.RESERVATION_NAME)] | None = None
    """A reservation (also a calendar-mode one, consumed the same way once it starts), or one of its
    blocks: `<reservation>/reservationBlocks/<block>`."""
    project: ProjectId | None = None
    """A shared reservation's owner project."""

    @model_validator(mode="after")
    def _rules(self) -> Reservation:
        # A reservation's name goes with affinity specific, and only with it (rules.reservation).
        rule_errors("Reservation", [Problem((key,), value, wrong) for key, value, wrong in rules.reservation(self.affinity, self.name, self.project)])
        return self

    def args(self) -> gcp.container.NodePoolNodeConfigReservationAffinityArgs:
        """The node config's reservation affinity."""
        if self.affinity == "none":
            return gcp.container.NodePoolNodeConfigReservationAffinityArgs(consume_reservation_type="NO_RESERVATION")
        if self.affinity == "any":
            return gcp.container.NodePoolNodeConfigReservationAffinityArgs(consume_reservation_type="ANY_RESERVATION")
        value = f"projects/{self.project}/reservations/{self.name}" if self.project else self.name
        return gcp.container.NodePoolNodeConfigReservationAffinityArgs(
            consume_reservation_type="SPECIFIC_RESERVATION",
            key="compute.googleapis.com/reservation-name",
            values=[value],
        )


class UpgradeSettings(Section):
    """How GKE upgrades a pool's nodes (surge upgrades)."""

    # The GKE API takes int32s (container v1 NodePool.UpgradeSettings max_surge, max_unavailable),
    # but a pool holds at most rules.POOL_NODES_MAX nodes a zone: no more can surge or be unavailable.
    max_surge: Annotated[int, bounded(rules.UPGRADE_NODES)] = 0
    """Nodes an upgrade may add beyond the pool's size; 0 asks for no capacity beyond the reservation."""
    max_unavailable: Annotated[int, bounded(rules.UPGRADE_NODES)] = 1
    """Nodes an upgrade may take down at once."""


GpuMachineName = Annotated[str, by_rule(rules.gpu_machine)]
CpuMachineName = Annotated[str, by_rule(rules.cpu_machine)]


class GpuPoolSpec(Section):
    """A GPU node pool (`trainstack:gpuPool`, or an item of `trainstack:gpuPools`). Size is
    `nodeCount` or `autoscaling`; capacity is `reservation` and `provisioning`."""

    name: NodePoolName = "gpu-pool"
    """The pool's name, unique among the cluster's node pools (its Pulumi name is `gpu-pool-<name>`:
    renaming a pool replaces it)."""
    machine_type: GpuMachineName
    """The GPU machine type, one of the catalog's (core/catalog/machines.py)."""
    node_count: Annotated[int, bounded(rules.NODE_COUNT)] | None = None
    """A fixed size: the nodes of the whole pool, spread evenly over its zones; or set autoscaling."""
    autoscaling: Autoscaling | None = None
    """Autoscaler bounds instead of a fixed nodeCount."""
    zones: list[ZoneId] | None = None
    """The zones of `gcp:region` the nodes go in; default: `[gcp:zone]`."""
    placement: Literal["auto", "compact", "none"] = "auto"
    """auto: compact where GKE allows it (see `compact`); compact: insist; none: no policy."""
    reservation: Reservation = Reservation()
    """The Compute Engine reservation the nodes consume; default: affinity `any`, or `none` for
    spot, flex-start and queued pools (their capacity consumes no reservation)."""
    provisioning: Literal["on-demand", "spot", "flex-start", "queued"] = "on-demand"
    """on-demand, spot, DWS flex-start (VMs when the autoscaler finds capacity, at most 7 days),
    or DWS queued provisioning (flex-start VMs obtained all at once through a Kueue
    ProvisioningRequest admission check)."""
    max_run_duration: Duration | None = None
    """How long flex-start / queued VMs run before GKE reclaims them (at most 7 days)."""
    gpu_driver: Literal["default", "latest", "daemonset"] = "latest"
    """`default` or `latest`: GKE installs that driver version; `daemonset`: GKE installs none and the
    stack runs the installer DaemonSet."""
    boot_disk_gb: Annotated[int, bounded(rules.GPU_BOOT_DISK_GB)] = GPU_BOOT_DISK_GB
    """The nodes' boot disk size in GB; its type follows the machine."""
    upgrade: UpgradeSettings = UpgradeSettings()
    """How GKE upgrades the pool's nodes."""
    gpudirect: Literal["rdma", "tcpxo", "tcpx", "none"] | None = None
    """GPUDirect is fixed by the machine; the key exists so a stack can state it and be checked."""
    networking: Literal["multi-network", "dranet"] | None = None
    """How pods reach the RDMA NICs: `multi-network` (GKE multi-networking) or `dranet` (GKE's
    DRANET, where the machine's record has it: A4X, A4X Max); default: the machine's way (DRANET
    only on A4X Max). Changing it replaces the pool (see README, A4X on DRANET)."""

    @property
    def machine(self) -> catalog.Machine:
        return catalog.machine(self.machine_type)

    @property
    def compact(self) -> bool:
        """Whether the pool gets a COMPACT placement policy. Never with a specific reservation:
        the reservation's own (dense) deployment places its VMs, as Cluster Toolkit's A3 Ultra
        and A3 Mega blueprints do; with flex-start only on machines GKE allows it for. Always on a
        machine whose NVLink domain a workload policy places (placement none is refused)."""
        machine = catalog.MACHINES.get(self.machine_type)
        if machine is not None and machine.accelerator_topology is not None:
            return self.placement != "none"
        allowed = (
            machine is not None
            and machine.compact_placement
            and self.reservation.affinity != "specific"
            and self.provisioning != "queued"
            and (self.provisioning != "flex-start" or machine.compact_with_flex_start)
            and (self.zones is None or len(self.zones) == 1)
        )
        return self.placement == "compact" or (self.placement == "auto" and allowed)

    @property
    def dranet(self) -> bool:
        """Whether the pool is on DRANET (rules.uses_dranet)."""
        return rules.uses_dranet(self.machine, self.networking)

    @property
    def nic_vpcs(self) -> bool:
        """Whether the stack makes VPCs for the machine's extra NICs: not where GKE makes them (DRANET
        with the accelerator network profile)."""
        managed = self.dranet and self.machine.dranet is not None and self.machine.dranet.managed_networks
        return bool(self.machine.extra_nics) and not managed

    @property
    def topology_aware(self) -> bool:
        """Whether Kueue places jobs on this pool with Topology Aware Scheduling: where GKE
        labels the nodes with every topology level (catalog `topology_labels`), on a pool of
        fixed size (an autoscaled pool has no nodes to place a job on until its pods ask)."""
        return self.machine.topology_labels and self.autoscaling is None

    @property
    def capacity(self) -> str:
        """How the pool gets its VMs: `reservation`, `on-demand`, `spot`, `flex-start` or `queued`."""
        return "reservation" if self.provisioning == "on-demand" and self.reservation.affinity != "none" else self.provisioning

    @property
    def dws(self) -> bool:
        """Whether the pool's VMs come from the Dynamic Workload Scheduler (flex-start or queued)."""
        return self.provisioning in DWS

    @property
    def max_nodes(self) -> int:
        return self.autoscaling.max_nodes if self.autoscaling else (self.node_count or 0)

    @model_validator(mode="before")
    @classmethod
    def _capacity_consumes_no_reservation(cls, data: Any) -> Any:
        """A spot, flex-start or queued pool that names no reservation consumes none: GKE refuses
        any other affinity with that capacity, so it need not be spelt out (`default_affinity`)."""
        if isinstance(data, dict) and "reservation" not in data and (affinity := default_affinity(data.get("provisioning"))) != "any":
            return {**data, "reservation": {"affinity": affinity}}
        return data

    @model_validator(mode="after")
    def _rules(self) -> GpuPoolSpec:
        rule_errors("GpuPoolSpec", list(self._problems()))
        machine = catalog.MACHINES.get(self.machine_type)
        if machine and self.gpudirect and self.gpudirect != machine.gpudirect.value:  # a key of the stack file only
            rule_errors(
                "GpuPoolSpec", [Problem(("gpudirect",), self.gpudirect, f"{machine.name} uses GPUDirect {machine.gpudirect.value!r}; the catalog fixes it")]
            )
        return self

    def _problems(self) -> Iterator[Problem]:
        """The rules between the pool's keys, each independent of the others."""
        machine = catalog.MACHINES.get(self.machine_type)
        zones = sorted(set(self.zones or []))
        # A pool has a fixed size or autoscaler bounds, not both nor neither.
        if (self.node_count is None) == (self.autoscaling is None):
            yield Problem(("nodeCount",), self.node_count, "set exactly one of a fixed node count and autoscaling")
        # GKE sizes a pool per zone.
        if self.node_count and (wrong := rules.nodes_per_zone(self.node_count, zones)):
            yield Problem(("nodeCount",), self.node_count, wrong)
        # GKE upgrade settings: maxSurge and maxUnavailable cannot both be 0.
        if self.upgrade.max_surge == 0 and self.upgrade.max_unavailable == 0:
            yield Problem(("upgrade", "maxUnavailable"), 0, "cannot be 0 when the upgrade's surge is 0 too: an upgrade could replace no node")
        # An upgrade never takes a whole fixed-size pool (of more than one node) down at once.
        if self.node_count is not None and self.upgrade.max_unavailable >= self.node_count > 1:
            yield Problem(
                ("upgrade", "maxUnavailable"),
                self.upgrade.max_unavailable,
                f"must be less than the pool's node count ({self.node_count}) so an upgrade never takes the whole pool down",
            )
        # DWS VMs are obtained by the autoscaler (GKE flex-start and queued provisioning).
        if self.provisioning in DWS and self.autoscaling is None:
            yield Problem(("autoscaling",), None, f"{self.provisioning} provisioning needs autoscaling")
        # What a queued-provisioning pool needs beside its setting (rules.queued_pool).
        for wrong in rules.queued_pool(self.provisioning, self.autoscaling.min_nodes if self.autoscaling else None, self.compact):
            yield Problem(("provisioning",), self.provisioning, wrong)
        # A maximum run duration only for DWS capacity, at most 7 days.
        if self.max_run_duration is not None and (wrong := rules.max_run_duration(self.provisioning, self.max_run_duration)):
            yield Problem(("maxRunDuration",), self.max_run_duration, wrong)
        # Spot and DWS VMs consume no reservation (GKE NodeConfig.reservationAffinity).
        if self.provisioning in NO_RESERVATION and self.reservation.affinity != "none":
            yield Problem(
                ("reservation", "affinity"), self.reservation.affinity, f"{self.provisioning} capacity cannot consume a reservation; set affinity none"
            )
        # A compact placement policy places nodes in one zone (GKE compact placement).
        if self.compact and len(zones) > 1:
            yield Problem(("zones",), self.zones, "compact placement needs exactly one zone")
        # What forbids compact placement on this machine and capacity (rules.compact_placement).
        if self.compact and machine:
            for key, wrong in rules.compact_placement(machine, self.provisioning, self.reservation.affinity):
                yield Problem((key,), self.provisioning if key == "provisioning" else self.placement, wrong)
        # A multi-node NVLink domain's pool is placed by its workload policy (rules.nvlink_placement).
        if machine and (wrong := rules.nvlink_placement(machine, self.compact)):
            yield Problem(("placement",), self.placement, wrong)
        if machine:
            # A reservation-only machine's capacity (rules.reserved_capacity).
            for at, wrong in rules.reserved_capacity(machine, self.provisioning, self.reservation.affinity):
                yield Problem(at, self.provisioning if at == ("provisioning",) else self.reservation.affinity, wrong)
            # Each size of a pool of a multi-node NVLink domain machine holds whole domains.
            sizes: dict[tuple[str, ...], int | None] = {("nodeCount",): self.node_count}
            if self.autoscaling:
                sizes |= {("autoscaling", "minNodes"): self.autoscaling.min_nodes, ("autoscaling", "maxNodes"): self.autoscaling.max_nodes}
            for size, nodes in sizes.items():
                if nodes is not None and (wrong := rules.nvlink_domains(machine, nodes)):
                    yield Problem(size, nodes, wrong)
        # An RDMA machine's pool is in one zone: its RDMA VPC is bound to one zone's RoCE network
        # profile (catalog `rdma_subnets`).
        if machine and machine.rdma_subnets and self.zones is not None and len(zones) != 1:
            yield Problem(("zones",), self.zones, f"{machine.name} needs exactly one zone: its RDMA VPC is bound to one zone's RoCE profile")
        # DRANET where the machine's record says how, and nothing else where it is the only way (rules.dranet_mode).
        if machine and (wrong := rules.dranet_mode(machine, self.networking)):
            yield Problem(("networking",), self.networking, wrong)


class CpuPoolSpec(Section):
    """`trainstack:cpuPool`: the pool the controllers (Kueue, JobSet, supervisor) run on."""

    name: NodePoolName = "cpu-pool"
    """The pool's name, unique among the cluster's node pools."""
    machine_type: CpuMachineName = "e2-standard-8"
    """The CPU machine type, one of the catalog's (core/catalog/machines.py)."""
    node_count: Annotated[int, bounded(rules.CPU_NODE_COUNT)] = 2
    """The nodes of the whole pool, spread evenly over its zones."""
    zones: list[ZoneId] | None = None
    """The zones of `gcp:region` the nodes go in; default: the first GPU pool's zones."""
    boot_disk_gb: Annotated[int, bounded(rules.CPU_BOOT_DISK_GB)] = CPU_BOOT_DISK_GB
    """The nodes' boot disk size in GB."""

    @model_validator(mode="after")
    def _rules(self) -> CpuPoolSpec:
        # GKE sizes a pool per zone.
        if self.zones and (wrong := rules.nodes_per_zone(self.node_count, sorted(set(self.zones)))):
            rule_errors("CpuPoolSpec", [Problem(("nodeCount",), self.node_count, wrong)])
        return self


@dataclass(frozen=True)
class ExtraNetwork(Args):
    """The VPC and subnet of one additional node NIC."""

    network: pulumi.Input[str]
    """The VPC's name."""
    subnetwork: pulumi.Input[str]
    """The subnet's name."""


class GpuPoolAliases(Section):
    """The package's GpuNodePool inputs before they took the spec's spelling: deprecated, accepted
    for one release (`GpuNodePoolArgs.spec_input`), then refused as unknown keys."""

    compact: bool | None = None
    """Deprecated: use `placement` (true is `compact`, false is `none`)."""
    max_surge: int | None = None
    """Deprecated: use `upgrade.maxSurge`."""
    max_unavailable: int | None = None
    """Deprecated: use `upgrade.maxUnavailable`."""


@dataclass(frozen=True)
class GpuNodePoolArgs(Args):
    """Arguments of GpuNodePool: the pool as a stack file writes it, and where it goes."""

    spec: GpuPoolSpec
    """The pool: a stack file's `trainstack:gpuPools` entry, its zones named."""
    project: str
    """The cluster's project."""
    location: str
    """The cluster's region (or zone)."""
    cluster: pulumi.Input[str]
    """The cluster's id (`projects/<p>/locations/<l>/clusters/<name>`)."""
    service_account: pulumi.Input[str]
    """Email of the account nodes run as."""
    extra_networks: list[ExtraNetwork] = field(default_factory=list)
    """One VPC and subnet per extra NIC, in interface order."""
    labels: dict[str, str] = field(default_factory=dict)
    """GCP labels on the node VMs."""
    workload_policy_name: str | None = None
    """The name of the NVLink domain's workload policy (a machine with one only), unique in the
    project and region; None: `<name>-nvlink`."""
    image_streaming: bool = False
    """GKE image streaming (`gcfsConfig`): images in Artifact Registry start before they are pulled whole."""
    preload_disk_image: pulumi.Input[str] | None = None
    """A disk image of container images each node gets as a secondary boot disk (CONTAINER_IMAGE_CACHE;
    needs image streaming; checked when plain, not an Output of a build). The provider replaces the pool
    when it changes."""

    _checks = {
        "project": rules.PROJECT_ID,
        "location": rules.LOCATION,
        "workload_policy_name": rules.GCP_NAME,
        "preload_disk_image": rules.DISK_IMAGE,
        "labels": rules.gcp_labels,
    }

    @classmethod
    def spec_aliases(cls) -> type[BaseModel]:
        return GpuPoolAliases

    @classmethod
    def spec_required(cls) -> tuple[str, ...]:
        return ("zones",)

    @classmethod
    def spec_input(cls, raw: dict[str, Any]) -> dict[str, Any]:
        """The package's inputs of the spec, its deprecated keys (`GpuPoolAliases`) in the spec's spelling."""
        moves: dict[KeyPath, KeyPath] = {
            ("compact",): ("placement",),
            ("maxSurge",): ("upgrade", "maxSurge"),
            ("maxUnavailable",): ("upgrade", "maxUnavailable"),
        }
        placement: dict[KeyPath, Callable[[Any], Any]] = {("compact",): lambda compact: {True: "compact", False: "none"}.get(compact, compact)}
        return deprecated_keys(raw, moves, "GpuNodePoolArgs", placement)

    @property
    def machine(self) -> catalog.Machine:
        """The machine's catalog record."""
        return self.spec.machine

    @property
    def zones(self) -> list[str]:
        """Where the nodes go, in order."""
        return sorted(set(self.spec.zones or []))

    def _cross(self) -> Iterator[Problem]:
        spec = self.spec
        yield from _named(spec.zones)  # the stack file's default (`[gcp:zone]`) is the stack's
        if spec.dranet and spec.machine.dranet and spec.machine.dranet.managed_networks and self.extra_networks:
            # Toolkit c765092 gke-node-pool check `dranet_additional_networks_conflict`
            yield Problem(("extra_networks",), len(self.extra_networks), "GKE makes the NIC networks of a DRANET pool of this machine; name none")
        for zone in spec.zones or []:  # the stack checks its pools' zones against gcp:region (StackConfig)
            if message := _cluster_zone(self.location, zone) or rules.machine_zone(spec.machine_type, zone):
                yield Problem(("zones",), zone, message)


class GpuNodePool(pulumi.ComponentResource):
    """A GPU node pool shaped by the machine's catalog record: accelerators and driver, local
    SSDs as ephemeral storage, gVNIC, one additional node network per extra NIC (or, on DRANET
    with GKE's accelerator network profile, the networks GKE makes), the DRANET driver's label,
    hugepages and node labels where the machine needs them, compact placement (on a machine with
    a multi-node NVLink domain, through a HIGH_THROUGHPUT workload policy of its accelerator
    topology, `<name>-workload-policy`), the reservation and the GPU taint.

    A fixed-size pool owns `node_count`; an autoscaled pool leaves it to the autoscaler
    (changes to it are ignored, so `pulumi up` never resizes a running job's pool).

    Its inputs are a stack file's GPU pool (`placement`, `upgrade.maxSurge`) and where it goes. The
    package inputs `compact`, `maxSurge` and `maxUnavailable` are deprecated spellings of
    `placement` and `upgrade`, accepted for one release.
    """

    pool: gcp.container.NodePool
    """The node pool resource."""
    workload_policy: gcp.compute.ResourcePolicy | None
    """The NVLink domain's workload policy the pool is placed by, or None."""
    node_selector: dict[str, str]
    """What a pod selects to land on this pool."""
    tolerations: list[dict[str, str]]
    """What a pod tolerates to land on this pool (its taint)."""

    def __init__(self, name: str, args: GpuNodePoolArgs, opts: pulumi.ResourceOptions | None = None):
        args = GpuNodePoolArgs.checked(args, type(self), name)
        spec = args.spec
        super().__init__("trainstack:gcp:GpuNodePool", name, None, opts)
        machine = args.machine
        zones = args.zones
        flex = spec.provisioning == "flex-start"
        queued = spec.provisioning == "queued"
        autoscaled = spec.autoscaling is not None
        managed_nics = spec.dranet and machine.dranet is not None and machine.dranet.managed_networks
        node_labels = {**dict(machine.node_labels), **({catalog.DRANET_NODE_LABEL: "true"} if spec.dranet else {})}
        node_config = gcp.container.NodePoolNodeConfigArgs(
            machine_type=machine.name,
            image_type="COS_CONTAINERD",
            guest_accelerators=[
                gcp.container.NodePoolNodeConfigGuestAcceleratorArgs(
                    type=machine.accelerator,
                    count=machine.gpus_per_node,
                    gpu_driver_installation_config=gcp.container.NodePoolNodeConfigGuestAcceleratorGpuDriverInstallationConfigArgs(
                        gpu_driver_version=_DRIVER_VERSIONS[spec.gpu_driver]
                    ),
                )
            ],
            ephemeral_storage_local_ssd_config=gcp.container.NodePoolNodeConfigEphemeralStorageLocalSsdConfigArgs(local_ssd_count=machine.local_ssds)
            if machine.local_ssds
            else None,
            gcfs_config=gcp.container.NodePoolNodeConfigGcfsConfigArgs(enabled=True) if args.image_streaming else None,
            secondary_boot_disks=[gcp.container.NodePoolNodeConfigSecondaryBootDiskArgs(disk_image=args.preload_disk_image, mode="CONTAINER_IMAGE_CACHE")]
            if args.preload_disk_image
            else None,
            disk_size_gb=spec.boot_disk_gb,
            disk_type=machine.boot_disk_type,
            gvnic=gcp.container.NodePoolNodeConfigGvnicArgs(enabled=True),
            taints=[gcp.container.NodePoolNodeConfigTaintArgs(key=GPU_TAINT.key, value=GPU_TAINT.value, effect=GPU_TAINT.gke_effect)],
            labels=node_labels or None,
            linux_node_config=gcp.container.NodePoolNodeConfigLinuxNodeConfigArgs(
                hugepages_config=gcp.container.NodePoolNodeConfigLinuxNodeConfigHugepagesConfigArgs(hugepage_size2m=machine.hugepages_2m)
            )
            if machine.hugepages_2m
            else None,
            resource_labels=dict(args.labels),
            reservation_affinity=spec.reservation.args(),
            spot=True if spec.provisioning == "spot" else None,
            # GKE's queued-provisioning pools take flex-start VMs too (GKE docs, provisioningrequest:
            # "add the --flex-start and --enable-queued-provisioning flags").
            flex_start=True if flex or queued else None,
            max_run_duration=spec.max_run_duration and f"{int(rules.duration_seconds(spec.max_run_duration))}s",
            service_account=args.service_account,
            oauth_scopes=[CLOUD_PLATFORM_SCOPE],
            workload_metadata_config=gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(mode="GKE_METADATA"),
            shielded_instance_config=gcp.container.NodePoolNodeConfigShieldedInstanceConfigArgs(enable_secure_boot=True, enable_integrity_monitoring=True),
        )
        kids = Children(self, name, opts)
        self.workload_policy = _workload_policy(kids, args) if spec.compact and machine.accelerator_topology else None
        self.pool = gcp.container.NodePool(
            **kids.main(ignore_changes=["nodeCount", "initialNodeCount"] if autoscaled else None),
            project=args.project,
            location=args.location,
            cluster=args.cluster,
            name=spec.name,
            node_locations=zones,
            # node_count and initial_node_count are per zone.
            node_count=spec.node_count // len(zones) if spec.node_count is not None else None,
            initial_node_count=math.ceil(spec.autoscaling.min_nodes / len(zones)) if spec.autoscaling else None,
            autoscaling=gcp.container.NodePoolAutoscalingArgs(
                total_min_node_count=spec.autoscaling.min_nodes,
                total_max_node_count=spec.autoscaling.max_nodes,
                # ANY lets the autoscaler take whatever capacity exists (required by flex-start;
                # best for reservations and spot); BALANCED spreads on-demand nodes over zones.
                location_policy="ANY" if flex or queued or spec.provisioning == "spot" or spec.reservation.affinity != "none" else "BALANCED",
            )
            if spec.autoscaling
            else None,
            node_config=node_config,
            network_config=gcp.container.NodePoolNetworkConfigArgs(
                accelerator_network_profile="auto" if managed_nics else None,  # Toolkit c765092 gke-node-pool/main.tf
                additional_node_network_configs=[
                    gcp.container.NodePoolNetworkConfigAdditionalNodeNetworkConfigArgs(network=extra.network, subnetwork=extra.subnetwork)
                    for extra in args.extra_networks
                ]
                or None,
            )
            if args.extra_networks or managed_nics
            else None,
            placement_policy=gcp.container.NodePoolPlacementPolicyArgs(type="COMPACT", policy_name=self.workload_policy.name if self.workload_policy else None)
            if spec.compact
            else None,
            # Flex-start and queued (DWS) VMs are not repaired in place (GKE requires auto-repair off for them); queued
            # nodes run their request's duration, not upgraded under it (Cluster Toolkit's
            # dws-flex-start-queued-provisioning example: "auto_upgrade: false # queued provisioning requirement").
            management=gcp.container.NodePoolManagementArgs(auto_repair=not (flex or queued), auto_upgrade=not queued),
            queued_provisioning=gcp.container.NodePoolQueuedProvisioningArgs(enabled=True) if queued else None,
            upgrade_settings=gcp.container.NodePoolUpgradeSettingsArgs(
                strategy="SURGE", max_surge=spec.upgrade.max_surge, max_unavailable=spec.upgrade.max_unavailable
            ),
        )
        self.node_selector = gpu_pool_selector(spec.name, machine)
        self.tolerations = gpu_tolerations(machine)
        self.register_outputs({"name": self.pool.name})


def _workload_policy(kids: Children, args: GpuNodePoolArgs) -> gcp.compute.ResourcePolicy:
    """The HIGH_THROUGHPUT workload policy of the machine's accelerator topology in the pool's
    region, which a COMPACT placement names (Cluster Toolkit 1047080 modules/compute/
    resource-policy/main.tf `workload_policy`, outputs.tf `placement_policy`; gke-node-pool
    main.tf `placement_policy { type, policy_name }`)."""
    return gcp.compute.ResourcePolicy(
        **kids("workload-policy"),
        project=args.project,
        region=args.zones[0].rsplit("-", 1)[0],
        name=args.workload_policy_name or f"{args.spec.name}-nvlink",
        workload_policy=gcp.compute.ResourcePolicyWorkloadPolicyArgs(type="HIGH_THROUGHPUT", accelerator_topology=args.machine.accelerator_topology),
    )


@dataclass(frozen=True)
class CpuNodePoolArgs(Args):
    """Arguments of CpuNodePool: the pool as a stack file writes it, and where it goes."""

    spec: CpuPoolSpec
    """The pool: a stack file's `trainstack:cpuPool`, its zones named."""
    project: str
    """The cluster's project."""
    location: str
    """The cluster's region (or zone)."""
    cluster: pulumi.Input[str]
    """The cluster's id (`projects/<p>/locations/<l>/clusters/<name>`)."""
    service_account: pulumi.Input[str]
    """Email of the account nodes run as."""
    labels: dict[str, str] = field(default_factory=dict)
    """GCP labels on the node VMs."""

    _checks = {"project": rules.PROJECT_ID, "location": rules.LOCATION, "labels": rules.gcp_labels}

    @classmethod
    def spec_required(cls) -> tuple[str, ...]:
        return ("zones",)

    @property
    def zones(self) -> list[str]:
        """Where the nodes go, in order."""
        return sorted(set(self.spec.zones or []))

    def _cross(self) -> Iterator[Problem]:
        yield from _named(self.spec.zones)  # the stack file's default (the first GPU pool's zones) is the stack's
        for zone in self.spec.zones or []:
            if message := _cluster_zone(self.location, zone):
                yield Problem(("zones",), zone, message)


class CpuNodePool(pulumi.ComponentResource):
    """A small untainted pool for controllers; pods select it by its name
    (`cloud.google.com/gke-nodepool`)."""

    pool: gcp.container.NodePool
    """The node pool resource."""

    def __init__(self, name: str, args: CpuNodePoolArgs, opts: pulumi.ResourceOptions | None = None):
        args = CpuNodePoolArgs.checked(args, type(self), name)
        super().__init__("trainstack:gcp:CpuNodePool", name, None, opts)
        zones = args.zones
        self.pool = gcp.container.NodePool(
            **Children(self, name, opts).main(),
            project=args.project,
            location=args.location,
            cluster=args.cluster,
            name=args.spec.name,
            node_locations=zones,
            node_count=args.spec.node_count // len(zones),
            node_config=gcp.container.NodePoolNodeConfigArgs(
                machine_type=args.spec.machine_type,
                image_type="COS_CONTAINERD",
                disk_size_gb=args.spec.boot_disk_gb,
                disk_type=catalog.cpu_machine(args.spec.machine_type).boot_disk_type,
                resource_labels=dict(args.labels),
                service_account=args.service_account,
                oauth_scopes=[CLOUD_PLATFORM_SCOPE],
                workload_metadata_config=gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(mode="GKE_METADATA"),
                shielded_instance_config=gcp.container.NodePoolNodeConfigShieldedInstanceConfigArgs(enable_secure_boot=True, enable_integrity_monitoring=True),
            ),
            management=gcp.container.NodePoolManagementArgs(auto_repair=True, auto_upgrade=True),
        )
        self.register_outputs({"name": self.pool.name})
