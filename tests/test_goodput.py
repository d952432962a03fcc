"""Goodput report: event-log parsing, the figures, partial logs, the live path and the CLI."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner

from trainstack.app.metrics.cli import metrics
from trainstack.app.metrics.goodput import (
    Event,
    compute_goodput,
    fetch_entries,
    logging_filter,
    parse_events,
    read_goodput,
)
from trainstack.core.errors import ReportError

T0 = 1735689600  # 2025-01-01T00:00:00Z


def at(minutes: float) -> float:
    return T0 + minutes * 60


def entry(kind: str, minutes: float, step: float | None = None, rfc3339: bool = False) -> dict[str, Any]:
    """A Cloud Logging entry: time as RFC 3339 `timestamp`, or as epoch `event_time` in the payload."""
    payload: dict[str, Any] = {"event_type": kind}
    if step is not None:
        payload["step"] = step
    if rfc3339:
        stamp = datetime.fromtimestamp(at(minutes), UTC).strftime("%Y-%m-%dT%H:%M:%S.000000000Z")
        return {"logName": "projects/p/logs/js-goodput", "timestamp": stamp, "jsonPayload": payload}
    payload["event_time"] = at(minutes)
    return {"jsonPayload": payload}


# A job resumed from an earlier run's step-100 checkpoint, failing once and restarting.
RESTARTED_JOB = [
    entry("user_scheduled", 0, rfc3339=True),
    entry("job_started", 5),
    entry("checkpoint_loaded", 7, step=100),
    entry("checkpoint_saved", 22, step=120, rfc3339=True),
    entry("checkpoint_saved", 37, step=140),
    entry("job_terminated", 45),  # a node failed
    entry("job_started", 50, rfc3339=True),
    entry("checkpoint_loaded", 52, step=140),
    entry("checkpoint_saved", 67, step=160),
    entry("checkpoint_saved", 82, step=180),
    entry("checkpoint_saved", 97, step=200.0),  # Cloud Logging's JSON numbers are doubles
    entry("user_terminated", 150, rfc3339=True),
]


def check_restarted_job(report: Any) -> None:
    # 12 events: 2 job starts, 2 checkpoint loads (steps 100 and 140), 5 saves (120..200).
    assert (report.total_events, report.job_starts, report.checkpoints_loaded, report.checkpoints_saved) == (12, 2, 2, 5)
    assert report.total_runtime_h == pytest.approx(2.5)  # 00:00 -> 02:30
    assert (report.min_loaded_step, report.max_saved_step, report.step_progress) == (100, 200, 100)
    assert report.effective_time_h == pytest.approx(100 * 45 / 3600)  # 100 steps x 45 s = 1.25 h
    assert report.goodput_pct == pytest.approx(1.25 / 2.5 * 100)  # 50%
    assert report.warnings == ()


def test_restarted_job_from_a_json_array(tmp_path: Path) -> None:
    path = tmp_path / "events.json"
    path.write_text(json.dumps(RESTARTED_JOB, indent=2))
    check_restarted_job(read_goodput(path, 45))


def test_restarted_job_from_json_lines() -> None:
    events, warnings = parse_events("\n".join(json.dumps(e) for e in RESTARTED_JOB) + "\n\n")
    check_restarted_job(compute_goodput(events, 45, warnings))


def test_bare_payloads_and_epoch_strings_are_read() -> None:
    events, warnings = parse_events('{"event_type": "checkpoint_saved", "step": "40", "time": "1735689600.5"}')
    assert (events, warnings) == ([Event("checkpoint_saved", 1735689600.5, 40)], [])


def test_never_loaded_means_min_loaded_step_0() -> None:
    events = [
        Event("job_started", at(0), None),
        Event("checkpoint_saved", at(30), 50),
        Event("checkpoint_saved", at(60), 100),
        Event("job_terminated", at(120), None),
    ]
    report = compute_goodput(events, 36)
    # Progress 100 - 0 = 100 steps x 36 s = 1 h over 2 h of runtime = 50%.
    assert (report.min_loaded_step, report.step_progress) == (0, 100)
    assert report.goodput_pct == pytest.approx(50.0)


def test_a_start_without_a_load_is_flagged() -> None:
    events = [
        Event("job_started", at(0), None),
        Event("checkpoint_saved", at(30), 60),
        Event("job_started", at(40), None),
        Event("checkpoint_loaded", at(41), 60),
        Event("checkpoint_saved", at(60), 100),
    ]
    report = compute_goodput(events, 36)
    assert report.step_progress == 40
    assert report.warnings == ("1 job start(s) loaded no checkpoint; steps before the lowest loaded step (60) are not counted as progress",)


def test_garbled_partial_log_gives_warnings_and_partial_figures() -> None:
    lines = [
        "{oops",
        json.dumps({"jsonPayload": {"message": "hello"}}),
        json.dumps({"jsonPayload": {"event_type": "user_scheduled", "time": at(0)}}),
        json.dumps({"jsonPayload": {"event_type": "job_started"}, "timestamp": "not a time"}),
        json.dumps({"jsonPayload": {"event_type": "checkpoint_saved", "event_time": at(10)}}),
        json.dumps({"jsonPayload": {"event_type": "node_rebooted", "event_time": at(20)}}),
        json.dumps({"jsonPayload": {"event_type": "job_terminated", "event_time": at(30)}}),
    ]
    events, warnings = parse_events("\n".join(lines))
    report = compute_goodput(events, 45, warnings)
    assert (report.total_events, report.job_starts, report.checkpoints_saved) == (5, 1, 1)
    assert report.total_runtime_h == pytest.approx(0.5)
    assert report.min_loaded_step == 0
    assert (report.max_saved_step, report.step_progress, report.effective_time_h, report.goodput_pct) == (None, None, None, None)
    assert report.warnings == (
        "line 1: not JSON, skipped",
        "line 2: no event_type, skipped",
        "line 4: job_started has no readable time ('not a time'); runtime ignores it",
        "line 5: checkpoint_saved has no step (None)",
        "line 6: unknown event type 'node_rebooted'",
        "no checkpoint_saved event with a step; step progress unknown",
    )


@pytest.mark.parametrize(
    ("tail", "warning"),
    [(", ", "the JSON array is truncated after 2 entries"), (', {"jsonPayload": {"event_', "the JSON array is garbled at character")],
)
def test_truncated_array_keeps_the_entries_before_the_damage(tail: str, warning: str) -> None:
    text = "[" + ", ".join(json.dumps(e) for e in RESTARTED_JOB[:2]) + tail
    events, warnings = parse_events(text)
    assert [e.type for e in events] == ["user_scheduled", "job_started"]
    assert len(warnings) == 1 and warnings[0].startswith(warning)


def test_empty_log_and_no_times() -> None:
    events, warnings = parse_events("")
    report = compute_goodput(events, 45, warnings)
    assert report.total_events == 0 and report.total_runtime_h is None and report.goodput_pct is None
    assert report.warnings[0] == "no events found"
    one = compute_goodput([Event("checkpoint_saved", None, 10)], 45)
    assert one.step_progress == 10 and one.goodput_pct is None
    assert "fewer than two events with a time; total runtime unknown" in one.warnings
    with pytest.raises(ReportError, match="reference step time must be positive"):
        compute_goodput([], 0)


# ---------------------------------------------------------------------------------------------
# Live path


def test_logging_filter() -> None:
    since = datetime(2025, 1, 1, tzinfo=UTC)
    assert logging_filter("llama-rt", "my-proj", since) == ('logName="projects/my-proj/logs/llama-rt-goodput" AND timestamp>="2025-01-01T00:00:00+00:00"')


def test_fetch_without_google_cloud_logging_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "google.cloud.logging", None)
    with pytest.raises(ReportError, match="pip install google-cloud-logging"):
        fetch_entries("js", "p")


def fake_cloud_logging(entries: list[dict[str, Any]], calls: list[dict[str, Any]]) -> ModuleType:
    class Client:
        def __init__(self, project: str) -> None:
            calls.append({"project": project})

        def list_entries(self, filter_: str, order_by: str) -> list[SimpleNamespace]:
            calls.append({"filter": filter_, "order_by": order_by})
            return [SimpleNamespace(to_api_repr=lambda e=e: e) for e in entries]

    module = ModuleType("google.cloud.logging")
    vars(module).update(Client=Client, ASCENDING="timestamp asc")
    return module


# ---------------------------------------------------------------------------------------------
# CLI


def test_cli_json(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in RESTARTED_JOB))
    result = CliRunner().invoke(metrics, ["goodput", str(path), "--reference-step-time", "45", "--format", "json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["goodput_pct"] == pytest.approx(50.0)
    assert (out["step_progress"], out["job_starts"], out["warnings"]) == (100, 2, [])


def test_cli_table_shows_partial_figures_and_warnings(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in RESTARTED_JOB[:2]) + "\n{garbled\n")
    result = CliRunner().invoke(metrics, ["goodput", str(path), "--reference-step-time", "45"])
    assert result.exit_code == 0, result.output
    assert "goodput             n/a" in result.stdout
    assert "total runtime       0.08 h" in result.stdout
    assert "warning: line 3: not JSON, skipped" in result.stderr


def test_cli_live_path(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[dict[str, Any]] = []
    monkeypatch.setitem(sys.modules, "google.cloud.logging", fake_cloud_logging(RESTARTED_JOB, calls))
    args = ["goodput", "--jobset", "llama-rt", "--project", "my-proj", "--reference-step-time", "45", "--format", "json"]
    result = CliRunner().invoke(metrics, args)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["goodput_pct"] == pytest.approx(50.0)
    assert calls[0] == {"project": "my-proj"}
    assert calls[1]["filter"].startswith('logName="projects/my-proj/logs/llama-rt-goodput" AND timestamp>=')
    assert calls[1]["order_by"] == "timestamp asc"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["goodput", "absent.json", "--reference-step-time", "45"], "does not exist"),
        (["goodput", "--reference-step-time", "45"], "give either an EVENTS file or --jobset"),
        (["goodput", "--jobset", "js", "--reference-step-time", "45"], "--jobset needs --project"),
        (["goodput", "--jobset", "js", "--project", "p", "--reference-step-time", "45"], "pip install google-cloud-logging"),
    ],
)
def test_cli_errors_exit_2(args: list[str], message: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "google.cloud.logging", None)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(metrics, args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)
