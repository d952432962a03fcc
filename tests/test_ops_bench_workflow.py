"""bench.yml reaps on a schedule of its own, and its default TTL outlives the job that made the
cluster, so a killed run's cluster is deleted within the hour after it expires."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from trainstack.app.ops.bench import DEPLOY_AND_TEARDOWN_S
from trainstack.config import duration_seconds

WORKFLOW = Path(__file__).resolve().parent.parent / ".github" / "workflows" / "bench.yml"


def bench_workflow() -> dict[str, Any]:
    document = yaml.safe_load(WORKFLOW.read_text())
    document["on"] = document.pop(True)  # YAML 1.1 reads a bare `on` as true
    return document


def test_an_hourly_schedule_only_reaps_and_waits_behind_no_bench() -> None:
    workflow = bench_workflow()
    [job] = workflow["jobs"].values()
    crons = [entry["cron"] for entry in workflow["on"]["schedule"]]
    [hourly] = [cron for cron in crons if cron.split()[1:] == ["*", "*", "*", "*"]]
    reap_run = f"github.event.schedule == '{hourly}'"
    assert reap_run in job["env"]["REAP_ONLY"] and reap_run in workflow["concurrency"]["group"]
    assert f"github.event.schedule != '{hourly}'" in job["runs-on"], "reaping needs no bench runner"
    bench_steps = [s for s in job["steps"] if "trainstack bench" in s.get("run", "") or s.get("uses", "").startswith(("pulumi/", "google-github-actions/setup-gcloud"))]
    assert len(bench_steps) == 3 and all(s["if"] == "env.REAP_ONLY != 'true'" for s in bench_steps)
    [reap] = [s for s in job["steps"] if "trainstack reap" in s.get("run", "")]
    assert reap["if"] == "always()" and "if" not in next(s for s in job["steps"] if s.get("uses", "").startswith("google-github-actions/auth"))


def test_the_default_ttl_outlives_the_job_and_the_bench_timeout() -> None:
    workflow = bench_workflow()
    [job] = workflow["jobs"].values()
    inputs = workflow["on"]["workflow_dispatch"]["inputs"]
    ttl, timeout = duration_seconds(inputs["ttl"]["default"]), duration_seconds(inputs["timeout"]["default"])
    assert f"'{inputs['ttl']['default']}'" in job["env"]["TTL"] and f"'{inputs['timeout']['default']}'" in job["env"]["TIMEOUT"]
    assert ttl >= job["timeout-minutes"] * 60 + 3600, "a margin over the job's limit: reap never races a teardown"
    assert ttl >= timeout + DEPLOY_AND_TEARDOWN_S, "what `trainstack bench` requires"
