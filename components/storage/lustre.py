"""Storage kind `lustre`: a Managed Lustre instance on the cluster's VPC with its private services
access (`LustreInstance`), mounted through GKE's Managed Lustre CSI driver (`LustreVolume`); its
section of `trainstack:storage` (`LustreSpec`, key `lustre`) and its registry entry (`KIND`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

import pulumi
import pulumi_gcp as gcp
from pulumi_kubernetes.core import v1 as core
from pydantic import model_validator

from trainstack.components import gcp_services as apis
from trainstack.components.args import Args, Problem
from trainstack.components.options import Children
from trainstack.components.storage.kind import Mounting, StorageKind, StorageSite, Store
from trainstack.components.storage.volume import ClaimedVolume, ClaimedVolumeArgs, retained
from trainstack.core import catalog, rules
from trainstack.core.spec import Section, bounded, by_rule, rule_errors

API = "lustre.googleapis.com"


class LustreSpec(Section):
    """A Managed Lustre instance in the first GPU pool's zone, on the cluster's VPC."""

    capacity_gib: Annotated[int, bounded(rules.POSITIVE)] = 9000
    """The instance's size in GiB; it cannot shrink."""
    throughput: Annotated[int, by_rule(rules.lustre_throughput)] = 1000
    """Per-unit storage throughput, MB/s per TiB: the instance's tier, fixed at creation."""
    filesystem: Annotated[str, by_rule(rules.LUSTRE_FILESYSTEM)] = "lustrefs"
    """The Lustre file system's name."""

    @model_validator(mode="after")
    def _rules(self) -> LustreSpec:
        # A capacity the Managed Lustre throughput tier takes.
        if wrong := rules.lustre_capacity(self.throughput, self.capacity_gib):
            rule_errors("LustreSpec", [Problem(("capacityGib",), self.capacity_gib, wrong)])
        return self


@dataclass(frozen=True)
class LustreInstanceArgs(Args):
    """Arguments of LustreInstance: the instance as a stack file's `trainstack:storage.lustre` writes
    it, and where it goes."""

    spec: LustreSpec
    """The file system's size (core/catalog/storage.py LUSTRE_TIERS: minimum and step by
    throughput), its per-unit throughput (MB/s per TiB, fixed at creation) and its name."""
    project: str
    """The instance's project (the VPC's)."""
    zone: str
    """The instance's zone: the GPU nodes' (Managed Lustre is zonal)."""
    instance_id: str
    """The instance's ID; also starts its address range's and firewall rule's names."""
    network: pulumi.Input[str]
    """The cluster's VPC, by name: the instance is reached over private services access on it."""
    disposable: bool = False
    """`pulumi destroy` deletes the instance, its files and its address range; otherwise destroy
    leaves them in the project (`retained`)."""
    labels: dict[str, str] = field(default_factory=dict)
    """GCP labels."""

    _checks = {
        "project": rules.PROJECT_ID,
        "zone": rules.ZONE_ID,
        "instance_id": rules.GCP_NAME,
        "labels": rules.gcp_labels,
    }


class LustreInstance(pulumi.ComponentResource):
    """A Managed Lustre instance on the cluster's VPC, with the private services access it is
    reached through (a VPC_PEERING range and the Service Networking connection) and a firewall
    rule admitting LNet from that range. Mount it with LustreVolume."""

    instance: gcp.lustre.Instance
    """The Managed Lustre instance."""
    ip: pulumi.Output[str]
    """The instance's LNet address (from its mount point `<ip>@tcp:/<filesystem>`)."""
    volume_handle: pulumi.Output[str]
    """`<project>/<zone>/<instance>`, the CSI driver's static volume handle."""

    def __init__(self, name: str, args: LustreInstanceArgs, opts: pulumi.ResourceOptions | None = None):
        args = LustreInstanceArgs.checked(args, type(self), name)
        super().__init__("trainstack:gcp:LustreInstance", name, None, opts)
        kids = Children(self, name, opts)
        keep = retained(args.disposable)
        network = pulumi.Output.concat("projects/", args.project, "/global/networks/", args.network)
        peering_range = gcp.compute.GlobalAddress(
            **kids("psa-range", **keep),
            project=args.project,
            name=f"{args.instance_id}-psa",
            purpose="VPC_PEERING",
            address_type="INTERNAL",
            prefix_length=catalog.LUSTRE_PSA_PREFIX,
            network=network,
            # Labels update in place (setLabels): terraform-provider-google@e03b762
            # google/services/compute/resource_compute_global_address.go:188,426.
            labels=dict(args.labels),
        )
        peering = gcp.servicenetworking.Connection(
            **kids("psa", **keep),
            network=network,
            service="servicenetworking.googleapis.com",
            reserved_peering_ranges=[peering_range.name],
        )
        gcp.compute.Firewall(
            **kids("lnet"),
            project=args.project,
            name=f"{args.instance_id}-lnet",
            network=args.network,
            direction="INGRESS",
            source_ranges=[pulumi.Output.concat(peering_range.address, f"/{catalog.LUSTRE_PSA_PREFIX}")],
            allows=[gcp.compute.FirewallAllowArgs(protocol="tcp", ports=[str(catalog.LUSTRE_LNET_PORT)])],
            description="Managed Lustre's LNet traffic from its private services access range",
        )
        self.instance = gcp.lustre.Instance(
            **kids.main(peering, **keep),
            project=args.project,
            location=args.zone,
            instance_id=args.instance_id,
            network=network,
            filesystem=args.spec.filesystem,
            capacity_gib=str(args.spec.capacity_gib),  # the provider types it as a string
            per_unit_storage_throughput=str(args.spec.throughput),
            labels=dict(args.labels),
        )
        self.ip = self.instance.mount_point.apply(lambda point: point.split("@", 1)[0] if point else "")
        self.volume_handle = pulumi.Output.concat(args.project, "/", args.zone, "/", args.instance_id)
        self.register_outputs({"ip": self.ip, "volumeHandle": self.volume_handle})


