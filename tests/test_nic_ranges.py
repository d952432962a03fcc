"""No two Pod-networks of one cluster overlap: each machine family's NIC subnets are its own.

GKE, "Set up multi-network support for Pods", General limitations: "Any Pod-networks in a single
GKE cluster can't have overlapping CIDR ranges" (audits/platform.md 5.1: the second family's
subnets repeated the first's, `vpc1-subnet` and `tcpx-vpc1-subnet` both 192.168.0.0/24).
"""

from __future__ import annotations

import ipaddress
import itertools
from typing import Any

import pytest

from helpers import raw_config, render
from trainstack.app.deploy.stack_file import load
from trainstack.app.deploy.stacks import project_root
from trainstack.core import catalog
from trainstack.infra.context import StackContext
from trainstack.infra.stack import StackConfig

PLATFORM = "a3mega-capacity-platform"
SUBNET = "gcp:compute/subnetwork:Subnetwork"
PARAM_SET = "kubernetes:networking.gke.io/v1:GKENetworkParamSet"
MEGA = {"name": "mega", "machineType": "a3-megagpu-8g", "nodeCount": 2, "reservation": {"affinity": "none"}}
HIGH = {"name": "high", "machineType": "a3-highgpu-8g", "nodeCount": 2, "reservation": {"affinity": "none"}}
ULTRA = {"name": "ultra", "machineType": "a3-ultragpu-8g", "nodeCount": 2, "reservation": {"affinity": "none"}}


def pod_network_ranges(pools: list[dict[str, Any]]) -> dict[str, str]:
    """The range of every subnet a GKENetworkParamSet of the cluster names, by subnet name."""
    raw = raw_config(PLATFORM)
    raw["trainstack:gpuPools"] = pools
    raw["trainstack:kueue"].pop("localQueue", None)  # each machine's queue is its catalog default
    regs = render(PLATFORM, raw).registrations
    subnets = {r.inputs["name"]: r.inputs["ipCidrRange"] for r in regs if r.type == SUBNET}
    named = [r.inputs["spec"]["vpcSubnet"] for r in regs if r.type == PARAM_SET]
    assert named and set(named) <= set(subnets)
    return {name: subnets[name] for name in named}


@pytest.mark.parametrize("pools", [[MEGA, HIGH], [HIGH, MEGA], [ULTRA, MEGA, HIGH], [HIGH, ULTRA]], ids=["mega-high", "high-mega", "three", "high-ultra"])
def test_every_pod_network_of_a_cluster_is_disjoint_from_every_other(pools: list[dict[str, Any]]) -> None:
    ranges = pod_network_ranges(pools)
    assert len(ranges) == sum(catalog.machine(p["machineType"]).extra_nics for p in pools)
    for (a, ra), (b, rb) in itertools.combinations(ranges.items(), 2):
        assert not ipaddress.ip_network(ra).overlaps(ipaddress.ip_network(rb)), (a, ra, b, rb)


def test_the_first_family_keeps_the_ranges_it_always_had() -> None:
    """A live single-family stack's subnets do not move (a subnet's range cannot shrink or move in place)."""
    machine = catalog.machine("a3-ultragpu-8g")
    first = catalog.nic_networks(machine, "192.168.0.0/16")
    assert [n.cidr for n in first] == [f"192.168.{i}.0/24" for i in range(machine.extra_nics)]


def test_a_second_familys_ranges_do_not_depend_on_the_order_of_the_pools() -> None:
    high_second = {n: r for n, r in pod_network_ranges([MEGA, HIGH]).items() if "tcpx-" in n}
    high_first_then_ultra = pod_network_ranges([ULTRA, MEGA, HIGH])
    assert high_second and all(high_first_then_ultra[n] == r for n, r in high_second.items())


def test_a_platform_told_its_jobs_queue_reads_its_job_pool_from_that_queue() -> None:
    """A TrainingPlatform given `queue` (StackConfig.job_queue_of) readies that queue for its jobs, and
    every fact of the job's pool (machine, size, LocalQueue) is that queue's, not the default's."""
    raw = raw_config(PLATFORM)
    raw["trainstack:gpuPools"] = [MEGA, {**HIGH, "nodeCount": 3}]
    raw["trainstack:kueue"].pop("localQueue", None)
    config = load(PLATFORM, raw)
    assert isinstance(config, StackConfig)
    default, other = config.queues
    assert config.job_queue == default
    assert config.job_queue_of(other.local_queue) == other
    ctx = StackContext(PLATFORM, config.facts(other.local_queue), project_root(), queue=other.local_queue)
    assert (ctx.machine.name, ctx.gpu_nodes, ctx.local_queue) == ("a3-highgpu-8g", 3, other.local_queue)
    told_nothing = StackContext(PLATFORM, config.facts(), project_root())
    assert (told_nothing.machine.name, told_nothing.local_queue) == ("a3-megagpu-8g", default.local_queue)
