"""`trainstack reap` against a fake gcloud (tests/fake_gcloud) run as a real process: the project
holds what rendered bench plans create, as the APIs list it, and the fake refuses what the APIs
refuse (a network in use, a connection Lustre still uses), so a wrong order fails here as it would
in GCP. Only expired ephemeral resources go, every kind, in dependency order; nothing in a dry run."""

from __future__ import annotations

import functools
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fake_gcloud import NOT_REAPED, FakeGcloud, as_listed
from trainstack.app.deploy.stacks import raw_stack_config
from trainstack.app.ops import bench, reap
from trainstack.app.ops.cli import reap_command
from trainstack.app.plan.plan import render

PROJECT = "my-training-project"  # the stack files' project
STARTED = datetime(2026, 11, 23, 2, 30, tzinfo=UTC)
NOW = STARTED + timedelta(hours=9)  # the benches below expired an hour ago
GOLDEN = Path(__file__).resolve().parent / "golden"
# One recipe per storage kind and per extra kind of resource: a bucket (a3ultra-405b), Filestore
# with an image build's registry and staging bucket (a3high-nemo-gpt5b), Lustre with private
# services access (a4-llama3-70b), an NFS disk (a2-gpt2-deepspeed), an A4X workload policy.
RECIPES = ["a3ultra-405b", "a3high-nemo-gpt5b", "a4-llama3-70b", "a2-gpt2-deepspeed", "a4x-llama3-70b"]


@functools.cache
def bench_plan(recipe: str, started: datetime = STARTED, token: str = "1a2b") -> list[dict[str, Any]]:
    """The resources of a bench stack of `recipe` started at `started` (read only)."""
    spec = bench.prepare(recipe, raw_stack_config(recipe), now=started, ttl_s=8 * 3600.0, timeout_s=3600.0, taken=[], token=token)
    return render(spec.stack, spec.raw).resources


def production(recipe: str) -> list[dict[str, Any]]:
    """The recipe's own stack (not ephemeral), from its golden plan."""
    return json.loads((GOLDEN / f"{recipe}.json").read_text())["resources"]


