"""Node pools and the service account their nodes run as.

Pods choose a pool by the labels GKE puts on every node (the pool's name, the accelerator):
`GpuNodePool.node_selector`. GPU nodes carry `GPU_TAINT`, so only pods with
`GpuNodePool.tolerations` land there; the CPU pool, where controllers run, is untainted.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_gcp as gcp

from trainstack.components.args import Args, Each, Problem, not_empty, one_of
from trainstack.components.k8s_provider import ACCELERATOR_LABEL, NODE_POOL_LABEL
from trainstack.components.options import Children
from trainstack.core import catalog, resource_rules, rules

# A pool's boot disk, unless the stack file sets one.
GPU_BOOT_DISK_GB = 200
CPU_BOOT_DISK_GB = 100


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


@dataclass(frozen=True)
class Reservation(Args):
    """Which Compute Engine reservation a pool consumes."""

    affinity: str = "any"
    """`none`, `any` (any matching reservation, else on-demand) or `specific`."""
    name: str | None = None
    """The reservation (`specific` only); may name a block (`<name>/reservationBlocks/<b>`)."""
    project: str | None = None
    """The owner project of a shared reservation, else None."""

    # terraform-provider-google container node_config reservation_affinity.consume_reservation_type.
    _checks = {"affinity": one_of("none", "any", "specific"), "name": rules.RESERVATION_NAME, "project": rules.PROJECT_ID}

    def _cross(self) -> Iterator[Problem]:
        return resource_rules.check("reservation", self)

    def args(self) -> gcp.container.NodePoolNodeConfigReservationAffinityArgs:
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


@dataclass(frozen=True)
class Autoscaling(Args):
    """Cluster-autoscaler bounds for the whole pool (not per zone)."""

    min_nodes: int
    """The fewest nodes the autoscaler keeps (0 lets the pool empty)."""
    max_nodes: int
    """The most nodes the autoscaler makes."""

    _checks = {"min_nodes": rules.NODE_COUNT, "max_nodes": rules.AUTOSCALING_MAX}

    def _cross(self) -> Iterator[Problem]:
        return resource_rules.check("autoscaling", self)


@dataclass(frozen=True)
class ExtraNetwork(Args):
    """The VPC and subnet of one additional node NIC."""

    network: pulumi.Input[str]
    """The VPC's name."""
    subnetwork: pulumi.Input[str]
    """The subnet's name."""


# The default of GpuNodePoolArgs.reservation: a pool that names none gets its capacity's (`__post_init__`).
_UNSAID = Reservation()


