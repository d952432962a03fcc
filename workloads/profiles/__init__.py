"""GPUDirect profiles: one module per stack, each a pure function of the machine record and
the extra networks, returning the pod pieces it adds. The machine's catalog record picks the
profile; no recipe names one."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from trainstack.core import catalog
from trainstack.core.catalog import NicNetwork
from trainstack.workloads.pod import PodParts
from trainstack.workloads.profiles import none, rdma, tcpx, tcpxo

Profile = Callable[[catalog.Machine, Sequence[NicNetwork]], PodParts]

PROFILES: dict[catalog.GpuDirect, Profile] = {
    catalog.GpuDirect.TCPX: tcpx.parts,
    catalog.GpuDirect.TCPXO: tcpxo.parts,
    catalog.GpuDirect.RDMA: rdma.parts,
    catalog.GpuDirect.NONE: none.parts,
}


def for_machine(machine: catalog.Machine, nics: Sequence[NicNetwork], host_monitor: bool = False, dranet: bool = False) -> PodParts:
    """The pod pieces of `machine`'s GPUDirect stack, given its extra NICs in interface order;
    `host_monitor`: the job registers with the node's resiliency host monitor at localhost, so an
    RDMA pod runs on the node's network (see `rdma`); `dranet`: the pod claims its RDMA NICs
    through GKE's DRANET instead of joining their networks."""
    if machine.gpudirect == catalog.GpuDirect.RDMA:
        return rdma.parts(machine, nics, host_network=host_monitor, dranet=dranet and not host_monitor)
    return PROFILES[machine.gpudirect](machine, nics)