@pytest.fixture
def gcloud(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeGcloud:
    fake = FakeGcloud.install(tmp_path)
    for key, value in fake.env().items():
        monkeypatch.setenv(key, value)
    return fake


def run(yes: bool = True, now: datetime = NOW) -> tuple[int, list[str]]:
    lines: list[str] = []
    code = reap.reap(PROJECT, yes, now=now, echo=lines.append)
    return code, lines


@pytest.mark.parametrize("recipe", RECIPES)
def test_every_kind_an_expired_bench_left_goes_and_nothing_else(gcloud: FakeGcloud, recipe: str) -> None:
    expired = gcloud.deploy(bench_plan(recipe), PROJECT)
    kept = gcloud.deploy(production(recipe), PROJECT)
    assert expired and kept
    code, lines = run()
    assert code == 0, "\n".join(lines)
    assert not set(expired) & gcloud.names(), "everything the bench created is gone"
    assert gcloud.names() == set(kept), "the recipe's own stack is untouched"
    assert all(line.endswith("deleted") for line in lines[1:]), lines


def test_a_running_bench_is_left_alone(gcloud: FakeGcloud) -> None:
    running = gcloud.deploy(bench_plan("a4-llama3-70b", started=NOW - timedelta(hours=1), token="ffff"), PROJECT)
    code, lines = run()
    assert code == 0 and gcloud.names() == set(running)
    assert lines == [f"no expired ephemeral trainstack resources in {PROJECT}"]


def test_every_billable_type_of_the_shipped_benches_is_reaped_or_excused() -> None:
    """as_listed maps each reaped type and fails on any other: a new kind of resource in a bench
    plan must be reaped (and so mapped here) or excused in NOT_REAPED with its reason."""
    types = {r["type"] for recipe in RECIPES for r in bench_plan(recipe) if r["type"].startswith(("gcp:", "command:"))}
    reaped = {t for t in types if t not in NOT_REAPED}
    for recipe in RECIPES:
        for resource in bench_plan(recipe):
            if resource["type"] in reaped:
                assert as_listed(resource, PROJECT) is not None, resource["type"]
    assert set(NOT_REAPED) <= types, "an excuse for a type no bench creates is dead"


def test_the_order_is_dependency_safe_and_a_dry_run_deletes_nothing(gcloud: FakeGcloud) -> None:
    gcloud.deploy(bench_plan("a4-llama3-70b"), PROJECT)
    before = gcloud.project()
    code, lines = run(yes=False)
    assert code == 0 and gcloud.project() == before
    assert lines[0].startswith("would delete (dry run; pass --yes to delete)")
    kinds = [line.split()[0] for line in lines[1:]]
    assert kinds.index("GKE") < kinds.index("Managed") < kinds.index("private") < kinds.index("address") < kinds.index("subnetwork") < kinds.index("network")


def test_the_fake_refuses_what_the_apis_refuse(gcloud: FakeGcloud) -> None:
    """So that reaping out of order would fail: a network still in use, a connection Lustre uses."""
    gcloud.deploy(bench_plan("a4-llama3-70b"), PROJECT)
    api = reap.Gcloud(PROJECT)
    network = next(n["name"] for n in gcloud.project()["networks"] if n["name"].endswith("-bench-2611231030-6e35-net"))
    assert "is already being used by" in (api.delete(("compute", "networks", "delete", network)) or "")
    assert "still using this connection" in (api.delete(("services", "vpc-peerings", "delete", f"--network={network}", f"--service={reap.PSA_SERVICE}")) or "")
    assert gcloud.project()["networks"] and gcloud.project()["peerings"]


def test_a_failed_tier_leaves_what_needs_it_for_the_next_run(gcloud: FakeGcloud, monkeypatch: pytest.MonkeyPatch) -> None:
    names = gcloud.deploy(bench_plan("a4-llama3-70b"), PROJECT)
    lustre = next(n for n in names if n.endswith("-lustre"))
    monkeypatch.setenv("FAKE_GCLOUD_FAIL", lustre)
    code, lines = run()
    assert code == 1
    assert any(lustre in line and "FAILED: ERROR: (gcloud.lustre.instances.delete) INTERNAL" in line for line in lines)
    assert any("SKIPPED: data stores, disks, registries and workload policies must go first" in line for line in lines)
    project = gcloud.project()
    assert not project["clusters"] and project["peerings"] and project["networks"], "the cluster went; what Lustre needs stayed"
    monkeypatch.delenv("FAKE_GCLOUD_FAIL")
    assert run()[0] == 0 and not set(names) & gcloud.names()


def test_labels_decide_and_an_unreadable_expiry_is_left_with_a_note(gcloud: FakeGcloud) -> None:
    labels = {"managed-by": "trainstack", "trainstack-ephemeral": "true"}

    def disk(name: str, extra: dict[str, str]) -> dict[str, Any]:
        return {"name": name, "zone": "https://www.googleapis.com/compute/v1/projects/p/zones/us-central1-a", "labels": {**labels, **extra}, "users": []}

    project = gcloud.project()
    project["disks"] = [
        disk("garbled", {"trainstack-expires": "tomorrow"}),
        disk("expired", {"trainstack-expires": "2026-11-23t0630z"}),
        {**disk("not-ours", {"trainstack-expires": "2020-01-01t0000z"}), "labels": {"trainstack-ephemeral": "true", "trainstack-expires": "2020-01-01t0000z"}},
    ]
    project["networks"] = [{"name": "prod-bench-net"}, {"name": "x-bench-2611230630-abcd-net"}, {"name": "x-bench-2611231230-abcd-net"}]
    gcloud.save(project)
    code, lines = run()
    assert code == 0
    assert gcloud.names() == {"garbled", "not-ours", "prod-bench-net", "x-bench-2611231230-abcd-net"}
    assert any("left disk garbled (us-central1-a): label trainstack-expires='tomorrow' is not a time" in line for line in lines)


def test_names_carry_the_expiry() -> None:
    when = datetime(2026, 11, 23, 10, 30, tzinfo=UTC)
    prefix = reap.bench_prefix("a3ultra-405b", when, "1a2b")
    assert prefix == "a3ultra-405b-bench-2611231030-1a2b"
    assert reap.name_expires(prefix) == reap.name_expires(f"{prefix}-rdma-net") == when
    assert reap.name_expires("a3ultra-405b-net") is None and reap.name_expires(f"{prefix}x") is None


def test_a_failed_listing_is_an_error_naming_its_cause_and_fails_the_run(gcloud: FakeGcloud, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    denied = tmp_path / "denied" / "gcloud"
    denied.parent.mkdir()
    denied.write_text(
        '#!/bin/sh\nif [ "$1" = lustre ]; then echo "ERROR: (gcloud.lustre.instances.list) PERMISSION_DENIED: lustre.instances.list" >&2; exit 1; fi\n'
        f'exec "{gcloud.bin / "gcloud"}" "$@"\n'
    )
    denied.chmod(0o755)
    monkeypatch.setenv("PATH", f"{denied.parent}:{gcloud.env()['PATH']}")
    code, lines = run()
    assert code == 1
    assert lines[0] == f"error: could not list Managed Lustre instances in {PROJECT}: PERMISSION_DENIED: lustre.instances.list"


def test_without_a_gcloud_login_reap_fails_once_with_the_cause_never_nothing_to_reap(gcloud: FakeGcloud, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every listing fails alike: one error naming gcloud's cause and its remedy, on stderr, exit 1."""
    monkeypatch.setenv("FAKE_GCLOUD_NO_ACCOUNT", "1")
    result = CliRunner().invoke(reap_command, ["--project", PROJECT])
    assert result.exit_code == 1
    errors = result.stderr.splitlines()
    assert len(errors) == 2 and errors[0].startswith("error: could not list GKE clusters, Filestore instances, ")
    assert errors[0].endswith(": You do not currently have an active account selected. (run: gcloud auth login; or gcloud config set account ACCOUNT)")
    assert "nothing was reaped" in errors[1]
    assert "no expired" not in result.output


def test_reap_command(gcloud: FakeGcloud) -> None:
    """Against the real clock: one bench long expired, one far in the future."""
    labels = {"managed-by": "trainstack", "trainstack-ephemeral": "true"}
    project = gcloud.project()
    project["clusters"] = [
        {"name": "old", "location": "us-central1", "resourceLabels": {**labels, "trainstack-expires": "2020-01-01t0000z"}, "status": "RUNNING"},
        {"name": "future", "location": "us-central1", "resourceLabels": {**labels, "trainstack-expires": "2999-01-01t0000z"}, "status": "RUNNING"},
    ]
    gcloud.save(project)
    runner = CliRunner()
    dry = runner.invoke(reap_command, ["--project", PROJECT])
    assert dry.exit_code == 0 and "would delete" in dry.output and gcloud.names() == {"old", "future"}
    done = runner.invoke(reap_command, ["--project", PROJECT, "--yes"])
    assert done.exit_code == 0 and gcloud.names() == {"future"}
    assert ["container", "clusters", "delete", "old", "--location=us-central1", f"--project={PROJECT}", "--quiet"] in gcloud.calls()
    missing = runner.invoke(reap_command, [], env={"GOOGLE_CLOUD_PROJECT": ""})
    assert missing.exit_code == 2 and "--project" in missing.output


def test_reap_command_without_gcloud_fails_in_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    result = CliRunner().invoke(reap_command, ["--project", PROJECT])
    assert result.exit_code == 2
    assert result.output.strip() == "error: gcloud is not installed (reap lists and deletes with it): see https://cloud.google.com/sdk/docs/install"
