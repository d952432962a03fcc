"""The CLI: plan writes its files and summary; bad invocations exit 2 with one clear message."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from trainstack.app.cli import main


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