@dataclass(frozen=True)
class LustreVolumeArgs(ClaimedVolumeArgs):
    """A Managed Lustre instance as a ReadWriteMany volume (a static PersistentVolume of GKE's
    Managed Lustre CSI driver, which the cluster enables: GkeClusterArgs.lustre_csi)."""

    volume_handle: pulumi.Input[str]
    """`<project>/<zone>/<instance>` (LustreInstance.volume_handle)."""
    ip: pulumi.Input[str]
    """The instance's LNet address (LustreInstance.ip), an Output so the volume waits for it."""
    filesystem: str
    """The Lustre file system name."""
    capacity_gib: int
    """The instance's size."""

    _checks = {**ClaimedVolumeArgs._checks, "filesystem": rules.LUSTRE_FILESYSTEM, "capacity_gib": rules.POSITIVE}


class LustreVolume(ClaimedVolume):
    """A ReadWriteMany Managed Lustre volume and its claim."""

    def __init__(self, name: str, args: LustreVolumeArgs, opts: pulumi.ResourceOptions | None = None):
        args = LustreVolumeArgs.checked(args, type(self), name)
        super().__init__("trainstack:k8s:LustreVolume", name, None, opts)
        csi = core.CSIPersistentVolumeSourceArgs(
            driver=catalog.LUSTRE_CSI_DRIVER,
            volume_handle=args.volume_handle,
            volume_attributes={"ip": args.ip, "filesystem": args.filesystem},
        )
        self._bind(name, args, opts, f"{args.capacity_gib}Gi", {"csi": csi})


def _make(spec: LustreSpec, site: StorageSite, name: str, opts: pulumi.ResourceOptions) -> LustreInstance:
    """A Managed Lustre instance in the GPU zone, on the stack's VPC."""
    args = LustreInstanceArgs(
        spec=spec,
        project=site.project,
        zone=site.zone,
        instance_id=site.physical_name("lustre"),
        network=site.network,
        disposable=site.disposable,
        labels=site.labels,
    )
    return LustreInstance(name, args, opts)


def _mount(store: Store[LustreSpec, LustreInstance], to: Mounting) -> LustreVolume:
    lustre, spec = store.part, store.spec
    args = LustreVolumeArgs(
        volume_handle=lustre.volume_handle,
        ip=lustre.ip,
        filesystem=spec.filesystem,
        capacity_gib=spec.capacity_gib,
        **to.claimed,
    )
    return LustreVolume(to.name("storage"), args, opts=to.opts("storage"))


KIND = StorageKind(
    name="lustre",
    block="lustre",
    spec=LustreSpec,
    role="lustre",
    needs=(API, apis.SERVICE_NETWORKING, apis.COMPUTE),
    make=_make,
    output=lambda lustre: ("lustreMountPoint", lustre.instance.mount_point),
    mount=_mount,
    peered=True,
    cluster={"lustre_csi": True},
    kept={
        "gcp:lustre/instance:Instance": "the Lustre instance",
        "gcp:compute/globalAddress:GlobalAddress": "the Lustre address range",
        "gcp:servicenetworking/connection:Connection": "the Lustre peering",
    },
)
"""A Managed Lustre instance, mounted through GKE's Lustre CSI driver."""
