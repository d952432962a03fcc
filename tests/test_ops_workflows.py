"""The GitHub workflows: valid YAML, and every `trainstack` command and option they call exists."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import click
import pytest
import yaml

from helpers import present
from trainstack.app.cli import main
from trainstack.app.deploy.stacks import raw_stack_config, stack_names
from trainstack.app.ops import bench_fleet
from trainstack.app.ops.bench import DEPLOY_AND_TEARDOWN_S
from trainstack.app.ops.cli import COMMANDS
from trainstack.core.rules import duration_seconds

ROOT = Path(__file__).resolve().parent.parent

WORKFLOWS = Path(__file__).resolve().parent.parent / ".github" / "workflows"


def load(name: str) -> dict[str, Any]:
    document = yaml.safe_load((WORKFLOWS / name).read_text())
    document["on"] = document.pop(True, document.get("on"))  # YAML 1.1 reads a bare `on` as true
    return document


def steps(workflow: dict[str, Any]) -> list[dict[str, Any]]:
    return [step for job in workflow["jobs"].values() for step in job["steps"]]


def uses(workflow: dict[str, Any], action: str) -> list[dict[str, Any]]:
    return [s for s in steps(workflow) if s.get("uses", "").split("@")[0] == action]


def cli_commands() -> dict[str, click.Command]:
    return {**main.commands, **{present(c.name): c for c in COMMANDS}}


def trainstack_calls(workflow: dict[str, Any]) -> list[list[str]]:
    calls = []
    for step in steps(workflow):
        for line in step.get("run", "").splitlines():
            match = re.search(r"\btrainstack (.*)", line)
            if match:
                calls.append(shlex.split(match.group(1).split(">")[0].split("||")[0]))
    return calls


@pytest.mark.parametrize("name", ["preview.yml", "bench.yml"])
def test_workflow_calls_only_existing_commands_and_options(name: str) -> None:
    calls = trainstack_calls(load(name))
    assert calls, f"{name} calls no trainstack command"
    commands = cli_commands()
    for call in calls:
        assert call[0] in commands, f"{name}: trainstack {call[0]} is not a command"
        known = {opt for param in commands[call[0]].params for opt in param.opts}
        unknown = [arg for arg in call[1:] if arg.startswith("--") and arg not in known]
        assert not unknown, f"{name}: trainstack {call[0]} has no option {unknown}"


def test_preview_runs_tests_diff_and_one_sticky_comment() -> None:
    workflow = load("preview.yml")
    assert "pull_request" in workflow["on"]
    offline = workflow["jobs"]["offline"]
    [checkout] = [s for s in offline["steps"] if s.get("uses", "").startswith("actions/checkout")]
    assert checkout["with"]["fetch-depth"] == 0
    runs = [s.get("run", "") for s in offline["steps"]]
    assert "pip install -e '.[test]'" in runs and "python -m pytest -n 2 tests" in runs
    assert any('trainstack diff --base "origin/$BASE_REF"' in r for r in runs)
    [comment] = uses(workflow, "marocchino/sticky-pull-request-comment")
    assert comment["with"]["path"] == "diff.md" and comment["with"]["header"]
    assert offline["permissions"]["pull-requests"] == "write"


def test_real_preview_is_gated_on_credentials_and_uses_the_pulumi_action() -> None:
    workflow = load("preview.yml")
    gate = workflow["jobs"]["credentials"]
    env = gate["steps"][-1]["env"]
    assert "secrets.PULUMI_ACCESS_TOKEN" in env["PULUMI_ACCESS_TOKEN"] and "vars.GCP_WORKLOAD_IDENTITY_PROVIDER" in env["WORKLOAD_IDENTITY_PROVIDER"]
    job = workflow["jobs"]["pulumi-preview"]
    assert job["needs"] == "credentials" and "needs.credentials.outputs.available == 'true'" in job["if"]
    assert "secrets" not in job["if"]
    assert job["permissions"]["id-token"] == "write"
    assert "matrix.stack" in job["name"] and "needs.credentials.outputs.platforms" in job["strategy"]["matrix"]["stack"]
    for auth in uses(workflow, "google-github-actions/auth"):
        assert set(auth["with"]) == {"workload_identity_provider", "service_account"}
    preview = [s for s in uses(workflow, "pulumi/actions") if s.get("with", {}).get("command") == "preview"]
    assert len(preview) == 2  # platforms, then workload stacks
    for step in preview:
        assert step["with"]["comment-on-pr"] is True and step["with"]["work-dir"] == "." and "matrix.stack" in step["with"]["stack-name"]


def test_workload_stacks_are_previewed_after_the_platforms_and_only_on_a_deployed_platform(tmp_path: Path) -> None:
    workflow = load("preview.yml")
    job = workflow["jobs"]["pulumi-preview-workloads"]
    assert job["needs"] == ["credentials", "pulumi-preview"]
    assert "needs.credentials.outputs.workloads" in job["strategy"]["matrix"]["stack"]
    check = next(step for step in job["steps"] if step.get("id") == "platform")
    assert "pulumi stack output platform --stack" in check["run"]
    (preview,) = [s for s in job["steps"] if s.get("with", {}).get("command") == "preview"]
    assert preview["if"] == "${{ steps.platform.outputs.ready == 'true' }}"
    # The credentials job's own script sorts this checkout's stacks into the two kinds.
    script = workflow["jobs"]["credentials"]["steps"][-1]["run"]
    program = textwrap.dedent(script.split("<<'PY'\n", 1)[1].rsplit("PY", 1)[0])
    done = subprocess.run([sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True, check=True)
    kinds = dict(line.split("=", 1) for line in done.stdout.splitlines())
    workloads = json.loads(kinds["workloads"])
    assert set(workloads) == {n for n in stack_names() if "trainstack:platform" in raw_stack_config(n)}
    assert set(json.loads(kinds["platforms"])) | set(workloads) == set(stack_names())


def test_bench_is_manual_and_scheduled_keeps_results_and_tears_down_in_a_job_of_its_own() -> None:
    workflow = load("bench.yml")
    inputs = workflow["on"]["workflow_dispatch"]["inputs"]
    # A bench deploys a whole recipe (the stacks with a workload and no platform of their own) or a
    # job on a fleet (with copies of the fleet and its workers).
    whole = {name for name in stack_names() if "trainstack:workload" in raw_stack_config(name) and "trainstack:platform" not in raw_stack_config(name)}
    recipes = whole | {name for name in stack_names() if bench_fleet.is_fleet_job(name, ROOT)}
    assert inputs["stack"]["type"] == "choice" and set(inputs["stack"]["options"]) == recipes
    assert {"ttl", "timeout"} <= set(inputs)
    assert workflow["on"]["schedule"]
    assert set(workflow["jobs"]) == {"bench", "teardown", "reap"}
    bench, teardown, reap = (workflow["jobs"][name] for name in ("bench", "teardown", "reap"))
    assert workflow["permissions"]["id-token"] == "write"
    assert any(not s.get("with", {}).get("command") for s in uses(workflow, "pulumi/actions")), "the Pulumi CLI is installed"
    [upload] = uses(workflow, "actions/upload-artifact")
    assert upload["if"].startswith("always()") and "result.json" in upload["with"]["path"]
    [run] = [s["run"] for s in bench["steps"] if "trainstack bench" in s.get("run", "")]
    assert '\nexec trainstack bench "$STACK" --name "$BENCH_STACK"' in "\n" + run, "the bench is the step's entry process, named from the run"
    # A job of its own, run whatever became of the bench (cancelled included), on the same stack name.
    assert teardown["needs"] == "bench" and teardown["if"].startswith("always() && ")
    assert teardown["env"]["BENCH_STACK"] == bench["env"]["BENCH_STACK"] and "github.run_id" in bench["env"]["BENCH_STACK"]
    [teardown_run] = [s["run"] for s in teardown["steps"] if "trainstack" in s.get("run", "")]
    assert teardown_run == 'exec trainstack bench "$STACK" --teardown "$BENCH_STACK"', "STACK: a fleet job's other copies are torn down too"
    assert teardown["env"]["STACK"] == bench["env"]["STACK"]
    assert {"PULUMI_ACCESS_TOKEN"} <= set(teardown["env"]) and len(uses({"jobs": {"t": teardown}}, "google-github-actions/auth")) == 1
    assert [s["with"]["install_components"] for s in uses({"jobs": {"t": teardown}}, "google-github-actions/setup-gcloud")] == [
        "gke-gcloud-auth-plugin,kubectl"
    ], "destroying Kubernetes objects needs the auth plugin"
    assert reap["needs"] == "teardown" and reap["if"] == "always()"
    [reap_step] = [s for s in reap["steps"] if "trainstack reap" in s.get("run", "")]
    assert "--yes" in reap_step["run"] and uses({"jobs": {"r": reap}}, "google-github-actions/setup-gcloud"), "reap runs gcloud"


def test_the_bench_step_hears_the_runners_signals(tmp_path: Path) -> None:
    """The runner signals a cancelled step's entry process alone (actions/runner@258d6c8
    src/Runner.Sdk/ProcessInvoker.cs:832): with `exec`, that is trainstack, not the shell."""
    [run] = [s["run"] for s in load("bench.yml")["jobs"]["bench"]["steps"] if "trainstack bench" in s.get("run", "")]
    heard = tmp_path / "heard"
    fake = tmp_path / "trainstack"
    fake.write_text(
        f"#!{sys.executable}\nimport signal, sys, time\nfrom pathlib import Path\n"
        f"def heard(signum, frame):\n    Path({str(heard)!r}).write_text(signal.Signals(signum).name)\n    sys.exit(130)\n"
        "signal.signal(signal.SIGINT, heard)\nPath(sys.argv[0] + '.ready').touch()\ntime.sleep(5)\n"
    )
    fake.chmod(0o755)
    script = tmp_path / "step.sh"
    script.write_text(run)
    env = {"PATH": f"{tmp_path}:/usr/bin:/bin", "STACK": "s", "BENCH_STACK": "b", "TTL": "8h", "TIMEOUT": "4h", "GCP_PROJECT": "p", "BENCH_SETS": ""}
    step = subprocess.Popen(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], env=env)  # GitHub's `bash` shell
    ready = tmp_path / "trainstack.ready"
    for _ in range(2000):
        if ready.exists():
            break
        time.sleep(0.01)
    os.kill(step.pid, signal.SIGINT)
    assert step.wait(30) == 130 and heard.read_text() == "SIGINT"


def test_an_hourly_schedule_only_reaps_and_waits_behind_no_bench() -> None:
    workflow = load("bench.yml")
    [hourly] = [entry["cron"] for entry in workflow["on"]["schedule"] if entry["cron"].split()[1:] == ["*", "*", "*", "*"]]
    assert f"github.event.schedule == '{hourly}'" in workflow["concurrency"]["group"], "its own concurrency group"
    for name in ("bench", "teardown"):
        assert f"github.event.schedule != '{hourly}'" in workflow["jobs"][name]["if"]
    assert workflow["jobs"]["reap"]["if"] == "always()" and workflow["jobs"]["reap"]["runs-on"] == "ubuntu-latest"


def test_the_default_ttl_outlives_the_bench_and_its_teardown() -> None:
    """Reap never deletes what a run may still be tearing down."""
    workflow = load("bench.yml")
    bench, teardown = workflow["jobs"]["bench"], workflow["jobs"]["teardown"]
    inputs = workflow["on"]["workflow_dispatch"]["inputs"]
    ttl, timeout = duration_seconds(inputs["ttl"]["default"]), duration_seconds(inputs["timeout"]["default"])
    assert f"'{inputs['ttl']['default']}'" in bench["env"]["TTL"] and f"'{inputs['timeout']['default']}'" in bench["env"]["TIMEOUT"]
    assert ttl >= (bench["timeout-minutes"] + teardown["timeout-minutes"]) * 60 + 3600, "a margin of an hour over both jobs' limits"
    assert ttl >= timeout + DEPLOY_AND_TEARDOWN_S, "what `trainstack bench` requires"
