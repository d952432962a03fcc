"""The CLI: plan writes its files and summary; bad invocations exit 2 with one clear message."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from helpers import merge
from trainstack.app.cli import main
from trainstack.app.deploy.stacks import raw_stack_config, stack_names


def test_stacks_lists_every_stack() -> None:
    result = CliRunner().invoke(main, ["stacks"])
    assert result.exit_code == 0 and "a3ultra-405b" in result.output.split()


def test_plan_writes_plan_and_manifests(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["plan", "a3ultra-405b", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    plan = json.loads((tmp_path / "plan.json").read_text())
    assert plan["stack"] == "a3ultra-405b" and plan["resources"]
    assert list((tmp_path / "manifests").glob("*.yaml"))
    assert "GPUs" in result.output and "432" in result.output
    assert "est. cost per hour" in result.output


def test_plan_json_summary(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["plan", "a3ultra-405b", "--out", str(tmp_path), "--format", "json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)["summary"]
    assert summary["cost"]["gpus"] == 432 and summary["cost"]["estimate"] is True


def test_plan_without_stack_or_with_unknown_stack_exits_2() -> None:
    runner = CliRunner()
    none = runner.invoke(main, ["plan"])
    assert none.exit_code == 2 and "name a stack" in none.output and "a3ultra-405b" in none.output
    unknown = runner.invoke(main, ["plan", "nope"])
    assert unknown.exit_code == 2 and "unknown stack 'nope'" in unknown.output


@pytest.mark.parametrize(
    ("stack", "workload", "expected"),
    [
        ("a3mega-gpt3-175b", {"model": "gpt3-999b"}, "trainstack:workload.model = 'gpt3-999b': the nemo-megatron launcher has no recipe for it"),
        ("a3high-litgpt", {"precision": "fp8"}, "trainstack:workload.precision = 'fp8': LitGPT trains in bf16, fp16, fp32"),
    ],
)
def test_validate_runs_the_launchers_rules_and_exits_2_naming_the_key(tmp_path: Path, stack: str, workload: dict, expected: str) -> None:
    """A real `trainstack validate` process on a stack file of its own: the framework's rules are
    checked with every other rule, before any engine, and reported without a traceback."""
    (tmp_path / "stacks").mkdir()
    raw = merge(raw_stack_config(stack), {"trainstack:workload": workload})
    (tmp_path / "stacks" / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump({"config": raw}))
    for context in ("images/nemo-24.07", "images/litgpt"):  # build contexts the stacks name
        (tmp_path / context).mkdir(parents=True)
        (tmp_path / context / "Dockerfile").write_text("FROM scratch\n")
    env = {**os.environ, "TRAINSTACK_ROOT": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "trainstack.app.cli", "validate", stack], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert expected in done.stderr and "Traceback" not in done.stderr


def test_the_command_freezes_its_objects_at_exit_once() -> None:
    """Exiting skips the collector's walk over everything a plan made (app/cli.py `main`): the
    objects are frozen at exit, once however often the group ran in the process."""
    code = (
        "import atexit, gc\n"
        "calls = []\n"
        "freeze = gc.freeze\n"
        "gc.freeze = lambda: calls.append(freeze())\n"
        "from trainstack.app.cli import main\n"
        "for _ in range(2):\n"
        "    main(['stacks'], standalone_mode=False)\n"
        "before = len(calls)\n"
        "atexit._run_exitfuncs()\n"
        "print(before, len(calls), gc.get_freeze_count() > 0)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.split()
    assert out[-3:] == ["0", "1", "True"]


def test_the_command_tunes_the_collector_before_the_providers_load() -> None:
    """`trainstack` (the console script) enters through app/launch.py, which loads nothing heavy
    itself and sets the collector's thresholds before the command line imports the provider SDKs."""
    from importlib.metadata import entry_points

    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "trainstack"]
    code = (
        "import gc, sys\n"
        f"from {script.module} import {script.attr} as main, THRESHOLDS\n"
        "loaded = 'pulumi' in sys.modules\n"
        "sys.argv = ['trainstack', 'validate', 'no-such-stack']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(loaded, gc.get_threshold() == THRESHOLDS, 'pulumi' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.split()
    assert out[-3:] == ["False", "True", "True"]


def test_version_is_the_installed_distributions() -> None:
    from importlib.metadata import version

    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0 and result.output.split()[-1] == version("trainstack")


def two_bad_one_good(root: Path) -> None:
    """A project with `good` (a3ultra-405b) and two stacks each wrong in its own way."""
    (root / "stacks").mkdir()
    good = raw_stack_config("a3ultra-405b")
    bad_nodes = merge(good, {"trainstack:workload": {"nodes": 99}})
    bad_zone = merge(good, {"gcp:zone": "europe-west4-a"})
    for name, raw in (("good", good), ("bad-nodes", bad_nodes), ("bad-zone", bad_zone)):
        (root / "stacks" / f"Pulumi.{name}.yaml").write_text(yaml.safe_dump({"config": raw}))


@pytest.mark.parametrize("command", [["validate", "--all"], ["plan", "--all"]])
def test_every_stack_is_tried_and_every_failure_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]) -> None:
    two_bad_one_good(tmp_path)
    monkeypatch.setenv("TRAINSTACK_ROOT", str(tmp_path))
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 2
    assert "2 stack(s) failed" in result.output
    assert "stack 'bad-nodes'" in result.output and "stack 'bad-zone'" in result.output
    assert "trainstack:workload.nodes = 99" in result.output and "gcp:zone" in result.output
    assert "good" in result.output.split("2 stack(s) failed")[0]
    if command[0] == "plan":
        assert (tmp_path / "build" / "plans" / "good" / "plan.json").exists()


