"""Node pools and the service account their nodes run as.

Pods choose a pool by the labels GKE puts on every node (the pool's name, the accelerator):
`GpuNodePool.node_selector`. GPU nodes carry `GPU_TAINT`, so only pods with
`GpuNodePool.tolerations` land there; the CPU pool, where controllers run, is untainted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import pulumi
import pulumi_gcp as gcp
from trainstack.core import catalog
from trainstack.components.k8s_provider import ACCELERATOR_LABEL, NODE_POOL_LABEL
from trainstack.components.options import Children
from trainstack.core.config import CPU_BOOT_DISK_GB, GPU_BOOT_DISK_GB


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


def gpu_tolerations() -> tuple[dict[str, str], ...]:
    """What a pod on a GPU pool tolerates."""
    return (GPU_TAINT.toleration(),)

CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform"

# What a node needs and no more: write logs and metrics, read its own metadata, pull images.
NODE_ROLES = (
    "roles/logging.logWriter",
    "roles/monitoring.metricWriter",
    "roles/monitoring.viewer",
    "roles/stackdriver.resourceMetadata.writer",
    "roles/artifactregistry.reader",
)

_DRIVER_VERSIONS = {"default": "DEFAULT", "latest": "LATEST", "daemonset": "INSTALLATION_DISABLED"}


@dataclass(frozen=True)
class NodeServiceAccountArgs:
    """Arguments of NodeServiceAccount.

    Attributes:
        project: the project of the account and its role grants.
        account_id: 6-30 characters, unique in the project.
    """

    project: str
    account_id: str


class NodeServiceAccount(pulumi.ComponentResource):
    """A least-privilege service account for nodes, granted `NODE_ROLES` on the project.

    Depend on this component (not only on `email`) so nodes start after the grants exist."""

    account: gcp.serviceaccount.Account
    email: pulumi.Output[str]

    def __init__(self, name: str, args: NodeServiceAccountArgs, opts: pulumi.ResourceOptions | None = None):
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


@dataclass(frozen=True)
class Reservation:
    """Which Compute Engine reservation a pool consumes.

    Attributes:
        affinity: `none`, `any` (any matching reservation, else on-demand) or `specific`.
        name: the reservation (`specific` only); may name a block (`<name>/reservationBlocks/<b>`).
        project: the owner project of a shared reservation, else None.
    """

    affinity: Literal["none", "any", "specific"] = "any"
    name: str | None = None
    project: str | None = None

    def args(self) -> gcp.container.NodePoolNodeConfigReservationAffinityArgs:
        if self.affinity == "none":
            return gcp.container.NodePoolNodeConfigReservationAffinityArgs(consume_reservation_type="NO_RESERVATION")
        if self.affinity == "any":
            return gcp.container.NodePoolNodeConfigReservationAffinityArgs(consume_reservation_type="ANY_RESERVATION")
        if not self.name:
            raise ValueError("a specific reservation needs its name")
        value = f"projects/{self.project}/reservations/{self.name}" if self.project else self.name
        return gcp.container.NodePoolNodeConfigReservationAffinityArgs(
            consume_reservation_type="SPECIFIC_RESERVATION",
            key="compute.googleapis.com/reservation-name",
            values=[value],
        )


@dataclass(frozen=True)
class Autoscaling:
    """Cluster-autoscaler bounds for the whole pool (not per zone)."""

    min_nodes: int
    max_nodes: int


@dataclass(frozen=True)
class GpuNodePoolArgs:
    """Arguments of GpuNodePool.

    Attributes:
        project, location: the cluster's project and region.
        cluster: the cluster's id (`projects/<p>/locations/<l>/clusters/<name>`).
        name: the pool's name.
        zones: where nodes go; one zone for compact placement.
        machine: the GPU machine record (type, accelerator, GPUs, local SSDs, NICs).
        node_count: a fixed size for the whole pool, or None with `autoscaling`.
        autoscaling: autoscaler bounds, or None for a fixed size.
        compact: a COMPACT placement policy (nodes physically close; single zone).
        reservation: the reservation the nodes consume.
        provisioning: `on-demand`, `spot`, or `flex-start` (Dynamic Workload Scheduler
            flex-start VMs, obtained by the autoscaler when pods are pending).
        gpu_driver: `default` or `latest` (GKE installs the driver), or `daemonset` (GKE
            installs none; the Kubernetes layer runs the installer DaemonSet).
        boot_disk_gb: boot disk size; the type follows the machine (catalog `boot_disk_type`).
        max_surge, max_unavailable: upgrade settings; the defaults (0, 1) upgrade one node
            at a time without asking for capacity beyond the reservation.
        service_account: email of the account nodes run as.
        extra_networks: (VPC name, subnet name) per extra NIC, in interface order.
        labels: GCP labels on the node VMs.
    """

    project: str
    location: str
    cluster: pulumi.Input[str]
    name: str
    zones: Sequence[str]
    machine: catalog.Machine
    service_account: pulumi.Input[str]
    node_count: int | None = None
    autoscaling: Autoscaling | None = None
    compact: bool = True
    reservation: Reservation = Reservation()
    provisioning: Literal["on-demand", "spot", "flex-start"] = "on-demand"
    gpu_driver: Literal["default", "latest", "daemonset"] = "latest"
    boot_disk_gb: int = GPU_BOOT_DISK_GB
    max_surge: int = 0
    max_unavailable: int = 1
    extra_networks: Sequence[tuple[pulumi.Input[str], pulumi.Input[str]]] = ()
    labels: Mapping[str, str] = field(default_factory=dict)


class GpuNodePool(pulumi.ComponentResource):
    """A GPU node pool shaped by the machine's catalog record: accelerators and driver, local
    SSDs as ephemeral storage, gVNIC, one additional node network per extra NIC, compact
    placement, the reservation and the GPU taint.

    A fixed-size pool owns `node_count`; an autoscaled pool leaves it to the autoscaler
    (changes to it are ignored, so `pulumi up` never resizes a running job's pool).

    Attributes:
        pool: the node pool resource.
        node_selector: what a pod selects to land on this pool.
        tolerations: what a pod tolerates to land on this pool (its taint).
    """

    pool: gcp.container.NodePool
    node_selector: dict[str, str]
    tolerations: tuple[dict[str, str], ...]

    def __init__(self, name: str, args: GpuNodePoolArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("trainstack:gcp:GpuNodePool", name, None, opts)
        if (args.node_count is None) == (args.autoscaling is None):
            raise ValueError("set exactly one of node_count and autoscaling")
        machine = args.machine
        zones = sorted(set(args.zones))
        if args.node_count is not None and args.node_count % len(zones):
            raise ValueError(f"node_count {args.node_count} is not a multiple of {len(zones)} zones")
        flex = args.provisioning == "flex-start"
        autoscaled = args.autoscaling is not None
        node_config = gcp.container.NodePoolNodeConfigArgs(
            machine_type=machine.name,
            image_type="COS_CONTAINERD",
            guest_accelerators=[
                gcp.container.NodePoolNodeConfigGuestAcceleratorArgs(
                    type=machine.accelerator,
                    count=machine.gpus_per_node,
                    gpu_driver_installation_config=gcp.container.NodePoolNodeConfigGuestAcceleratorGpuDriverInstallationConfigArgs(
                        gpu_driver_version=_DRIVER_VERSIONS[args.gpu_driver]
                    ),
                )
            ],
            ephemeral_storage_local_ssd_config=gcp.container.NodePoolNodeConfigEphemeralStorageLocalSsdConfigArgs(
                local_ssd_count=machine.local_ssds
            )
            if machine.local_ssds
            else None,
            disk_size_gb=args.boot_disk_gb,
            disk_type=machine.boot_disk_type,
            gvnic=gcp.container.NodePoolNodeConfigGvnicArgs(enabled=True),
            taints=[gcp.container.NodePoolNodeConfigTaintArgs(key=GPU_TAINT.key, value=GPU_TAINT.value, effect=GPU_TAINT.gke_effect)],
            resource_labels=dict(args.labels),
            reservation_affinity=args.reservation.args(),
            spot=True if args.provisioning == "spot" else None,
            flex_start=True if flex else None,
            service_account=args.service_account,
            oauth_scopes=[CLOUD_PLATFORM_SCOPE],
            workload_metadata_config=gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(mode="GKE_METADATA"),
            shielded_instance_config=gcp.container.NodePoolNodeConfigShieldedInstanceConfigArgs(
                enable_secure_boot=True, enable_integrity_monitoring=True
            ),
        )
        self.pool = gcp.container.NodePool(
            **Children(self, name, opts).main(ignore_changes=["nodeCount", "initialNodeCount"] if autoscaled else None),
            project=args.project,
            location=args.location,
            cluster=args.cluster,
            name=args.name,
            node_locations=zones,
            # node_count and initial_node_count are per zone.
            node_count=args.node_count // len(zones) if args.node_count is not None else None,
            initial_node_count=math.ceil(args.autoscaling.min_nodes / len(zones)) if args.autoscaling else None,
            autoscaling=gcp.container.NodePoolAutoscalingArgs(
                total_min_node_count=args.autoscaling.min_nodes,
                total_max_node_count=args.autoscaling.max_nodes,
                # ANY lets the autoscaler take whatever capacity exists (required by flex-start;
                # best for reservations and spot); BALANCED spreads on-demand nodes over zones.
                location_policy="ANY" if flex or args.provisioning == "spot" or args.reservation.affinity != "none" else "BALANCED",
            )
            if args.autoscaling
            else None,
            node_config=node_config,
            network_config=gcp.container.NodePoolNetworkConfigArgs(
                additional_node_network_configs=[
                    gcp.container.NodePoolNetworkConfigAdditionalNodeNetworkConfigArgs(network=network, subnetwork=subnetwork)
                    for network, subnetwork in args.extra_networks
                ]
            )
            if args.extra_networks
            else None,
            placement_policy=gcp.container.NodePoolPlacementPolicyArgs(type="COMPACT") if args.compact else None,
            # Flex-start VMs are not repaired in place (GKE requires auto-repair off for them).
            management=gcp.container.NodePoolManagementArgs(auto_repair=not flex, auto_upgrade=True),
            upgrade_settings=gcp.container.NodePoolUpgradeSettingsArgs(
                strategy="SURGE", max_surge=args.max_surge, max_unavailable=args.max_unavailable
            ),
        )
        self.node_selector = gpu_pool_selector(args.name, machine)
        self.tolerations = gpu_tolerations()
        self.register_outputs({"name": self.pool.name})


@dataclass(frozen=True)
class CpuNodePoolArgs:
    """Arguments of CpuNodePool.

    Attributes:
        project, location, cluster: as for GpuNodePoolArgs.
        name: the pool's name.
        zones: where nodes go.
        machine_type: a CPU machine type (`e2-standard-8`).
        node_count: nodes in the whole pool (a multiple of the number of zones).
        boot_disk_gb: boot disk size; the type follows the machine (catalog `boot_disk_type`).
        service_account: email of the account nodes run as.
        labels: GCP labels on the node VMs.
    """

    project: str
    location: str
    cluster: pulumi.Input[str]
    name: str
    zones: Sequence[str]
    machine_type: str
    node_count: int
    service_account: pulumi.Input[str]
    boot_disk_gb: int = CPU_BOOT_DISK_GB
    labels: Mapping[str, str] = field(default_factory=dict)


class CpuNodePool(pulumi.ComponentResource):
    """A small untainted pool for controllers; pods select it by its name
    (`cloud.google.com/gke-nodepool`)."""

    pool: gcp.container.NodePool

    def __init__(self, name: str, args: CpuNodePoolArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("trainstack:gcp:CpuNodePool", name, None, opts)
        zones = sorted(set(args.zones))
        if args.node_count % len(zones):
            raise ValueError(f"node_count {args.node_count} is not a multiple of {len(zones)} zones")
        self.pool = gcp.container.NodePool(
            **Children(self, name, opts).main(),
            project=args.project,
            location=args.location,
            cluster=args.cluster,
            name=args.name,
            node_locations=zones,
            node_count=args.node_count // len(zones),
            node_config=gcp.container.NodePoolNodeConfigArgs(
                machine_type=args.machine_type,
                image_type="COS_CONTAINERD",
                disk_size_gb=args.boot_disk_gb,
                disk_type=catalog.cpu_machine(args.machine_type).boot_disk_type,
                resource_labels=dict(args.labels),
                service_account=args.service_account,
                oauth_scopes=[CLOUD_PLATFORM_SCOPE],
                workload_metadata_config=gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(mode="GKE_METADATA"),
                shielded_instance_config=gcp.container.NodePoolNodeConfigShieldedInstanceConfigArgs(
                    enable_secure_boot=True, enable_integrity_monitoring=True
                ),
            ),
            management=gcp.container.NodePoolManagementArgs(auto_repair=True, auto_upgrade=True),
        )
        self.register_outputs({"name": self.pool.name})
