"""What validate accepts, GCP and Kubernetes accept: each rule of the real APIs with a config just
inside its limit (valid) and just outside it (one problem naming the key, the value and the rule).
Every source is cited beside its rule in core/rules.py or core/names.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from helpers import merge
from trainstack.app.cli import main
from trainstack.app.deploy import stack_file, validation
from trainstack.app.deploy.stacks import project_root, raw_stack_config, stack_names
from trainstack.core import catalog, names, rules
from trainstack.core.errors import ConfigError
from trainstack.infra import fleet_stack as fleet


def found(stack: str, changes: dict[str, Any]) -> list[str]:
    try:
        validation.validate(stack, merge(raw_stack_config(stack), changes), project_root())
    except ConfigError as exc:
        return exc.problems
    return []


def window(hours: float, recurrence: str) -> dict[str, Any]:
    end = f"2026-01-03T{3 + int(hours):02d}:{int(hours % 1 * 60):02d}:00Z"
    return {"trainstack:cluster": {"maintenance": {"window": {"start": "2026-01-03T03:00:00Z", "end": end, "recurrence": recurrence}}}}


def workload(**fields: Any) -> dict[str, Any]:
    return {"trainstack:workload": fields}


# (id, stack, config just inside, just outside, the problem's start (key = value), a phrase of its rule)
CASES = [
    # JobSet v0.12.0 webhook: `<jobset>-workload-0-<last pod>-abcde` is a DNS-1035 label (a2: 2 nodes, no supervisor)
    ("jobset-pod-name", "a2-gpt2-deepspeed", workload(name="j" * 44), workload(name="j" * 45), "trainstack:workload.name = ", "JobSet v0.12.0's webhook"),
    # the Indexed Job's pod hostname `<job>-<last index>` is a DNS label
    ("job-hostname", "a3mega-gpt3-175b", workload(name="j" * 60), workload(name="j" * 61), "trainstack:workload.name = ", "pod hostname"),
    # the supervisor's Services `<name>-supervisor-controller` are DNS-1035 labels
    ("supervisor-service", "a3ultra-405b", workload(name="j" * 41), workload(name="j" * 42), "trainstack:workload.name = ", "supervisor Service"),
    # TensorBoard's Service `<name>-tensorboard`
    (
        "tensorboard-service",
        "a3high-nemo-gpt5b",
        workload(name="j" * 51, controller="job"),
        workload(name="j" * 52, controller="job"),
        "trainstack:workload.name = ",
        "TensorBoard Service",
    ),
    # GKE node pool names: at most 40 characters
    (
        "node-pool-name",
        "a3mega-gpt3-175b",
        {"trainstack:gpuPool": {"name": "p" * 40}},
        {"trainstack:gpuPool": {"name": "p" * 41}},
        "trainstack:gpuPool.name = ",
        "at most 40 characters",
    ),
    (
        "cpu-pool-name",
        "a3mega-gpt3-175b",
        {"trainstack:cpuPool": {"name": "p" * 40}},
        {"trainstack:cpuPool": {"name": "p" * 41}},
        "trainstack:cpuPool.name = ",
        "at most 40 characters",
    ),
    # the control plane's /28 overlaps none of the VPC's ranges
    (
        "master-overlap",
        "a3mega-gpt3-175b",
        {"trainstack:cluster": {"masterIpv4Cidr": "10.0.16.0/28"}},
        {"trainstack:cluster": {"masterIpv4Cidr": "10.0.15.240/28"}},
        "trainstack:cluster.masterIpv4Cidr = '10.0.15.240/28'",
        "overlaps trainstack:network.subnetCidr",
    ),
    # pods range: a /24 a node (110 pods), for every node of both pools (32 GPU + 2 CPU = 34: a /18 holds 64, a /19 32)
    (
        "pods-range",
        "a3mega-gpt3-175b",
        {"trainstack:network": {"podsCidr": "10.4.0.0/18"}},
        {"trainstack:network": {"podsCidr": "10.4.0.0/19"}},
        "trainstack:network.podsCidr = '10.4.0.0/19'",
        "holds the pods of 32 nodes",
    ),
    # subnet: every node an address, less GCP's 4 reserved (a /26 holds 60, a /27 28)
    (
        "subnet-range",
        "a3mega-gpt3-175b",
        {"trainstack:network": {"subnetCidr": "10.0.0.0/26"}},
        {"trainstack:network": {"subnetCidr": "10.0.0.0/27"}},
        "trainstack:network.subnetCidr = '10.0.0.0/27'",
        "holds 28 node addresses",
    ),
    # each GPU NIC subnet is a /24: 252 nodes
    (
        "gpu-nic-subnet",
        "a3mega-gpt3-175b",
        {"trainstack:gpuPool": {"nodeCount": 252}, "trainstack:workload": {"nodes": 32}},
        {"trainstack:gpuPool": {"nodeCount": 253}},
        "trainstack:gpuPool.nodeCount = 253",
        "each GPU NIC subnet (a /24) holds 252 node addresses",
    ),
    # GKE authorized networks: at most 50 with the public endpoint
    (
        "authorized-networks",
        "a3mega-gpt3-175b",
        {"trainstack:cluster": {"authorizedNetworks": [{"cidrBlock": f"10.200.{i}.0/24"} for i in range(50)]}},
        {"trainstack:cluster": {"authorizedNetworks": [{"cidrBlock": f"10.200.{i}.0/24"} for i in range(51)]}},
        "trainstack:cluster.authorizedNetworks = ",
        "GKE takes at most 50",
    ),
    (
        "authorized-networks-private",
        "a3mega-gpt3-175b",
        {"trainstack:cluster": {"privateEndpoint": True, "authorizedNetworks": [{"cidrBlock": f"10.200.{i}.0/24"} for i in range(50)]}},
        {"trainstack:cluster": {"privateEndpoint": True, "authorizedNetworks": [{"cidrBlock": f"10.200.{i}.0/24"} for i in range(51)]}},
        "trainstack:cluster.authorizedNetworks = ",
        "GKE takes at most 50",
    ),
    # the zone holds the machine (catalog.MACHINE_ZONES): asia-northeast1 offers A3 Mega and A4, no A3 Ultra
    (
        "machine-zone",
        "a3ultra-405b",
        {"gcp:region": "europe-west4", "gcp:zone": "europe-west4-a"},
        {"gcp:region": "asia-northeast1", "gcp:zone": "asia-northeast1-b"},
        "gcp:zone = 'asia-northeast1-b': cannot hold trainstack:gpuPool.machineType",
        "asia-northeast1 offers no a3-ultragpu-8g",
    ),
    (
        "machine-zone-list",
        "a3mega-gpt3-175b",
        {"gcp:region": "us-west1", "gcp:zone": "us-west1-a", "trainstack:gpuPool": {"zones": ["us-west1-b"]}},
        {"gcp:region": "us-south1", "gcp:zone": "us-south1-b", "trainstack:gpuPool": {"zones": ["us-south1-b"]}},
        "trainstack:gpuPool.zones[0] = 'us-south1-b'",
        "us-south1 offers no a3-megagpu-8g",
    ),
    # an AI zone is a zone (<region>-ai<n><letter>); a name that is neither is not
    ("ai-zone", "a3ultra-405b", {"gcp:zone": "us-central1-ai1a"}, {"gcp:zone": "us-central1-ai1"}, "gcp:zone = 'us-central1-ai1'", "must be a GCP zone"),
    # a private endpoint takes internal ranges only
    (
        "private-endpoint",
        "a3mega-gpt3-175b",
        {"trainstack:cluster": {"privateEndpoint": True, "authorizedNetworks": [{"cidrBlock": "10.200.0.0/16"}]}},
        {"trainstack:cluster": {"privateEndpoint": True, "authorizedNetworks": [{"cidrBlock": "8.8.8.0/24"}]}},
        "trainstack:cluster.authorizedNetworks[0].cidrBlock = '8.8.8.0/24'",
        "is a public range",
    ),
    # Filestore ZONAL: 1-9.75 TiB in 256 GiB steps
    (
        "filestore-step",
        "a3high-nemo-gpt5b",
        {"trainstack:storage": {"filestore": {"tier": "ZONAL", "capacityGib": 1280}}},
        {"trainstack:storage": {"filestore": {"tier": "ZONAL", "capacityGib": 1279}}},
        "trainstack:storage.filestore.capacityGib = 1279",
        "in steps of 256",
    ),
    (
        "filestore-gap",
        "a3high-nemo-gpt5b",
        {"trainstack:storage": {"filestore": {"tier": "ZONAL", "capacityGib": 10240}}},
        {"trainstack:storage": {"filestore": {"tier": "ZONAL", "capacityGib": 10239}}},
        "trainstack:storage.filestore.capacityGib = 10239",
        "10240 to 102400 GiB",
    ),
    # Filestore BASIC_SSD: at least 2560 GiB (terraform-provider-google filestore_instance capacity_gb)
    (
        "filestore-basic-ssd",
        "a3high-nemo-gpt5b",
        {"trainstack:storage": {"filestore": {"tier": "BASIC_SSD", "capacityGib": 2560}}},
        {"trainstack:storage": {"filestore": {"tier": "BASIC_SSD", "capacityGib": 2559}}},
        "trainstack:storage.filestore.capacityGib = 2559",
        "2560 to 65434 GiB",
    ),
    # Filestore REGIONAL: 100 GiB to 10,239 GiB, then 10 TiB to 100 TiB
    (
        "filestore-regional",
        "a3high-nemo-gpt5b",
        {"trainstack:storage": {"filestore": {"tier": "REGIONAL", "capacityGib": 100}}},
        {"trainstack:storage": {"filestore": {"tier": "REGIONAL", "capacityGib": 99}}},
        "trainstack:storage.filestore.capacityGib = 99",
        "100 to 10239 GiB",
    ),
    # Filestore ENTERPRISE: 1 TiB to 10 TiB in 256 GiB units
    (
        "filestore-enterprise",
        "a3high-nemo-gpt5b",
        {"trainstack:storage": {"filestore": {"tier": "ENTERPRISE", "capacityGib": 10240}}},
        {"trainstack:storage": {"filestore": {"tier": "ENTERPRISE", "capacityGib": 10496}}},
        "trainstack:storage.filestore.capacityGib = 10496",
        "1024 to 10240 GiB in steps of 256",
    ),
    # GKE: 48 h of maintenance in 32 days; a weekly day recurs at least 4 times in any 32 days (12 h x 4 = 48 h)
    (
        "maintenance-one-day",
        "a3mega-gpt3-175b",
        window(12, "FREQ=WEEKLY;BYDAY=SA"),
        window(11.5, "FREQ=WEEKLY;BYDAY=SA"),
        "trainstack:cluster.maintenance.window.end = '2026-01-03T14:30:00Z'",
        "allows 46 h of maintenance in 32 days",
    ),
    # GKE: 48 h of maintenance in 32 days (a weekend window of 6 h: 4 weekends x 2 days x 6 h = 48 h)
    (
        "maintenance-48h",
        "a3mega-gpt3-175b",
        window(6, "FREQ=WEEKLY;BYDAY=SA,SU"),
        window(5.5, "FREQ=WEEKLY;BYDAY=SA,SU"),
        "trainstack:cluster.maintenance.window.end = '2026-01-03T08:30:00Z'",
        "allows 44 h of maintenance in 32 days",
    ),
    (
        "maintenance-weekday",
        "a3mega-gpt3-175b",
        window(8, "FREQ=WEEKLY;BYDAY=SA,SU"),
        window(8, "FREQ=WEEKLY;BYDAY=SA,SUN"),
        "trainstack:cluster.maintenance.window.recurrence = 'FREQ=WEEKLY;BYDAY=SA,SUN'",
        "must be an RFC 5545 rule",
    ),
    # GKE: NO_UPGRADES exclusions last at most 30 days; trainstack's runs to the end of support
    (
        "exclusion-scope",
        "a3mega-gpt3-175b",
        {"trainstack:cluster": {"maintenance": {"exclusion": {"scope": "NO_MINOR_UPGRADES"}}}},
        {"trainstack:cluster": {"maintenance": {"exclusion": {"scope": "NO_UPGRADES"}}}},
        "trainstack:cluster.maintenance.exclusion.scope = 'NO_UPGRADES'",
        "at most 30 days",
    ),
    # reserved namespaces
    (
        "namespace",
        "a3mega-gpt3-175b",
        workload(namespace="kube"),
        workload(namespace="kube-system"),
        "trainstack:workload.namespace = 'kube-system'",
        "system namespace",
    ),
    (
        "namespace-gke",
        "a3mega-gpt3-175b",
        workload(namespace="gke"),
        workload(namespace="gke-managed-system"),
        "trainstack:workload.namespace = 'gke-managed-system'",
        "system namespace",
    ),
    (
        "namespace-controllers",
        "a3mega-gpt3-175b",
        workload(namespace="kueue"),
        workload(namespace="kueue-system"),
        "trainstack:workload.namespace = 'kueue-system'",
        "system namespace",
    ),
    # mount paths: one per path in the training container
    (
        "storage-mount",
        "a3mega-gpt3-175b",
        {"trainstack:storage": {"mountPath": "/dev/shm/logs"}},
        {"trainstack:storage": {"mountPath": "/dev/shm"}},
        "trainstack:storage.mountPath = '/dev/shm'",
        "already the mount path of shared memory",
    ),
    (
        "dataset-mount",
        "a3mega-gpt3-175b",
        workload(dataset={"source": "gs://bkt/d", "path": "/data"}),
        workload(dataset={"source": "gs://bkt/d", "path": "/job-logs"}),
        "trainstack:workload.dataset.path = '/job-logs'",
        "already the mount path of trainstack:storage.mountPath",
    ),
    (
        "gpudirect-mount",
        "a3mega-gpt3-175b",
        workload(dataset={"source": "gs://bkt/d", "path": "/usr/local/nccl"}),
        workload(dataset={"source": "gs://bkt/d", "path": "/usr/local/nccl-plugin"}),
        "trainstack:workload.dataset.path = '/usr/local/nccl-plugin'",
        "GPUDirect (tcpxo)",
    ),
    # a multi-node job required on one host is never admitted
    (
        "topology-host",
        "a3ultra-405b",
        workload(topology={"mode": "required", "level": "cloud.google.com/gce-topology-block"}),
        workload(topology={"mode": "required", "level": "kubernetes.io/hostname"}),
        "trainstack:workload.topology.mode = 'required'",
        "requires all 54 pods on one host",
    ),
    # a prebuilt image names a tag or a digest
    (
        "prebuilt-tag",
        "a3mega-gpt3-175b",
        {"trainstack:image": {"build": None, "prebuilt": "registry.local:5000/team/nemo:24.07"}},
        {"trainstack:image": {"build": None, "prebuilt": "registry.local:5000/team/nemo"}},
        "trainstack:image.prebuilt = 'registry.local:5000/team/nemo'",
        "names no tag or digest",
    ),
]


@pytest.mark.parametrize(("stack", "inside", "outside", "key", "rule"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_limit_just_inside_and_just_outside(stack: str, inside: dict[str, Any], outside: dict[str, Any], key: str, rule: str) -> None:
    assert found(stack, inside) == []
    problems = found(stack, outside)
    assert len(problems) == 1 and problems[0].startswith(key) and rule in problems[0], problems


@pytest.mark.parametrize("command", ["validate", "plan"])
def test_a_custom_resource_outside_its_crd_schema_exits_2_naming_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str) -> None:
    """Kueue v0.19.2's WorkloadPriorityClass CRD: description maxLength 2048. validate and plan
    render offline and check every Kueue and JobSet object against its bundled CRD schema."""
    (tmp_path / "stacks").mkdir()
    shipped = raw_stack_config("a3ultra-platform")
    # Alone in its folder: without the fleet it admits, whose stack file is not copied.
    platform = {**shipped, "trainstack:cluster": {k: v for k, v in shipped["trainstack:cluster"].items() if k != "admitFleets"}}
    monkeypatch.setenv("TRAINSTACK_ROOT", str(tmp_path))
    for length, code in ((2048, 0), (2049, 2)):
        changes = {"trainstack:kueue": {"priorityClasses": [{"name": "p", "value": 1, "description": "d" * length}]}}
        config = merge(platform, changes)
        (tmp_path / "stacks" / "Pulumi.crd.yaml").write_text(yaml.safe_dump({"config": config}))
        result = CliRunner().invoke(main, [command, "crd", *(["--out", str(tmp_path / "out")] if command == "plan" else [])])
        assert result.exit_code == code, result.output
    assert "trainstack:kueue.priorityClasses = 'p': renders WorkloadPriorityClass/p: description: 'dddd" in result.output
    assert "is too long: refused by its CRD schema (kueue.x-k8s.io/v1beta2)" in result.output and "Traceback" not in result.output


def test_a_long_prefix_is_shortened_keeping_its_suffix_so_siblings_never_collide() -> None:
    """Service account IDs are 6-30 characters (terraform-provider-google ValidateRFC1035Name(6, 30)):
    a 40-character cluster name once cut `<cluster>-nodes` and `<cluster>-builder` to one ID."""
    cluster = "c" * 40
    nodes, builder = names.physical(cluster, "nodes", 30), names.physical(cluster, "builder", 30)
    assert nodes != builder and nodes.endswith("-nodes") and builder.endswith("-builder")
    assert rules.ACCOUNT_ID(nodes) is None and rules.ACCOUNT_ID(builder) is None
    assert names.physical("c" * 24, "nodes", 30) == "c" * 24 + "-nodes"  # a name that fits is kept as is
    assert names.physical(cluster + "x", "nodes", 30) != nodes  # two long prefixes differ by their hash


def test_bucket_names_over_63_characters_are_shortened_without_collisions() -> None:
    long_a, long_b = names.bucket("p" * 30, "s" * 40 + "-a"), names.bucket("p" * 30, "s" * 40 + "-b")
    assert len(long_a) == len(long_b) == 63 and long_a != long_b
    assert rules.bucket_name(long_a) is None
    assert names.bucket("my-project", "a3ultra-405b") == "my-project-a3ultra-405b"


@pytest.mark.parametrize(
    ("machine", "zone", "refused"),
    [
        ("a3-ultragpu-8g", "asia-northeast1-b", True),  # a zone the table lists, of a region without the machine
        ("a3-ultragpu-8g", "us-central1-a", False),  # its region offers the machine in another zone: GKE decides
        ("a3-ultragpu-8g", "asia-northeast1-ai1a", False),  # an AI zone the table does not know
        ("a3-ultragpu-8g", "asia-northeast1-f", False),  # a zone new since the table was read
        ("a3-ultragpu-8g", "northamerica-south1-a", False),  # a region the table does not list
        ("a4-highgpu-8g", "us-east5-a", True),  # A4 (B200) has its row
        ("a4x-highgpu-4g", "us-east5-a", False),  # no citable zones for A4X (GB200): no row, no refusal
    ],
)
def test_a_zone_is_refused_only_where_the_dated_table_is_sure(machine: str, zone: str, refused: bool) -> None:
    """catalog.MACHINE_ZONES (skypilot-catalog's Compute Engine listing, read 2026-11-25) refuses a
    zone it knows in a region it knows lacks the machine; a new zone or region never is."""
    assert bool(rules.machine_zone(machine, zone)) is refused


@pytest.mark.parametrize("stack", [s for s in stack_names() if "trainstack:platform" not in raw_stack_config(s) and not fleet.is_fleet(raw_stack_config(s))])
def test_every_shipped_pool_sits_in_a_zone_the_table_lists_for_its_machine(stack: str) -> None:
    """Stronger than the rule: each shipped stack's GPU pools are in zones catalog.MACHINE_ZONES
    lists for their machine (or the machine has no row)."""
    config = stack_file.PLATFORM.load(stack, raw_stack_config(stack))
    for pool in config.pools:
        offered = catalog.MACHINE_ZONES.get(pool.machine_type)
        assert offered is None or set(pool.zones or [config.zone]) <= offered, (stack, pool.name)