def test_validate_json_reports_each_stack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    two_bad_one_good(tmp_path)
    monkeypatch.setenv("TRAINSTACK_ROOT", str(tmp_path))
    result = CliRunner().invoke(main, ["validate", "--all", "--format", "json"])
    assert result.exit_code == 2
    reports = json.loads(result.stdout)
    assert {name: r["valid"] for name, r in reports.items()} == {"bad-nodes": False, "bad-zone": False, "good": True}
    assert reports["good"]["gpus"] == 432 and reports["good"]["queue"] == "a3-ultra"
    (problem,) = reports["bad-nodes"]["problems"]
    assert problem["key"] == "trainstack:workload.nodes" and problem["value"] == 99 and "exceeds" in problem["rule"] and problem["fix"] is None


def test_validate_json_gives_each_problem_as_an_object_with_its_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "stacks").mkdir()
    raw = merge(raw_stack_config("a3ultra-405b"), {"trainstack:gpuPool": {"nodeCont": 3}})
    (tmp_path / "stacks" / "Pulumi.typo.yaml").write_text(yaml.safe_dump({"config": raw}))
    (tmp_path / "stacks" / "Pulumi.broken.yaml").write_text("config: [")
    monkeypatch.setenv("TRAINSTACK_ROOT", str(tmp_path))
    result = CliRunner().invoke(main, ["validate", "typo", "broken", "--format", "json"])
    assert result.exit_code == 2
    reports = json.loads(result.stdout)
    assert reports["typo"]["problems"] == [
        {"key": "trainstack:gpuPool.nodeCont", "value": 3, "rule": "unknown key", "fix": "did you mean trainstack:gpuPool.nodeCount?"}
    ]
    (unreadable,) = reports["broken"]["problems"]
    assert unreadable["key"] == "" and "not valid YAML" in unreadable["rule"]


def test_stacks_json_lists_the_same_stacks() -> None:
    runner = CliRunner()
    assert json.loads(runner.invoke(main, ["stacks", "--format", "json"]).output) == runner.invoke(main, ["stacks"]).output.split()


def test_stacks_outside_a_project_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRAINSTACK_ROOT", str(tmp_path))
    result = CliRunner().invoke(main, ["stacks"])
    assert result.exit_code == 2 and f"no {tmp_path / 'stacks'}" in result.output


def test_the_command_line_loads_no_provider_sdk_until_a_command_needs_one() -> None:
    """`--help`, `stacks` and every command's help start without pulumi, the providers or the
    config models (benchmarks/start_time.py measures the time)."""
    code = (
        "import sys\n"
        "from trainstack.app.cli import main\n"
        "for argv in (['--help'], ['stacks'], ['metrics', '--help'], ['up', '--help'], ['reap', '--help']):\n"
        "    try:\n"
        "        main(argv)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print(sorted(m for m in ('pulumi', 'pulumi_gcp', 'pydantic', 'trainstack.infra.stack') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout


def test_a_key_written_twice_in_a_stack_file_is_refused_with_both_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PyYAML keeps the last of two equal keys; the Pulumi CLI refuses them, and so does trainstack."""
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.twice.yaml").write_text(
        "config:\n  trainstack:gpuPool:\n    nodeCount: 2\n    machineType: a3-megagpu-8g\n    nodeCount: 3\n"
    )
    monkeypatch.setenv("TRAINSTACK_ROOT", str(tmp_path))
    result = CliRunner().invoke(main, ["validate", "twice"])
    assert result.exit_code == 2 and "line 5, column 5" in result.output and "key 'nodeCount' is written twice (lines 3 and 5)" in result.output


def test_validate_warns_about_each_placeholder_of_the_shipped_stacks() -> None:
    """Every shipped stack's project, reservation and documentation CIDR is named at its key; a
    reservation name the stacks use that the list misses would go unwarned."""
    from trainstack.app.deploy.placeholders import RESERVATIONS

    shipped = {r["name"] for s in stack_names() for r in _reservations(raw_stack_config(s))}
    assert shipped <= RESERVATIONS and shipped
    result = CliRunner().invoke(main, ["validate", "a3ultra-405b"])
    assert result.exit_code == 0, result.output
    assert "warning: gcp:project = 'my-training-project': is the shipped examples' placeholder project; set your own project id" in result.output
    assert "warning: trainstack:gpuPool.reservation.name = 'a3-ultra-reservation': is a shipped example's reservation name" in result.output
    assert "warning: trainstack:cluster.authorizedNetworks[0].cidrBlock = '203.0.113.0/24': is an address range reserved for documentation" in result.output


def _reservations(value: object) -> list[dict]:
    if isinstance(value, dict):
        own = [value["reservation"]] if isinstance(value.get("reservation"), dict) and "name" in value["reservation"] else []
        return own + [r for v in value.values() for r in _reservations(v)]
    return [r for v in value for r in _reservations(v)] if isinstance(value, list) else []


def test_many_stacks_show_progress_on_a_terminal_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    two_bad_one_good(tmp_path)
    monkeypatch.setenv("TRAINSTACK_ROOT", str(tmp_path))
    quiet = CliRunner().invoke(main, ["validate", "--all"])
    assert "validating" not in quiet.output
    monkeypatch.setattr("trainstack.app.console.terminal", lambda: True)
    shown = CliRunner().invoke(main, ["validate", "--all"])
    assert "\rvalidating 1/3: bad-nodes" in shown.stderr.replace("\033[K", "") and "validating 3/3: good" in shown.stderr
