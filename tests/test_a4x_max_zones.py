"""A4X Max zones: no complete listing was found (core/catalog/zones.py says what was searched); the one
listing, a partial, undated third-party copy of Google's GPU regions and zones page, names
us-central1-b, us-east4-a and us-east4-b. Validate warns about an A4X Max pool in another zone, naming
that source, and refuses none (the recorded departure); other machines get no such warning."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from helpers import load_platform, raw_config
from trainstack.app.cli import main
from trainstack.core import catalog, rules

STACK = "a4xmax-llama31-405b"
MAX = "a4x-maxgpu-4g-metal"


def test_the_listing_is_cited_and_names_the_shipped_stacks_zone() -> None:
    assert catalog.MACHINE_ZONES_NAMED[MAX] == {"us-central1-b", "us-east4-a", "us-east4-b"}
    assert "sean-reid/cloud-atlas@bec943e" in catalog.MACHINE_ZONES_NAMED_SOURCE
    assert MAX not in catalog.MACHINE_ZONES  # partial: never a row validate refuses by
    assert load_platform(STACK, raw_config(STACK)).warnings() == []  # us-central1-b


def test_a_zone_the_listing_does_not_name_is_warned_of_at_its_key_not_refused() -> None:
    config = load_platform(STACK, raw_config(STACK, gcp_zone="us-central1-c"))
    (warning,) = config.warnings()
    assert warning.startswith(f"gcp:zone = 'us-central1-c': is not a zone the one listing found names for {MAX}: us-central1-b, us-east4-a, us-east4-b")
    assert catalog.MACHINE_ZONES_NAMED_SOURCE in warning and "partial and undated" in warning


@pytest.mark.parametrize(("pool_zone", "warned"), [("us-east4-a", []), ("us-east4-c", ["trainstack:gpuPool.zones[0] = 'us-east4-c'"])])
def test_a_pools_own_zone_is_checked_at_its_key_not_gcp_zone(pool_zone: str, warned: list[str]) -> None:
    config = load_platform(STACK, raw_config(STACK, gcp_region="us-east4", gcp_zone="us-east4-c", trainstack_gpuPool={"zones": [pool_zone]}))
    assert [w.split(": is not", 1)[0] for w in config.warnings()] == warned


@pytest.mark.parametrize("machine", ["a4x-highgpu-4g", "a4-highgpu-8g", "g4-standard-384"])
def test_machines_without_a_partial_listing_get_no_such_warning(machine: str) -> None:
    assert rules.machine_zone_named(machine, "us-central1-c") is None


def test_validate_exits_0_and_prints_the_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: trainstack\n")
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.m.yaml").write_text(yaml.safe_dump({"config": raw_config(STACK, gcp_zone="us-central1-a")}))
    monkeypatch.setenv("TRAINSTACK_ROOT", str(tmp_path))
    result = CliRunner().invoke(main, ["validate", "m"])
    assert result.exit_code == 0, result.output
    assert f"warning: gcp:zone = 'us-central1-a': is not a zone the one listing found names for {MAX}" in result.output
