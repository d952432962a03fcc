"""Estimated cost per hour of a plan, from the catalog's list prices (an estimate, not a quote).

Works on plan resources (the dicts of plan.json), so the same figures come out of a fresh
render and of a plan file written at another git ref.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from trainstack.core import catalog

NODE_POOL = "gcp:container/nodePool:NodePool"


@dataclass(frozen=True)
class PoolSize:
    """A node pool's size: nodes at minimum and at maximum (equal for a fixed pool), priced for
    its capacity (`hourly_usd`: spot at the catalog's spot price, the rest at on-demand list)."""

    name: str
    machine_type: str
    min_nodes: int
    max_nodes: int
    gpus_per_node: int
    hourly_usd: float | None
    capacity: str = "on-demand"
    price_source: str = catalog.PRICES_SOURCE
    upper_bound: bool = False
    """Priced at on-demand though it costs less: DWS (discounted by up to
    catalog.DWS_MAX_DISCOUNT), or spot on a machine the catalog has no spot price for."""

    @property
    def dws_floor_usd(self) -> float | None:
        """A DWS pool's node-hour at the largest discount Google states; else None."""
        return round(self.hourly_usd * (1 - catalog.DWS_MAX_DISCOUNT), 4) if self.capacity in ("flex-start", "queued") and self.hourly_usd is not None else None


@dataclass(frozen=True)
class CostEstimate:
    """Hourly list-price estimate: `max_usd` at full size, `min_usd` at the autoscaler's floor."""

    pools: list[PoolSize]
    lines: dict[str, float] = field(default_factory=dict)

    @property
    def gpu_nodes(self) -> int:
        return sum(p.max_nodes for p in self.pools if p.gpus_per_node)

    @property
    def gpus(self) -> int:
        return sum(p.max_nodes * p.gpus_per_node for p in self.pools)

    @property
    def cpu_nodes(self) -> int:
        return sum(p.max_nodes for p in self.pools if not p.gpus_per_node)

    @property
    def fixed_usd(self) -> float:
        return sum(self.lines.values())

    @property
    def not_priced(self) -> list[PoolSize]:
        """Pools of a machine the catalog has no list price for: left out of the sums."""
        return [p for p in self.pools if p.hourly_usd is None]

    @property
    def max_usd(self) -> float:
        return round(self.fixed_usd + sum(p.max_nodes * p.hourly_usd for p in self.pools if p.hourly_usd is not None), 2)

    @property
    def min_usd(self) -> float:
        return round(self.fixed_usd + sum(p.min_nodes * p.hourly_usd for p in self.pools if p.hourly_usd is not None), 2)

    def to_dict(self) -> dict[str, Any]:
        return {
            "estimate": True,
            "pricesAsOf": catalog.PRICES_AS_OF,
            "pricesSource": catalog.PRICES_SOURCE,
            "gpuNodes": self.gpu_nodes,
            "gpus": self.gpus,
            "cpuNodes": self.cpu_nodes,
            "usdPerHourAtMax": self.max_usd,
            "usdPerHourAtMin": self.min_usd,
            "pools": {
                p.name: {
                    "machineType": p.machine_type,
                    "minNodes": p.min_nodes,
                    "maxNodes": p.max_nodes,
                    "usdPerNodeHour": p.hourly_usd,
                    "capacity": p.capacity,
                    **({"priceIsUpperBound": True} if p.upper_bound else {}),
                    **({"usdPerNodeHourAtMostDiscount": p.dws_floor_usd} if p.dws_floor_usd is not None else {}),
                    **({"priceSource": p.price_source} if p.price_source != catalog.PRICES_SOURCE else {}),
                }
                for p in self.pools
            },
            "other": {k: round(v, 4) for k, v in sorted(self.lines.items())},
            **({"notPriced": [p.name for p in self.not_priced]} if self.not_priced else {}),
        }


def gpu_node_hour(machine: catalog.Machine, capacity: str) -> tuple[float | None, str, bool]:
    """A GPU node-hour of `capacity` (`spot`, `flex-start`, `queued`, `reservation`,
    `on-demand`): its price, the price's source, and whether it is an upper bound (DWS at the
    on-demand list price, spot without a spot price)."""
    if capacity == "spot" and machine.spot_hourly_usd is not None:
        return machine.spot_hourly_usd, machine.spot_price_source, False
    return machine.hourly_usd, machine.price_source, capacity in ("spot", "flex-start", "queued")


def _pool(resource: dict[str, Any]) -> PoolSize | None:
    inputs = resource["inputs"]
    machine_type = (inputs.get("nodeConfig") or {}).get("machineType", "")
    capacity = _capacity(inputs)
    source = catalog.PRICES_SOURCE
    upper_bound = capacity in ("spot", "flex-start", "queued")
    if machine_type in catalog.MACHINES:
        m = catalog.MACHINES[machine_type]
        gpus = m.gpus_per_node
        hourly, source, upper_bound = gpu_node_hour(m, capacity)
    elif machine_type in catalog.CPU_MACHINES:
        hourly, gpus = catalog.CPU_MACHINES[machine_type].hourly_usd, 0
    else:
        return None
    zones = max(1, len(inputs.get("nodeLocations") or []))
    scaling = inputs.get("autoscaling")
    if scaling:
        if "totalMaxNodeCount" in scaling:
            low, high = scaling.get("totalMinNodeCount", 0), scaling["totalMaxNodeCount"]
        else:
            low, high = scaling.get("minNodeCount", 0) * zones, scaling.get("maxNodeCount", 0) * zones
    else:
        low = high = int(inputs.get("nodeCount", inputs.get("initialNodeCount", 0))) * zones
    return PoolSize(inputs.get("name") or resource["name"], machine_type, int(low), int(high), gpus, hourly, capacity, source, upper_bound)


def _capacity(inputs: dict[str, Any]) -> str:
    """How the pool gets its VMs: `queued`, `flex-start`, `spot`, `reservation`, or `on-demand`."""
    config = inputs.get("nodeConfig") or {}
    if (inputs.get("queuedProvisioning") or {}).get("enabled"):
        return "queued"
    if config.get("flexStart"):
        return "flex-start"
    if config.get("spot"):
        return "spot"
    affinity = (config.get("reservationAffinity") or {}).get("consumeReservationType")
    return "reservation" if affinity in ("SPECIFIC_RESERVATION", "ANY_RESERVATION") else "on-demand"


def _storage_line(resource: dict[str, Any]) -> tuple[str, float] | None:
    inputs = resource["inputs"]
    per_hour = 1 / catalog.HOURS_PER_MONTH
    if resource["type"] == "gcp:filestore/instance:Instance":
        tier = inputs.get("tier", "")
        shares = inputs.get("fileShares") or {}
        gib = sum(s.get("capacityGb", 0) for s in (shares if isinstance(shares, list) else [shares]))
        price = catalog.STORAGE_GIB_MONTH_USD.get(f"filestore-{tier}")
        return (f"filestore {resource['name']}", gib * price * per_hour) if price else None
    if resource["type"] == "gcp:compute/disk:Disk":
        price = catalog.STORAGE_GIB_MONTH_USD.get(inputs.get("type", ""))
        return (f"disk {resource['name']}", inputs.get("size", 0) * price * per_hour) if price else None
    if resource["type"] == "gcp:container/cluster:Cluster":
        return (f"cluster {resource['name']}", catalog.GKE_CLUSTER_HOURLY_USD)
    return None


def estimate(resources: list[dict[str, Any]]) -> CostEstimate:
    """The hourly estimate of the node pools, storage and clusters among `resources`."""
    pools = sorted((p for r in resources if r["type"] == NODE_POOL and (p := _pool(r))), key=lambda p: p.name)
    lines = dict(line for r in resources if (line := _storage_line(r)))
    return CostEstimate(pools, lines)
