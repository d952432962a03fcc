"""GKE multi-networking for the GPU NICs: a GKENetworkParamSet and a Network per extra NIC
network, named as the pods' `networking.gke.io/interfaces` annotation references them.

Shapes from cloud.google.com/kubernetes-engine/docs/how-to/gpu-bandwidth-gpudirect-tcpx and
/gpu-bandwidth-gpudirect-rdma: every GPU NIC network is a `Device` Network; its parameter set
names the VPC and subnet and the device mode: `NetDevice` for a gVNIC (the A3 High/Mega NICs
used by TCPX/TCPXO, and A3 Ultra's `gvnic-1`), `RDMA` for A3 Ultra's RDMA NICs.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from trainstack.components.args import Args, Problem, not_empty, one_of
from trainstack.components.k8s_provider import metadata
from trainstack.components.options import Children
from trainstack.core import catalog, rules

DEVICE_MODES: dict[str, str] = {"gvnic": "NetDevice", "rdma": "RDMA"}
_GROUP = catalog.GKE_NETWORKING_API.split("/")[0]


@dataclass(frozen=True)
class NicAttachment(Args):
    """One extra NIC network."""

    name: str
    """The Network (and parameter set) name pods reference (`rdma-0`, `vpc1`)."""
    kind: str
    """`gvnic` or `rdma`; decides the device mode."""
    vpc: pulumi.Input[str]
    """The GCP VPC's name behind it."""
    subnet: pulumi.Input[str]
    """The GCP subnet's name behind it."""

    _checks = {"name": rules.K8S_NAME, "kind": one_of(*DEVICE_MODES)}

    @property
    def device_mode(self) -> str:
        return DEVICE_MODES[self.kind]


@dataclass(frozen=True)
class GpuNetworksArgs(Args):
    """The extra NIC networks, in interface order (eth1, eth2, ...)."""

    attachments: list[NicAttachment]
    """One per extra NIC network."""

    _checks = {"attachments": not_empty}

    def _cross(self) -> Iterator[Problem]:
        seen: set[str] = set()
        for i, attachment in enumerate(self.attachments):
            if attachment.name in seen:
                yield Problem(("attachments", i, "name"), attachment.name, rules.duplicate("network"))
            seen.add(attachment.name)


class GpuNetworks(pulumi.ComponentResource):
    """GKENetworkParamSet + Network (networking.gke.io/v1) per extra NIC network. In Python,
    `objects` lists every parameter set and Network."""

    network_names: list[str]
    """The Network names, in interface order."""

    def __init__(self, name: str, args: GpuNetworksArgs, opts: pulumi.ResourceOptions | None = None):
        args = GpuNetworksArgs.checked(args, type(self), name)
        super().__init__("trainstack:k8s:GpuNetworks", name, None, opts)
        self.network_names = [a.name for a in args.attachments]
        self.objects: list[pulumi.Resource] = []
        kids = Children(self, name, opts)
        for attachment in args.attachments:
            params = k8s.apiextensions.CustomResource(
                **kids(f"{attachment.name}-params"),
                api_version=catalog.GKE_NETWORKING_API,
                kind="GKENetworkParamSet",
                metadata=metadata(attachment.name),
                spec={"vpc": attachment.vpc, "vpcSubnet": attachment.subnet, "deviceMode": attachment.device_mode},
            )
            network = k8s.apiextensions.CustomResource(
                **kids(attachment.name, params),
                api_version=catalog.GKE_NETWORKING_API,
                kind="Network",
                metadata=metadata(attachment.name),
                spec={
                    "type": "Device",
                    "parametersRef": {"group": _GROUP, "kind": "GKENetworkParamSet", "name": attachment.name},
                },
            )
            self.objects += [params, network]
        self.register_outputs({"networkNames": self.network_names})
