"""Config rules of the GCP sections, each rejected with one message naming the key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from gcp_support import STACK, gcp, raw
from helpers import load_platform, raw_config
from trainstack.app.cli import main
from trainstack.app.deploy import validation
from trainstack.app.deploy.stack_file import load
from trainstack.app.deploy.stacks import project_root
from trainstack.core import catalog, rules
from trainstack.core.errors import ConfigError

BUILD = {"context": "images/nemo-24.07", "imageName": "nemo-workload", "tag": "24.07"}


def problems(config: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load(STACK, config)
    return caught.value.problems


@pytest.mark.parametrize(
    ("changes", "key", "message"),
    [
        (
            {"trainstack_network": {"podsCidr": "10.0.0.0/14"}},
            "trainstack:network.podsCidr",
            "overlaps subnetCidr (10.0.0.0/20)",
        ),
        (
            {"trainstack_network": {"gpuNicCidr": "10.0.0.0/16"}},
            "trainstack:network.gpuNicCidr",
            "overlaps subnetCidr",
        ),
        (
            {"trainstack_network": {"subnetCidr": "10.0.0.1/20"}},
            "trainstack:network.subnetCidr",
            "host bits are set",
        ),
        (
            {"trainstack_gpuPool": {"machineType": "a3-megagpu-8g", "placement": "none", "zones": ["us-central1-a", "us-central1-b"], "nodeCount": 55}},
            "trainstack:gpuPool.nodeCount",
            "must be a multiple of the number of zones (2)",
        ),
        (
            {
                "trainstack_gpuPool": {
                    "placement": "none",
                    "provisioning": "flex-start",
                    "nodeCount": None,
                    "autoscaling": {"maxNodes": 54},
                    "reservation": {"affinity": "any", "name": None},
                }
            },
            "trainstack:gpuPool.reservation.affinity",
            "flex-start capacity cannot consume a reservation; set affinity none",
        ),
        (
            {"trainstack_gpuPool": {"placement": "none", "zones": ["us-central1-a", "us-central1-b"], "nodeCount": 54}},
            "trainstack:gpuPool.zones",
            "a3-ultragpu-8g needs exactly one zone: its RDMA VPC is bound to one zone's RoCE profile",
        ),
        (
            {"trainstack_cpuPool": {"zones": ["us-central1-a", "us-central1-b", "us-central1-c"]}},
            "trainstack:cpuPool.nodeCount",
            "must be a multiple of the number of zones (3)",
        ),
        (
            {"trainstack_image": {"prebuilt": None, "build": {**BUILD, "context": "../outside"}}},
            "trainstack:image.build.context",
            "must be a relative path inside the repository",
        ),
        (
            {"trainstack_image": {"prebuilt": None, "build": {**BUILD, "context": "/abs/path"}}},
            "trainstack:image.build.context",
            "must be a relative path inside the repository",
        ),
        (
            {"trainstack_image": {"prebuilt": None, "build": {**BUILD, "machineType": "e2-standard-8"}}},
            "trainstack:image.build.machineType",
            "is not a Cloud Build machine type",
        ),
    ],
)
def test_rule_rejects_with_one_message(changes: dict[str, Any], key: str, message: str) -> None:
    (problem,) = problems(raw_config(STACK, **changes))
    assert problem.startswith(f"{key} = ")
    assert message in problem


def test_existing_network_ranges_are_not_checked_against_unused_defaults() -> None:
    config = load_platform(STACK, raw("a3high", trainstack_network={"gpuNicCidr": "10.4.0.0/16"}))
    assert config.network.existing is not None


def check(changes: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        validation.validate(STACK, raw_config(STACK, **changes), project_root())
    return caught.value.problems


def test_cpu_pool_inheriting_more_zones_than_it_can_fill_evenly() -> None:
    with pytest.raises(ConfigError) as caught:
        load(
            STACK,
            raw_config(
                STACK,
                trainstack_gpuPool={
                    "machineType": "a3-megagpu-8g",
                    "placement": "none",
                    "zones": ["us-central1-a", "us-central1-b", "us-central1-c"],
                    "nodeCount": 54,
                },
                trainstack_workload={"nodes": 54, "resiliency": {"enabled": False}},
            ),
        )
    (problem,) = caught.value.problems
    assert problem.startswith("trainstack:cpuPool.nodeCount = 2: ")
    assert "inherits from the GPU pool (3)" in problem


def test_build_context_without_a_dockerfile() -> None:
    (problem,) = check({"trainstack_image": {"prebuilt": None, "build": {**BUILD, "context": "images/missing"}}})
    assert problem == f"trainstack:image.build.context = 'images/missing': no Dockerfile in images/missing/ under {project_root()}"


def test_valid_variants_pass_the_layer_checks() -> None:
    for variant in ("a3ultra", "a3mega", "a2"):
        assert gcp.problems(load(STACK, raw(variant)).image, project_root()) == []


def test_a_zone_the_table_does_not_list_in_a_region_it_knows_is_warned_of_not_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`us-central1-z` is no zone the catalog's table (catalog.MACHINE_ZONES) lists in us-central1;
    GKE would refuse it only after the networks exist, so validate warns, naming the zones it knows,
    and still accepts it (the table is a dated snapshot: a zone may have opened since)."""
    config = load_platform(STACK, raw_config(STACK, gcp_zone="us-central1-z", trainstack_cpuPool={"zones": ["us-central1-z"]}))
    known = "it knows us-central1-a, us-central1-b, us-central1-c, us-central1-f"
    warnings = config.warnings()
    assert [w.split(":", 2)[:2] for w in warnings] == [["gcp", "zone = 'us-central1-z'"], ["trainstack", "cpuPool.zones[0] = 'us-central1-z'"]]
    assert all(known in w and catalog.MACHINE_ZONES_SOURCE in w for w in warnings)
    assert load_platform(STACK, raw_config(STACK)).warnings() == []  # us-central1-b: in the table

    (tmp_path / "Pulumi.yaml").write_text("name: trainstack\n")
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.z.yaml").write_text(yaml.safe_dump({"config": raw_config(STACK, gcp_zone="us-central1-z")}))
    monkeypatch.setenv("TRAINSTACK_ROOT", str(tmp_path))
    result = CliRunner().invoke(main, ["validate", "z"])
    assert result.exit_code == 0, result.output
    assert "warning: gcp:zone = 'us-central1-z': is not a zone the catalog's table lists in us-central1" in result.output


def test_a_region_the_table_does_not_know_passes_without_a_warning() -> None:
    assert rules.zone_known("me-central2-a") is None  # no zone of me-central2 in the table
    assert rules.zone_known("us-central1-ai1a") is not None  # an AI zone the table does not list, in us-central1
    assert all(rules.zone_known(z) is None for zones in catalog.MACHINE_ZONES.values() for z in zones)
