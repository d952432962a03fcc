"""GKE multi-networking for GPU pods: the primary interface plus one per extra GPU NIC."""

import json
from collections.abc import Sequence

from trainstack.core import catalog
from trainstack.core.catalog import NicNetwork

PRIMARY_INTERFACE = "eth0"


def data_interfaces(machine: catalog.Machine, nics: Sequence[NicNetwork]) -> list[str]:
    """The pod interfaces of the extra networks (`NicNetwork.interface`), checked against the machine."""
    if len(nics) != machine.extra_nics:
        raise ValueError(
            f"{machine.name} has {machine.extra_nics} extra NICs but the platform named {len(nics)} networks ({', '.join(n.name for n in nics) or 'none'})"
        )
    return [nic.interface for nic in nics]


def annotations(machine: catalog.Machine, nics: Sequence[NicNetwork]) -> dict[str, str]:
    """`networking.gke.io/interfaces`: eth0 on the default network, then one interface per
    Kubernetes Network in NIC order (cloud.google.com/kubernetes-engine/docs/how-to/
    setup-multinetwork-support-for-pods)."""
    data_interfaces(machine, nics)
    interfaces = [{"interfaceName": PRIMARY_INTERFACE, "network": "default"}]
    interfaces += [{"interfaceName": nic.interface, "network": nic.name} for nic in nics]
    return {
        "networking.gke.io/default-interface": PRIMARY_INTERFACE,
        "networking.gke.io/interfaces": json.dumps(interfaces, separators=(",", ":")),
    }
