"""`trainstack reap`: only expired, fully labelled ephemeral clusters; nothing in a dry run."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from click.testing import CliRunner
from google.cloud import container_v1

from trainstack.app.ops import reap
from trainstack.app.ops.cli import reap_command

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
PROJECT = "bench-project"
EPHEMERAL = {"managed-by": "trainstack", "trainstack-ephemeral": "true"}


def cluster(name: str, labels: dict[str, str], status: Any = container_v1.Cluster.Status.RUNNING, location: str = "us-central1") -> container_v1.Cluster:
    return container_v1.Cluster(name=name, location=location, resource_labels=labels, status=status)


class FakeClusterManager:
    """The two ClusterManagerClient calls reap makes, over a fixed listing."""

    def __init__(self, clusters: list[container_v1.Cluster], missing_zones: list[str] = (), refuse: set[str] = frozenset()):
        self.response = container_v1.ListClustersResponse(clusters=clusters, missing_zones=list(missing_zones))
        self.refuse = refuse
        self.listed: list[str] = []
        self.deleted: list[str] = []

    def list_clusters(self, *, parent: str) -> container_v1.ListClustersResponse:
        self.listed.append(parent)
        return self.response

    def delete_cluster(self, *, name: str) -> container_v1.Operation:
        if name.rsplit("/", 1)[-1] in self.refuse:
            raise PermissionError("403 container.clusters.delete denied")
        self.deleted.append(name)
        return container_v1.Operation(name=f"operation-{len(self.deleted)}")


def fleet() -> FakeClusterManager:
    return FakeClusterManager(
        [
            cluster("expired", {**EPHEMERAL, "trainstack-expires": "2026-11-23t0630z", "trainstack-stack": "a3ultra-405b-bench-1"}),
            cluster("expired-zonal", {**EPHEMERAL, "trainstack-expires": "2026-11-22t2359z"}, location="us-east5-a"),
            cluster("running-bench", {**EPHEMERAL, "trainstack-expires": "2026-11-23t1830z"}),
            cluster("production", {"managed-by": "trainstack", "trainstack-stack": "a3ultra-405b"}),
            cluster("not-ours", {"trainstack-ephemeral": "true", "trainstack-expires": "2020-01-01t0000z"}),
            cluster("unlabelled", {}),
            cluster("garbled", {**EPHEMERAL, "trainstack-expires": "tomorrow"}),
            cluster("going", {**EPHEMERAL, "trainstack-expires": "2026-11-23t0000z"}, status=container_v1.Cluster.Status.STOPPING),
        ],
        missing_zones=["asia-east1-a"],
    )


def test_expiry_labels_round_trip() -> None:
    assert reap.expires_label(datetime(2026, 11, 23, 6, 30, 59, tzinfo=UTC)) == "2026-11-23t0630z"
    assert reap.parse_expires("2026-11-23t0630z") == datetime(2026, 11, 23, 6, 30, tzinfo=UTC)
    assert reap.parse_expires("2026-11-23") is None


def test_survey_finds_only_expired_labelled_clusters() -> None:
    client = fleet()
    found = reap.survey(client, PROJECT, NOW)
    assert client.listed == ["projects/bench-project/locations/-"]
    assert [(c.name, c.location, c.stack) for c in found.expired] == [
        ("expired", "us-central1", "a3ultra-405b-bench-1"),
        ("expired-zonal", "us-east5-a", ""),
    ]
    assert any("garbled" in note and "'tomorrow'" in note for note in found.notes)
    assert any("going" in note and "already being deleted" in note for note in found.notes)
    assert any("asia-east1-a" in note for note in found.notes)


def test_dry_run_deletes_nothing() -> None:
    client, lines = fleet(), []
    assert reap.reap(PROJECT, False, client, now=NOW, echo=lines.append) == 0
    assert client.deleted == []
    assert "would delete (dry run; pass --yes to delete) 2 expired ephemeral cluster(s) in bench-project:" in lines
    assert sum("expired 2026-11-2" in line for line in lines) == 2


def test_yes_deletes_exactly_the_expired_ones() -> None:
    client, lines = fleet(), []
    assert reap.reap(PROJECT, True, client, now=NOW, echo=lines.append) == 0
    assert client.deleted == [
        "projects/bench-project/locations/us-central1/clusters/expired",
        "projects/bench-project/locations/us-east5-a/clusters/expired-zonal",
    ]
    assert any("deletion started (operation-1)" in line for line in lines)


def test_a_refused_deletion_does_not_stop_the_others_and_fails_the_run() -> None:
    client = fleet()
    client.refuse = {"expired"}
    lines: list[str] = []
    assert reap.reap(PROJECT, True, client, now=NOW, echo=lines.append) == 1
    assert client.deleted == ["projects/bench-project/locations/us-east5-a/clusters/expired-zonal"]
    assert any("expired " in line and "FAILED: 403" in line for line in lines)


def test_nothing_expired_says_so() -> None:
    lines: list[str] = []
    assert reap.reap(PROJECT, True, FakeClusterManager([cluster("unlabelled", {})]), now=NOW, echo=lines.append) == 0
    assert lines == ["no expired ephemeral trainstack clusters in bench-project"]


def test_reap_command(monkeypatch: pytest.MonkeyPatch) -> None:
    # The command reaps against the real clock: one cluster long expired, one far in the future.
    client = FakeClusterManager(
        [
            cluster("old", {**EPHEMERAL, "trainstack-expires": "2020-01-01t0000z"}),
            cluster("future", {**EPHEMERAL, "trainstack-expires": "2999-01-01t0000z"}),
        ]
    )
    monkeypatch.setattr(reap, "default_client", lambda: client)
    runner = CliRunner()
    dry = runner.invoke(reap_command, ["--project", PROJECT])
    assert dry.exit_code == 0 and "would delete" in dry.output and client.deleted == []
    done = runner.invoke(reap_command, ["--project", PROJECT, "--yes"])
    assert done.exit_code == 0 and client.deleted == ["projects/bench-project/locations/us-central1/clusters/old"]
    missing = runner.invoke(reap_command, [], env={"GOOGLE_CLOUD_PROJECT": ""})
    assert missing.exit_code == 2 and "--project" in missing.output


def test_reap_command_reports_an_api_failure_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    class Denied:
        def list_clusters(self, *, parent: str) -> Any:
            raise PermissionError("403 Kubernetes Engine API has not been used in project bench-project")

    monkeypatch.setattr(reap, "default_client", Denied)
    result = CliRunner().invoke(reap_command, ["--project", PROJECT])
    assert result.exit_code == 1
    assert result.output.strip() == "error: listing the clusters of bench-project failed: 403 Kubernetes Engine API has not been used in project bench-project"
