"""Storage kind `filestore`: a Filestore instance exporting one NFS share on the cluster's VPC
(`FilestoreShare`), mounted as an NFS volume (`NfsVolume`); its section of `trainstack:storage`
(`FilestoreSpec`, key `filestore`) and its registry entry (`KIND`)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Annotated, Literal

import pulumi
import pulumi_gcp as gcp
from pydantic import model_validator

from trainstack.components.args import Args, Problem
from trainstack.components.options import Children
from trainstack.components.storage.kind import Mounting, StorageKind, StorageSite, Store
from trainstack.components.storage.nfs import NfsVolume, NfsVolumeArgs
from trainstack.components.storage.volume import retained
from trainstack.core import rules
from trainstack.core.spec import Section, bounded, by_rule, rule_errors

API = "file.googleapis.com"


class FilestoreSpec(Section):
    """A Filestore instance (storage kind filestore)."""

    tier: Literal["BASIC_HDD", "BASIC_SSD", "ZONAL", "REGIONAL", "ENTERPRISE"] = "ZONAL"
    """The Filestore service tier."""
    capacity_gib: Annotated[int, bounded(rules.POSITIVE)] = 1024
    """The share's size in GiB."""
    share_name: Annotated[str, by_rule(rules.SHARE_NAME)] = "share1"
    """The file share's name."""

    @model_validator(mode="after")
    def _rules(self) -> FilestoreSpec:
        # A capacity the Filestore tier takes.
        if wrong := rules.filestore_capacity(self.tier, self.capacity_gib):
            rule_errors("FilestoreSpec", [Problem(("capacityGib",), self.capacity_gib, wrong)])
        return self


@dataclass(frozen=True)
class FilestoreShareArgs(Args):
    """Arguments of FilestoreShare: the instance as a stack file's `trainstack:storage.filestore`
    writes it, and where it goes."""

    spec: FilestoreSpec
    """The instance's tier, its share's size and the share's name (the NFS export `/<shareName>`)."""
    project: str
    """The instance's project."""
    name: str
    """The instance name."""
    location: str
    """A zone for BASIC_HDD, BASIC_SSD and ZONAL; a region for REGIONAL and ENTERPRISE."""
    network: pulumi.Input[str]
    """The VPC the instance peers with (the cluster's)."""
    disposable: bool = False
    """`pulumi destroy` deletes the instance and its files; otherwise destroy leaves it in the
    project (`retained`)."""
    labels: dict[str, str] = field(default_factory=dict)
    """GCP labels."""

    _checks = {
        "project": rules.PROJECT_ID,
        "name": rules.GCP_NAME,
        "location": rules.LOCATION,
        "labels": rules.gcp_labels,
    }

    def _cross(self) -> Iterator[Problem]:
        # The stack's Filestore takes the location of its zone or region (infra/).
        if not rules.LOCATION(self.location) and (message := rules.filestore_location(self.spec.tier, self.location)):
            yield Problem(("location",), self.location, message)


class FilestoreShare(pulumi.ComponentResource):
    """A Filestore instance exporting one NFS share on the cluster's VPC."""

    instance: gcp.filestore.Instance
    """The Filestore instance."""
    ip: pulumi.Output[str]
    """The instance's address; mount `<ip>:/<share_name>`."""
    share_name: str
    """The export name."""

    def __init__(self, name: str, args: FilestoreShareArgs, opts: pulumi.ResourceOptions | None = None):
        args = FilestoreShareArgs.checked(args, type(self), name)
        super().__init__("trainstack:gcp:FilestoreShare", name, None, opts)
        kids = Children(self, name, opts)
        self.instance = gcp.filestore.Instance(
            project=args.project,
            name=args.name,
            location=args.location,
            tier=args.spec.tier,
            file_shares=gcp.filestore.InstanceFileSharesArgs(name=args.spec.share_name, capacity_gb=args.spec.capacity_gib),
            networks=[gcp.filestore.InstanceNetworkArgs(network=args.network, modes=["MODE_IPV4"], connect_mode="DIRECT_PEERING")],
            labels=dict(args.labels),
            **kids.main(**retained(args.disposable)),
        )
        self.ip = self.instance.networks.apply(lambda nets: nets[0].ip_addresses[0])
        self.share_name = args.spec.share_name
        self.register_outputs({"ip": self.ip, "share": self.share_name})


def _make(spec: FilestoreSpec, site: StorageSite, name: str, opts: pulumi.ResourceOptions) -> FilestoreShare:
    """A Filestore instance on the stack's VPC: in the GPU zone for a zonal tier, else regional."""
    args = FilestoreShareArgs(
        spec=spec,
        project=site.project,
        name=site.physical_name("filestore"),
        location=site.zone if spec.tier in rules.ZONAL_FILESTORE_TIERS else site.region,
        network=site.network,
        disposable=site.disposable,
        labels=site.labels,
    )
    return FilestoreShare(name, args, opts)


def _address(share: FilestoreShare) -> tuple[str, pulumi.Output[str]]:
    """The share's export as clients mount it (`<ip>:/<share>`)."""
    return "filestoreAddress", share.ip.apply(lambda ip: f"{ip}:/{share.share_name}")


def _mount(store: Store[FilestoreSpec, FilestoreShare], to: Mounting) -> NfsVolume:
    share = store.part
    args = NfsVolumeArgs(
        server=share.ip,
        path=f"/{share.share_name}",
        capacity=f"{store.spec.capacity_gib}Gi",
        **to.claimed,
    )
    return NfsVolume(to.name("storage"), args, opts=to.opts("storage"))


KIND = StorageKind(
    name="filestore",
    block="filestore",
    spec=FilestoreSpec,
    role="filestore",
    needs=(API,),
    make=_make,
    output=_address,
    mount=_mount,
    peered=True,
    cluster={"filestore_csi": True},
    kept={"gcp:filestore/instance:Instance": "the Filestore instance"},
)
"""A Filestore share, mounted over NFS."""
