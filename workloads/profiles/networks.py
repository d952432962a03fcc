"""GKE multi-networking for GPU pods: the primary interface plus one per extra GPU NIC."""

from __future__ import annotations

import json
from collections.abc import Sequence

from trainstack import catalog

PRIMARY_INTERFACE = "eth0"


def data_interfaces(machine: catalog.Machine, networks: Sequence[str]) -> list[str]:
    """The pod interfaces (`eth1`, `eth2`, ...) of the extra networks, checked against the machine."""
    if len(networks) != machine.extra_nics:
        raise ValueError(
            f"{machine.name} has {machine.extra_nics} extra NICs but the platform named "
            f"{len(networks)} networks ({', '.join(networks) or 'none'})"
        )
    return [f"eth{i + 1}" for i in range(len(networks))]


def annotations(machine: catalog.Machine, networks: Sequence[str]) -> dict[str, str]:
    """`networking.gke.io/interfaces`: eth0 on the default network, then one interface per
    Kubernetes Network in NIC order (cloud.google.com/kubernetes-engine/docs/how-to/
    setup-multinetwork-support-for-pods)."""
    interfaces = [{"interfaceName": PRIMARY_INTERFACE, "network": "default"}]
    interfaces += [
        {"interfaceName": name, "network": network}
        for name, network in zip(data_interfaces(machine, networks), networks)
    ]
    return {
        "networking.gke.io/default-interface": PRIMARY_INTERFACE,
        "networking.gke.io/interfaces": json.dumps(interfaces, separators=(",", ":")),
    }