@dataclass(frozen=True)
class GpuNodePoolArgs(Args):
    """Arguments of GpuNodePool."""

    project: str
    """The cluster's project."""
    location: str
    """The cluster's region (or zone)."""
    cluster: pulumi.Input[str]
    """The cluster's id (`projects/<p>/locations/<l>/clusters/<name>`)."""
    name: str
    """The pool's name."""
    zones: list[str]
    """Where nodes go; one zone for compact placement."""
    machine_type: str
    """The GPU machine type (`a3-megagpu-8g`): its catalog record gives the accelerator, GPUs,
    local SSDs and NICs."""
    service_account: pulumi.Input[str]
    """Email of the account nodes run as."""
    node_count: int | None = None
    """A fixed size for the whole pool, or None with `autoscaling`."""
    autoscaling: Autoscaling | None = None
    """Autoscaler bounds, or None for a fixed size."""
    compact: bool = True
    """A COMPACT placement policy (nodes physically close; single zone)."""
    reservation: Reservation = field(default_factory=lambda: _UNSAID)
    """The reservation the nodes consume; default: affinity none for spot, flex-start and queued
    capacity (it can consume none), else any (resource_rules.default_affinity)."""
    provisioning: str = "on-demand"
    """`on-demand`, `spot`, `flex-start` (Dynamic Workload Scheduler flex-start VMs, obtained
    by the autoscaler when pods are pending) or `queued` (DWS queued provisioning: nodes only
    through a ProvisioningRequest, all at once; Kueue's provisioning admission check makes it)."""
    max_run_duration: str | None = None
    """How long flex-start or queued VMs run before GKE reclaims them (a duration, at most 7
    days); None: GKE's default (7 days)."""
    gpu_driver: str = "latest"
    """`default` or `latest` (GKE installs the driver), or `daemonset` (GKE installs none; the
    Kubernetes layer runs the installer DaemonSet)."""
    boot_disk_gb: int = GPU_BOOT_DISK_GB
    """Boot disk size; the type follows the machine (catalog `boot_disk_type`)."""
    max_surge: int = 0
    """Upgrade surge nodes; 0 upgrades without asking for capacity beyond the reservation."""
    max_unavailable: int = 1
    """Nodes an upgrade may take down at once (1: one node at a time)."""
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
    networking: str | None = None
    """How pods reach the RDMA NICs: `multi-network` (GKE multi-networking Network objects) or
    `dranet` (GKE's DRANET: the nodes are labelled for its driver and, where GKE makes the NIC
    networks, accelerator network profile `auto`, the pool names no extra networks); None: the
    machine's own way (catalog `dranet`: DRANET where it is the only one)."""

    _checks = {
        "project": rules.PROJECT_ID,
        "location": rules.LOCATION,
        "name": rules.NODE_POOL_NAME,
        "zones": (not_empty, Each(rules.ZONE_ID)),
        "machine_type": rules.gpu_machine,
        "workload_policy_name": rules.GCP_NAME,
        "preload_disk_image": rules.DISK_IMAGE,
        "node_count": rules.NODE_COUNT,
        # GKE NodeConfig.Provisioning, node_config.spot/flex_start.
        "provisioning": one_of("on-demand", "spot", "flex-start", "queued"),
        "max_run_duration": rules.DURATION,
        # GKE GPUDriverInstallationConfig.gpu_driver_version (DEFAULT, LATEST, INSTALLATION_DISABLED).
        "gpu_driver": one_of("default", "latest", "daemonset"),
        "boot_disk_gb": rules.GPU_BOOT_DISK_GB,
        "max_surge": rules.UPGRADE_NODES,
        "max_unavailable": rules.UPGRADE_NODES,
        "labels": rules.gcp_labels,
        "networking": one_of(*rules.NETWORKING),
    }

    def __post_init__(self) -> None:
        if self.reservation is _UNSAID:  # none named: the capacity's own, as a stack file's pool gets
            object.__setattr__(self, "reservation", Reservation(resource_rules.default_affinity(self.provisioning)))

    @property
    def machine(self) -> catalog.Machine:
        """The machine's catalog record."""
        return catalog.machine(self.machine_type)

    @property
    def dranet(self) -> bool:
        """Whether the pool is on DRANET (rules.uses_dranet)."""
        return rules.uses_dranet(self.machine, self.networking)

    def _cross(self) -> Iterator[Problem]:
        yield from resource_rules.check("gpu_pool", self)
        if self.dranet and self.machine.dranet and self.machine.dranet.managed_networks and self.extra_networks:
            # Toolkit c765092 gke-node-pool check `dranet_additional_networks_conflict`
            yield Problem(("extra_networks",), len(self.extra_networks), "GKE makes the NIC networks of a DRANET pool of this machine; name none")
        for zone in self.zones:  # the stack checks its pools' zones against gcp:region (StackConfig)
            if isinstance(zone, str) and (message := _cluster_zone(self.location, zone) or rules.machine_zone(self.machine_type, zone)):
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
        super().__init__("trainstack:gcp:GpuNodePool", name, None, opts)
        machine = args.machine
        zones = sorted(set(args.zones))
        flex = args.provisioning == "flex-start"
        queued = args.provisioning == "queued"
        autoscaled = args.autoscaling is not None
        managed_nics = args.dranet and machine.dranet is not None and machine.dranet.managed_networks
        node_labels = {**dict(machine.node_labels), **({catalog.DRANET_NODE_LABEL: "true"} if args.dranet else {})}
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
            ephemeral_storage_local_ssd_config=gcp.container.NodePoolNodeConfigEphemeralStorageLocalSsdConfigArgs(local_ssd_count=machine.local_ssds)
            if machine.local_ssds
            else None,
            gcfs_config=gcp.container.NodePoolNodeConfigGcfsConfigArgs(enabled=True) if args.image_streaming else None,
            secondary_boot_disks=[gcp.container.NodePoolNodeConfigSecondaryBootDiskArgs(disk_image=args.preload_disk_image, mode="CONTAINER_IMAGE_CACHE")]
            if args.preload_disk_image
            else None,
            disk_size_gb=args.boot_disk_gb,
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
            reservation_affinity=args.reservation.args(),
            spot=True if args.provisioning == "spot" else None,
            # GKE's queued-provisioning pools take flex-start VMs too (GKE docs, provisioningrequest:
            # "add the --flex-start and --enable-queued-provisioning flags").
            flex_start=True if flex or queued else None,
            max_run_duration=args.max_run_duration and f"{int(rules.duration_seconds(args.max_run_duration))}s",
            service_account=args.service_account,
            oauth_scopes=[CLOUD_PLATFORM_SCOPE],
            workload_metadata_config=gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(mode="GKE_METADATA"),
            shielded_instance_config=gcp.container.NodePoolNodeConfigShieldedInstanceConfigArgs(enable_secure_boot=True, enable_integrity_monitoring=True),
        )
        kids = Children(self, name, opts)
        self.workload_policy = _workload_policy(kids, args) if args.compact and machine.accelerator_topology else None
        self.pool = gcp.container.NodePool(
            **kids.main(ignore_changes=["nodeCount", "initialNodeCount"] if autoscaled else None),
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
                location_policy="ANY" if flex or queued or args.provisioning == "spot" or args.reservation.affinity != "none" else "BALANCED",
            )
            if args.autoscaling
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
            if args.compact
            else None,
            # Flex-start and queued (DWS) VMs are not repaired in place (GKE requires auto-repair off for them); queued
            # nodes run their request's duration, not upgraded under it (Cluster Toolkit's
            # dws-flex-start-queued-provisioning example: "auto_upgrade: false # queued provisioning requirement").
            management=gcp.container.NodePoolManagementArgs(auto_repair=not (flex or queued), auto_upgrade=not queued),
            queued_provisioning=gcp.container.NodePoolQueuedProvisioningArgs(enabled=True) if queued else None,
            upgrade_settings=gcp.container.NodePoolUpgradeSettingsArgs(strategy="SURGE", max_surge=args.max_surge, max_unavailable=args.max_unavailable),
        )
        self.node_selector = gpu_pool_selector(args.name, machine)
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
        name=args.workload_policy_name or f"{args.name}-nvlink",
        workload_policy=gcp.compute.ResourcePolicyWorkloadPolicyArgs(type="HIGH_THROUGHPUT", accelerator_topology=args.machine.accelerator_topology),
    )


