"""Many GPU pools per cluster, every capacity mode, and Kueue falling back between them.

Sources of the rules (cited beside each in core/rules.py and components/):
- GKE "Run a large-scale workload with flex-start with queued provisioning"
  (cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest): `--enable-queued-provisioning
  --enable-autoscaling --num-nodes=0 --location-policy=ANY --reservation-affinity=none --no-enable-autorepair`.
- Cluster Toolkit 1047080 modules/compute/gke-node-pool/main.tf preconditions (queued: total min 0,
  NO_RESERVATION, no COMPACT for GPUs, not spot; flex-start: auto-repair off, NO_RESERVATION).
- terraform-provider-google e03b762 resource_container_node_pool.go (`queued_provisioning`,
  ForceNew) and node_config.go (`flex_start`, `max_run_duration`, reservation key
  `compute.googleapis.com/reservation-name`).
- Kueue v0.19.2: apis/kueue/v1beta2 clusterqueue_types.go (`admissionChecksStrategy.onFlavors`,
  `flavorFungibility`), provisioningrequestconfig_types.go, admissioncheck_types.go.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from helpers import load_platform, present, raw_config, render
from trainstack.app.cli import main
from trainstack.app.deploy.stack_file import load
from trainstack.app.deploy.stacks import raw_stack_config
from trainstack.app.plan.plan import render as plan_of
from trainstack.app.plan.report import describe
from trainstack.app.schemas.validate import validate_object
from trainstack.components.k8s_provider import ACCELERATOR_LABEL, NODE_POOL_LABEL
from trainstack.components.kueue import PROVISIONING_CONTROLLER, QUEUED_PROVISIONING_CLASS, QUEUED_TOLERATION
from trainstack.components.node_pools import Autoscaling, GpuNodePool, GpuNodePoolArgs
from trainstack.core import catalog
from trainstack.core.errors import ConfigError
from trainstack.infra import contract

PLATFORM = "a3mega-capacity-platform"
JOB = "a3mega-gpt3-175b-capacity-job"
KUEUE = "kubernetes:kueue.x-k8s.io/v1beta2"
NODE_POOL = "gcp:container/nodePool:NodePool"

RESERVED = {"name": "reserved", "machineType": "a3-megagpu-8g", "nodeCount": 4, "reservation": {"affinity": "specific", "name": "r"}}
QUEUED = {
    "name": "queued",
    "machineType": "a3-megagpu-8g",
    "provisioning": "queued",
    "autoscaling": {"minNodes": 0, "maxNodes": 8},
    "reservation": {"affinity": "none"},
}
SPOT = {
    "name": "spot",
    "machineType": "a3-megagpu-8g",
    "provisioning": "spot",
    "autoscaling": {"minNodes": 0, "maxNodes": 2},
    "reservation": {"affinity": "none"},
}
HIGH = {"name": "high", "machineType": "a3-highgpu-8g", "nodeCount": 2, "reservation": {"affinity": "none"}}
A2 = {"name": "a100", "machineType": "a2-highgpu-8g", "nodeCount": 2, "reservation": {"affinity": "none"}}


def pools_config(*pools: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """The capacity platform with `pools` instead of its own."""
    raw = raw_config(PLATFORM, **changes)
    raw["trainstack:gpuPools"] = list(pools)
    return raw


def problems(raw: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as caught:
        load(PLATFORM, raw)
    return str(caught.value)


def resources(plan: dict[str, Any], type_suffix: str) -> list[dict[str, Any]]:
    return [r for r in plan["resources"] if r["type"].endswith(type_suffix)]


@pytest.fixture(scope="module")
def platform() -> dict[str, Any]:
    return plan_of(PLATFORM, raw_stack_config(PLATFORM)).to_dict()


# --- config rules, each just inside and just outside --------------------------------------------


def test_one_pool_or_a_list_of_pools_never_both() -> None:
    raw = pools_config(RESERVED)
    assert load_platform(PLATFORM, raw).pools[0].name == "reserved"
    raw["trainstack:gpuPool"] = RESERVED
    assert "trainstack:gpuPools: set as well as trainstack:gpuPool; set exactly one of them" in problems(raw)  # not `gpuPool = None`
    assert "trainstack:gpuPools" in problems(pools_config())  # an empty list: at least one pool


def test_pool_names_are_unique_in_the_cluster() -> None:
    assert "trainstack:gpuPools[1].name = 'reserved': must differ from every other node pool's name" in problems(
        pools_config(RESERVED, {**QUEUED, "name": "reserved"})
    )
    assert "trainstack:gpuPools[0].name" in problems(
        pools_config({**RESERVED, "name": "supervisor-cpu-pool"}, trainstack_cpuPool={"name": "supervisor-cpu-pool"})
    )


def test_a_pools_zone_must_be_in_the_region_and_the_error_names_its_place_in_the_list() -> None:
    assert "trainstack:gpuPools[1].zones[0] = 'europe-west4-a': must be a zone of gcp:region" in problems(
        pools_config(RESERVED, {**SPOT, "zones": ["europe-west4-a"]})
    )


def test_queued_provisioning_autoscales_from_zero() -> None:
    load(PLATFORM, pools_config(QUEUED))
    message = problems(pools_config({**QUEUED, "autoscaling": {"minNodes": 1, "maxNodes": 8}}))
    assert "queued provisioning needs an autoscaling minimum of 0 nodes, not 1" in message
    assert "queued provisioning needs autoscaling" in problems(pools_config({**{k: v for k, v in QUEUED.items() if k != "autoscaling"}, "nodeCount": 2}))


def test_queued_provisioning_takes_no_reservation_and_no_compact_placement() -> None:
    assert "queued capacity cannot consume a reservation; set affinity none" in problems(pools_config({**QUEUED, "reservation": {"affinity": "any"}}))
    assert "queued provisioning takes no compact placement policy" in problems(pools_config({**QUEUED, "placement": "compact"}))
    assert load_platform(PLATFORM, pools_config(QUEUED)).pools[0].compact is False  # `auto` leaves it out


def test_max_run_duration_only_for_dws_and_at_most_seven_days() -> None:
    assert load_platform(PLATFORM, pools_config({**QUEUED, "maxRunDuration": "168h"})).pools[0].max_run_duration == "168h"
    assert "must be at most 7 days (604800s)" in problems(pools_config({**QUEUED, "maxRunDuration": "168h1s"}))
    assert "applies only to flex-start or queued provisioning, not spot" in problems(pools_config({**SPOT, "maxRunDuration": "1h"}))


def test_spot_and_flex_start_take_no_reservation() -> None:
    assert "spot capacity cannot consume a reservation" in problems(pools_config({**SPOT, "reservation": {"affinity": "any"}}))
    flex = {**SPOT, "provisioning": "flex-start"}
    load(PLATFORM, pools_config(flex))
    assert "flex-start capacity cannot consume a reservation" in problems(pools_config({**flex, "reservation": {"affinity": "any"}}))


@pytest.mark.parametrize(("provisioning", "affinity"), [("spot", "none"), ("flex-start", "none"), ("queued", "none"), ("on-demand", "any")])
def test_the_package_inputs_are_read_by_the_stack_files_pool_spec(provisioning: str, affinity: str) -> None:
    """GpuNodePool's package inputs (the spec's keys beside the wiring) are the stack file's pool: a
    pool that names no reservation gets its capacity's (`default_affinity`), and the deprecated
    `compact` is read as `placement`."""
    given = {"project": "my-project", "location": "us-central1", "cluster": "c", "service_account": "sa", "name": "gpu", "zones": ["us-central1-a"]}
    pool = {"machineType": "a3-highgpu-8g", "compact": False, "provisioning": provisioning, "autoscaling": {"minNodes": 0, "maxNodes": 2.0}}
    args = GpuNodePoolArgs.checked({**given, **pool}, GpuNodePool, "gpu")
    assert (args.spec.reservation.affinity, args.spec.placement, args.spec.autoscaling) == (affinity, "none", Autoscaling.model_validate({"maxNodes": 2}))


@pytest.mark.parametrize("capacity", [QUEUED, SPOT, {**SPOT, "provisioning": "flex-start"}])
def test_a_capacity_pool_that_names_no_reservation_consumes_none(capacity: dict[str, Any]) -> None:
    """Spot, flex-start and queued VMs cannot consume a reservation, so their pools need not say
    `reservation: {affinity: none}`; an on-demand pool still defaults to any."""
    unsaid = {k: v for k, v in capacity.items() if k != "reservation"}
    assert load_platform(PLATFORM, pools_config(unsaid)).pools[0].reservation.affinity == "none"
    on_demand = {k: v for k, v in RESERVED.items() if k != "reservation"}
    assert load_platform(PLATFORM, pools_config(on_demand)).pools[0].reservation.affinity == "any"


def test_one_driver_installer_and_one_machine_per_gpudirect_stack_per_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    driven = [{**RESERVED, "gpuDriver": "daemonset"}, {**A2, "gpuDriver": "daemonset"}]
    assert "gpuDriver daemonset on one accelerator per cluster" in problems(pools_config(*driven))
    load(PLATFORM, pools_config(RESERVED, HIGH, A2))  # TCPXO, TCPX and none: Networks named apart
    twin = dataclasses.replace(catalog.machine("a3-highgpu-8g"), name="a3-twin-8g")
    monkeypatch.setitem(catalog.MACHINES, "a3-twin-8g", twin)
    message = problems(pools_config(HIGH, {**HIGH, "name": "twin", "machineType": "a3-twin-8g"}))
    assert "two machine types with GPUDirect tcpx on one cluster: their NIC networks would share names" in message


def test_two_machine_families_each_get_their_nics_installers_and_queue_and_nothing_of_the_others() -> None:
    """A3 Mega (TCPXO, 8 NICs) and A3 High (TCPX, 4 NICs) on one cluster: VPCs, subnets and
    Networks of each family apart (the second's names start `tcpx-`), each pool attached to its
    own family's VPCs, each installer on its own accelerator, a queue per machine."""
    raw = pools_config(RESERVED, HIGH)
    rendered = render(PLATFORM, raw)
    regs = rendered.registrations
    pools = {r.inputs["name"]: r.inputs for r in regs if r.type == NODE_POOL and "guestAccelerators" in r.inputs["nodeConfig"]}
    mega_vpcs = [n["network"] for n in pools["reserved"]["networkConfig"]["additionalNodeNetworkConfigs"]]
    high_vpcs = [n["network"] for n in pools["high"]["networkConfig"]["additionalNodeNetworkConfigs"]]
    assert len(mega_vpcs) == 8 and len(high_vpcs) == 4 and not set(mega_vpcs) & set(high_vpcs)
    assert all("-tcpx-vpc" in v for v in high_vpcs) and not any("-tcpx-" in v for v in mega_vpcs)
    networks = {r.inputs["metadata"]["name"] for r in regs if r.type == "kubernetes:networking.gke.io/v1:Network"}
    assert networks == {f"vpc{i}" for i in range(1, 9)} | {f"tcpx-vpc{i}" for i in range(1, 5)}
    installers = {
        r.inputs["metadata"]["name"]: r.inputs["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
            "nodeSelectorTerms"
        ][0]["matchExpressions"][0]["values"]
        for r in regs
        if r.type == "kubernetes:apps/v1:DaemonSet"
    }
    assert installers["nccl-tcpx-installer"] == [catalog.machine("a3-highgpu-8g").accelerator]
    assert installers["nccl-tcpxo-installer"] == [catalog.machine("a3-megagpu-8g").accelerator]
    urns = [r.urn for r in regs]
    assert len(urns) == len(set(urns))
    terms = contract.from_output(PLATFORM, rendered.outputs[contract.OUTPUT])
    high = contract.for_queue(terms, "a3-queue")
    assert high is not None and high.network_names == [f"tcpx-vpc{i}" for i in range(1, 5)]
    assert [n.name for n in contract.nics(high)] == high.network_names


def test_each_machine_type_has_a_queue_and_a_job_names_an_existing_one() -> None:
    config = load_platform(PLATFORM, pools_config(RESERVED, A2, SPOT))
    assert [(q.local_queue, [p.name for p in q.pools]) for q in config.queues] == [("a3-mega", ["reserved", "spot"]), ("gpu-queue", ["a100"])]
    job = raw_config("a3mega-gpt3-175b")
    job["trainstack:workload"] = {**job["trainstack:workload"], "queue": "nope"}
    with pytest.raises(ConfigError, match=r"trainstack:workload.queue = 'nope': is not a queue of this stack \(a3-mega\)"):
        load("a3mega-gpt3-175b", job)


# --- what the pools become -------------------------------------------------------------------------


def test_every_capacity_mode_as_gke_takes_it(platform: dict[str, Any]) -> None:
    pools = {r["inputs"]["name"]: r["inputs"] for r in resources(platform, ":NodePool") if "guestAccelerators" in r["inputs"]["nodeConfig"]}
    reserved, queued, spot = pools["a3-mega-reserved"], pools["a3-mega-queued"], pools["a3-mega-spot"]
    assert reserved["nodeConfig"]["reservationAffinity"] == {
        "consumeReservationType": "SPECIFIC_RESERVATION",
        "key": "compute.googleapis.com/reservation-name",
        "values": ["a3-mega-reservation"],
    }
    assert reserved["nodeCount"] == 32 and "placementPolicy" not in reserved  # the reservation's own placement
    assert queued["queuedProvisioning"] == {"enabled": True}
    assert (queued["nodeConfig"]["flexStart"], queued["nodeConfig"]["maxRunDuration"]) == (True, "259200s")
    assert queued["nodeConfig"]["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}
    assert queued["autoscaling"] == {"locationPolicy": "ANY", "totalMaxNodeCount": 32, "totalMinNodeCount": 0}
    assert queued["management"] == {"autoRepair": False, "autoUpgrade": False} and "placementPolicy" not in queued
    assert spot["nodeConfig"]["spot"] is True and "flexStart" not in spot["nodeConfig"] and "queuedProvisioning" not in spot
    assert spot["nodeConfig"]["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}


def test_reservation_blocks_and_shared_reservations_reach_the_pool() -> None:
    block = {**RESERVED, "reservation": {"affinity": "specific", "name": "r/reservationBlocks/b1", "project": "owner-project"}}
    rendered = render(PLATFORM, pools_config(block))
    (pool,) = [r for r in rendered.registrations if r.type == NODE_POOL and r.inputs["name"] == "reserved"]
    assert pool.inputs["nodeConfig"]["reservationAffinity"]["values"] == ["projects/owner-project/reservations/r/reservationBlocks/b1"]


def test_each_cluster_queue_tries_its_flavors_in_config_order_and_each_flavor_selects_exactly_its_pool(platform: dict[str, Any]) -> None:
    """Walk every ClusterQueue: its flavors in the order of trainstack:gpuPools, each flavor's node
    labels matching the labels GKE puts on exactly one pool's nodes (its name and accelerator),
    and the provisioning admission check on the queued flavors and only on them."""
    config = load_platform(PLATFORM, raw_stack_config(PLATFORM))
    flavors = {r["inputs"]["metadata"]["name"]: r["inputs"]["spec"] for r in resources(platform, ":ResourceFlavor")}
    node_labels = {
        r["inputs"]["name"]: {NODE_POOL_LABEL: r["inputs"]["name"], ACCELERATOR_LABEL: r["inputs"]["nodeConfig"]["guestAccelerators"][0]["type"]}
        for r in resources(platform, ":NodePool")
        if "guestAccelerators" in r["inputs"]["nodeConfig"]
    }
    (queue,) = resources(platform, ":ClusterQueue")
    spec = queue["inputs"]["spec"]
    order = [f["name"] for f in spec["resourceGroups"][0]["flavors"]]
    pools_in_order = []
    for flavor in order:
        selected = [pool for pool, labels in node_labels.items() if flavors[flavor]["nodeLabels"].items() <= labels.items()]
        assert len(selected) == 1, (flavor, selected)
        pools_in_order += selected
    assert pools_in_order == [p.name for p in config.pools] == ["a3-mega-reserved", "a3-mega-queued", "a3-mega-spot"]
    assert spec["flavorFungibility"] == {"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "TryNextFlavor"}
    checks = spec["admissionChecksStrategy"]["admissionChecks"]
    assert [(c["name"], [pools_in_order[order.index(f)] for f in c["onFlavors"]]) for c in checks] == [("a3-mega-queued-provisioning", ["a3-mega-queued"])]
    assert QUEUED_TOLERATION in flavors[order[1]]["tolerations"]
    assert all(QUEUED_TOLERATION not in flavors[f]["tolerations"] for f in (order[0], order[2]))


def test_the_admission_check_asks_gke_for_queued_provisioning(platform: dict[str, Any]) -> None:
    (check,) = resources(platform, ":AdmissionCheck")
    (config,) = resources(platform, ":ProvisioningRequestConfig")
    assert check["inputs"]["spec"] == {
        "controllerName": PROVISIONING_CONTROLLER,
        "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": config["inputs"]["metadata"]["name"]},
    }
    assert config["inputs"]["spec"] == {
        "provisioningClassName": QUEUED_PROVISIONING_CLASS,
        "managedResources": ["nvidia.com/gpu"],
        "parameters": {"maxRunDurationSeconds": "259200"},
        # written out, not left to Kueue's CRD default (tests/test_kueue_ladder.py walks what it does)
        "retryStrategy": {"backoffLimitCount": 3, "backoffBaseSeconds": 60, "backoffMaxSeconds": 1800},
    }
    assert config["urn"] in check["dependencies"]
    (queue,) = resources(platform, ":ClusterQueue")
    assert check["urn"] in queue["dependencies"]  # created first, deleted last
    for obj in (check, config, queue):
        assert validate_object(obj["inputs"]) == []


def test_the_job_pins_no_pool_kueue_places_it_with_the_flavor() -> None:
    """The job selects its machine only; with each flavor's node labels added (as Kueue does on
    admission) it selects exactly that flavor's pool, and with the flavor's tolerations it
    tolerates that pool's taints."""
    job_plan = plan_of(JOB, raw_stack_config(JOB)).to_dict()
    (job,) = resources(job_plan, "batch/v1:Job")
    pod = job["inputs"]["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {ACCELERATOR_LABEL: catalog.machine("a3-megagpu-8g").accelerator}
    assert job["inputs"]["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "a3-mega"
    platform = plan_of(PLATFORM, raw_stack_config(PLATFORM)).to_dict()
    pools = {r["inputs"]["name"]: r["inputs"] for r in resources(platform, ":NodePool") if "guestAccelerators" in r["inputs"]["nodeConfig"]}
    for flavor in resources(platform, ":ResourceFlavor"):
        spec = flavor["inputs"]["spec"]
        # Kueue admits a pod on a flavor only when its own selector agrees with the flavor's labels.
        assert all(spec["nodeLabels"].get(key, value) == value for key, value in pod["nodeSelector"].items())
        selector = {**pod["nodeSelector"], **spec["nodeLabels"]}
        matched = [n for n, p in pools.items() if selector == {NODE_POOL_LABEL: n, ACCELERATOR_LABEL: p["nodeConfig"]["guestAccelerators"][0]["type"]}]
        assert len(matched) == 1
        tolerated = {(t["key"], t.get("value")) for t in [*pod["tolerations"], *spec["tolerations"]]}
        assert {("nvidia.com/gpu", "present")} <= tolerated
        if pools[matched[0]].get("queuedProvisioning"):
            assert ("cloud.google.com/gke-queued", "true") in tolerated


def test_two_machine_types_get_a_queue_and_installers_each() -> None:
    rendered = render(PLATFORM, pools_config(RESERVED, A2))
    by_type: dict[str, list[Any]] = {}
    for r in rendered.registrations:
        by_type.setdefault(r.type, []).append(r)
    queues = {r.inputs["metadata"]["name"]: r.inputs["spec"] for r in by_type[f"{KUEUE}:ClusterQueue"]}
    assert set(queues) == {"a3-mega", "gpu-queue"}
    assert all("flavorFungibility" not in spec and "admissionChecksStrategy" not in spec for spec in queues.values())
    # A3 Mega's TCPXO installers select its accelerator only; A2 needs none.
    for ds in by_type["kubernetes:apps/v1:DaemonSet"]:
        terms = ds.inputs["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        assert terms[0]["matchExpressions"][0]["values"] == ["nvidia-h100-mega-80gb"]
    # Only the machine with extra NICs gets them.
    extra = {r.inputs["name"]: r.inputs.get("networkConfig") for r in by_type[NODE_POOL] if "guestAccelerators" in r.inputs["nodeConfig"]}
    assert extra["a100"] is None and len(extra["reserved"]["additionalNodeNetworkConfigs"]) == 8


def test_the_contract_carries_the_pools_and_a_job_sees_its_queue(platform: dict[str, Any]) -> None:
    terms = contract.from_output(PLATFORM, platform["outputs"][contract.OUTPUT])
    assert [(p["name"], p["provisioning"], p["reservation"], p["queue"], p["nodes"]) for p in terms.pools] == [
        ("a3-mega-reserved", "on-demand", "specific", "a3-mega", 32),
        ("a3-mega-queued", "queued", "none", "a3-mega", 32),
        ("a3-mega-spot", "spot", "none", "a3-mega", 32),
    ]
    seen = contract.for_queue(terms, "a3-mega")
    assert seen is not None and (seen.gpu_machine_type, seen.gpu_nodes, seen.topology_aware) == ("a3-megagpu-8g", 32, False)
    assert contract.for_queue(terms, "other") is None
    job = raw_stack_config(JOB)
    job["trainstack:workload"] = {**job["trainstack:workload"], "queue": "other"}
    with pytest.raises(ConfigError, match=r"trainstack:workload.queue = 'other': is not a queue of the platform \(a3-mega\)"):
        plan_of(JOB, job)
    job["trainstack:workload"] = {**job["trainstack:workload"], "queue": "a3-mega", "nodes": 64}
    with pytest.raises(ConfigError, match=re.escape("trainstack:workload.nodes = 64")):
        plan_of(JOB, job)


def test_cost_speaks_per_pool_prices_spot_as_spot_and_dws_as_a_range() -> None:
    """Spot at the catalog's spot snapshot (catalog.SNAPSHOT_PRICES_SOURCE for A3 Mega); DWS, which has no
    per-machine price, at on-demand as an upper bound with the floor at Google's "up to 53%"
    discount; the total is the pools' sum plus the rest."""
    plan = plan_of(PLATFORM, raw_stack_config(PLATFORM))
    pools = plan.cost.to_dict()["pools"]
    assert {name: (p["capacity"], p.get("priceIsUpperBound", False)) for name, p in pools.items() if name != "cpu-pool"} == {
        "a3-mega-reserved": ("reservation", False),
        "a3-mega-queued": ("queued", True),
        "a3-mega-spot": ("spot", False),
    }
    mega = catalog.machine("a3-megagpu-8g")
    assert (pools["a3-mega-spot"]["usdPerNodeHour"], pools["a3-mega-spot"]["priceSource"]) == (mega.spot_hourly_usd, catalog.SNAPSHOT_PRICES_SOURCE)
    assert pools["a3-mega-reserved"]["usdPerNodeHour"] == mega.hourly_usd and "priceSource" not in pools["a3-mega-reserved"]
    queued = pools["a3-mega-queued"]
    assert (queued["usdPerNodeHour"], queued["usdPerNodeHourAtMostDiscount"]) == (mega.hourly_usd, round(present(mega.hourly_usd) * 0.47, 4))
    assert plan.cost.max_usd == round(plan.cost.fixed_usd + sum(p["maxNodes"] * p["usdPerNodeHour"] for p in pools.values()), 2)
    table = describe(plan, Path("out"), "table")
    assert "pool a3-mega-spot" in table and "0-32 x a3-megagpu-8g, spot" in table and "it changes up to daily" in table
    assert "at DWS's largest stated discount" in table
    single = describe(plan_of("a3mega-gpt3-175b", raw_stack_config("a3mega-gpt3-175b")), Path("out"), "table")
    assert "  pool " not in single  # one GPU pool: the total says it all


@pytest.mark.parametrize("stack", ["a3mega-gpt3-175b", "a3ultra-405b", "a2-gpt2-deepspeed"])
def test_one_pool_as_a_list_plans_exactly_as_trainstack_gpu_pool(stack: str) -> None:
    """`trainstack:gpuPools: [X]` is `trainstack:gpuPool: X`: moving a stack to the list form (to
    add a pool after it) changes no resource, so nothing of a live cluster is replaced."""
    raw = raw_stack_config(stack)
    listed = {k: v for k, v in raw.items() if k != "trainstack:gpuPool"} | {"trainstack:gpuPools": [raw["trainstack:gpuPool"]]}
    assert plan_of(stack, listed).resources == plan_of(stack, raw).resources


def test_validate_names_every_pool_with_its_capacity_in_queue_order() -> None:
    result = CliRunner().invoke(main, ["validate", PLATFORM])
    assert result.exit_code == 0, result.output
    assert (
        "GPU pools, in the order their queues try them: a3-mega-reserved (32 x a3-megagpu-8g, reservation), "
        "a3-mega-queued (32 x a3-megagpu-8g, queued), a3-mega-spot (32 x a3-megagpu-8g, spot)"
    ) in result.output
    single = CliRunner().invoke(main, ["validate", "a3mega-gpt3-175b"])
    assert single.exit_code == 0 and "GPU pools" not in single.output


def test_critical_path_says_when_each_gpu_pool_is_ready() -> None:
    """A fixed reserved pool waits for its nodes; pools that autoscale from 0 are ready once
    created empty, so jobs queued on them wait for their nodes instead (ProvisioningRequest or
    the autoscaler), not the deploy."""
    path = plan_of(PLATFORM, raw_stack_config(PLATFORM)).critical_path
    ready = {p.name: p.ready for p in path.pools}
    assert set(ready) == {"a3-mega-reserved", "a3-mega-queued", "a3-mega-spot"}
    assert ready["a3-mega-reserved"] > ready["a3-mega-queued"] == ready["a3-mega-spot"]
    assert path.to_dict()["pools"]["a3-mega-reserved"]["readyAt"] == round(ready["a3-mega-reserved"], 1)
    assert "GPU pool a3-mega-spot ready at" in path.to_table()
    single = plan_of("a3mega-gpt3-175b", raw_stack_config("a3mega-gpt3-175b")).critical_path
    assert len(single.pools) == 1 and "GPU pool a3-mega ready" not in single.to_table()