@dataclass(frozen=True)
class CpuNodePoolArgs(Args):
    """Arguments of CpuNodePool."""

    project: str
    """The cluster's project."""
    location: str
    """The cluster's region (or zone)."""
    cluster: pulumi.Input[str]
    """The cluster's id (`projects/<p>/locations/<l>/clusters/<name>`)."""
    name: str
    """The pool's name."""
    zones: list[str]
    """Where nodes go."""
    machine_type: str
    """A CPU machine type (`e2-standard-8`)."""
    node_count: int
    """Nodes in the whole pool (a multiple of the number of zones)."""
    service_account: pulumi.Input[str]
    """Email of the account nodes run as."""
    boot_disk_gb: int = CPU_BOOT_DISK_GB
    """Boot disk size; the type follows the machine (catalog `boot_disk_type`)."""
    labels: dict[str, str] = field(default_factory=dict)
    """GCP labels on the node VMs."""

    _checks = {
        "project": rules.PROJECT_ID,
        "location": rules.LOCATION,
        "name": rules.NODE_POOL_NAME,
        "zones": (not_empty, Each(rules.ZONE_ID)),
        "machine_type": rules.cpu_machine,
        "node_count": rules.CPU_NODE_COUNT,
        "boot_disk_gb": rules.CPU_BOOT_DISK_GB,
        "labels": rules.gcp_labels,
    }

    def _cross(self) -> Iterator[Problem]:
        yield from resource_rules.check("cpu_pool", self)
        for zone in self.zones:
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
        zones = sorted(set(args.zones))
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
                shielded_instance_config=gcp.container.NodePoolNodeConfigShieldedInstanceConfigArgs(enable_secure_boot=True, enable_integrity_monitoring=True),
            ),
            management=gcp.container.NodePoolManagementArgs(auto_repair=True, auto_upgrade=True),
        )
        self.register_outputs({"name": self.pool.name})
