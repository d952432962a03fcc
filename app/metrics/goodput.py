"""Goodput of a supervised training job, from its goodput event log.

The resiliency library writes one Cloud Logging entry per event to the log `<jobset>-goodput`.
Input is those entries as a JSON array or as JSON Lines (one entry a line), e.g. the output
of `gcloud logging read --format=json`. An entry carries its event in `jsonPayload` (an
entry without `jsonPayload` is read as the payload itself):

    {"timestamp": "2025-01-01T00:00:00.123456789Z",
     "jsonPayload": {"event_type": "checkpoint_saved", "step": 40}}
    {"jsonPayload": {"event_type": "job_started", "event_time": 1735689600.5}}

- `event_type`: user_scheduled, job_started, checkpoint_loaded, checkpoint_saved,
  user_terminated or job_terminated.
- `step`: the checkpoint's step (checkpoint events).
- time: the first of `event_time`, `time`, `timestamp` found in the payload, then in the
  entry; epoch seconds (a number or numeric string) or RFC 3339 (UTC if no offset).

Definitions (the upstream resiliency-metrics calculator's):

- total events: entries with an `event_type`; job starts, checkpoints loaded and checkpoints
  saved: events of those types.
- total runtime: last event time - first event time, in hours.
- min loaded step: the lowest step a checkpoint was loaded from; 0 when no checkpoint was
  ever loaded (the job started from scratch).
- max saved step: the highest step a checkpoint was saved at.
- step progress: max saved step - min loaded step.
- effective computation time: step progress x the reference step time (the step time of an
  undisturbed run, supplied by the user), in hours.
- goodput: effective computation time / total runtime x 100 (%).

A garbled or partial log never raises: unreadable entries and missing fields become
`warnings`, and a figure that cannot be computed is None.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from trainstack.core.errors import ReportError

EVENT_TYPES = frozenset({"user_scheduled", "job_started", "checkpoint_loaded", "checkpoint_saved", "user_terminated", "job_terminated"})
_TIME_KEYS = ("event_time", "time", "timestamp")
_DECODER = json.JSONDecoder()
_SEPARATORS = frozenset(" \t\r\n,")  # JSON's whitespace, and the comma between items


@dataclass(frozen=True)
class Event:
    """One goodput event: its type, epoch seconds (None if unknown) and step (None if none)."""

    type: str
    time: float | None
    step: int | None


@dataclass(frozen=True)
class GoodputReport:
    """The figures defined in the module docstring; None where the log cannot give them."""

    reference_step_time_s: float
    total_events: int
    job_starts: int
    checkpoints_loaded: int
    checkpoints_saved: int
    total_runtime_h: float | None
    min_loaded_step: int | None
    max_saved_step: int | None
    step_progress: int | None
    effective_time_h: float | None
    goodput_pct: float | None
    warnings: tuple[str, ...]


# ---------------------------------------------------------------------------------------------
# Reading


def _array_items(text: str) -> tuple[list[Any], list[str]]:
    """Items of a JSON array, reading as far as it is intact."""
    items: list[Any] = []
    pos = text.index("[") + 1
    while True:
        while pos < len(text) and text[pos] in _SEPARATORS:
            pos += 1
        if pos >= len(text):
            return items, [f"the JSON array is truncated after {len(items)} entries"]
        if text[pos] == "]":
            return items, []
        try:
            item, pos = _DECODER.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            return items, [f"the JSON array is garbled at character {exc.pos}; read the {len(items)} entries before it"]
        items.append(item)


def _lines(text: str) -> tuple[list[tuple[str, Any]], list[str]]:
    items: list[tuple[str, Any]] = []
    warnings: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                items.append((f"line {number}", json.loads(line)))
            except json.JSONDecodeError:
                warnings.append(f"line {number}: not JSON, skipped")
    return items, warnings


def _epoch(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, str):
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def _step(value: Any) -> int | None:
    """An integer step; Cloud Logging stores JSON numbers as doubles, so 140.0 is step 140."""
    if isinstance(value, int | float) and not isinstance(value, bool) and float(value).is_integer():
        return int(value)
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def _event(entry: Any, where: str, warnings: list[str]) -> Event | None:
    payload = entry.get("jsonPayload", entry) if isinstance(entry, dict) else None
    if not isinstance(payload, dict) or not isinstance(payload.get("event_type"), str):
        warnings.append(f"{where}: no event_type, skipped")
        return None
    kind = payload["event_type"]
    if kind not in EVENT_TYPES:
        warnings.append(f"{where}: unknown event type {kind!r}")
    raw_time = next((s[k] for s in (payload, entry) for k in _TIME_KEYS if k in s), None)
    time = _epoch(raw_time)
    if time is None:
        warnings.append(f"{where}: {kind} has no readable time ({raw_time!r}); runtime ignores it")
    step = _step(payload.get("step"))
    if step is None and kind in ("checkpoint_loaded", "checkpoint_saved"):
        warnings.append(f"{where}: {kind} has no step ({payload.get('step')!r})")
    return Event(kind, time, step)


def _events(labelled: Iterable[tuple[str, Any]]) -> tuple[list[Event], list[str]]:
    events: list[Event] = []
    warnings: list[str] = []
    for where, entry in labelled:
        if event := _event(entry, where, warnings):
            events.append(event)
    return events, warnings


def events_from_entries(entries: Iterable[Any]) -> tuple[list[Event], list[str]]:
    """Events of Cloud Logging entries (as dicts), with a warning for each unusable one."""
    return _events((f"entry {i}", entry) for i, entry in enumerate(entries, 1))


def parse_events(text: str) -> tuple[list[Event], list[str]]:
    """Events of a JSON array or JSON Lines log, with warnings for what could not be read."""
    if text.lstrip().startswith("["):
        items, warnings = _array_items(text)
        labelled = [(f"entry {i}", item) for i, item in enumerate(items, 1)]
    else:
        labelled, warnings = _lines(text)
    events, entry_warnings = _events(labelled)
    return events, warnings + entry_warnings


# ---------------------------------------------------------------------------------------------
# Figures


def compute_goodput(events: Sequence[Event], reference_step_time_s: float, warnings: Sequence[str] = ()) -> GoodputReport:
    """The goodput figures of `events`; `warnings` (from reading) are carried into the report."""
    if reference_step_time_s <= 0:
        raise ReportError(f"the reference step time must be positive, not {reference_step_time_s}")
    notes = list(warnings)
    if not events:
        notes.append("no events found")

    def of(kind: str) -> list[Event]:
        return [e for e in events if e.type == kind]

    starts, loads, saves = of("job_started"), of("checkpoint_loaded"), of("checkpoint_saved")
    times = [e.time for e in events if e.time is not None]
    runtime_h = (max(times) - min(times)) / 3600 if len(times) >= 2 else None
    if runtime_h is None and events:
        notes.append("fewer than two events with a time; total runtime unknown")

    loaded_steps = [e.step for e in loads if e.step is not None]
    saved_steps = [e.step for e in saves if e.step is not None]
    min_loaded = min(loaded_steps) if loaded_steps else (0 if not loads else None)
    max_saved = max(saved_steps) if saved_steps else None
    if max_saved is None:
        notes.append("no checkpoint_saved event with a step; step progress unknown")
    if loads and len(starts) > len(loads):
        notes.append(
            f"{len(starts) - len(loads)} job start(s) loaded no checkpoint; steps before the lowest loaded step ({min_loaded}) are not counted as progress"
        )

    progress = max_saved - min_loaded if max_saved is not None and min_loaded is not None else None
    if progress is not None and progress < 0:
        notes.append(f"max saved step {max_saved} is below min loaded step {min_loaded}; the log looks incomplete")
        progress = None
    effective_h = progress * reference_step_time_s / 3600 if progress is not None else None
    goodput = None
    if effective_h is not None and runtime_h:
        goodput = effective_h / runtime_h * 100
        if goodput > 100:
            notes.append(f"goodput {goodput:.1f}% exceeds 100%; is the reference step time too long?")
    elif effective_h is not None:
        notes.append("total runtime is unknown or zero; goodput cannot be computed")

    return GoodputReport(
        reference_step_time_s=reference_step_time_s,
        total_events=len(events),
        job_starts=len(starts),
        checkpoints_loaded=len(loads),
        checkpoints_saved=len(saves),
        total_runtime_h=runtime_h,
        min_loaded_step=min_loaded,
        max_saved_step=max_saved,
        step_progress=progress,
        effective_time_h=effective_h,
        goodput_pct=goodput,
        warnings=tuple(notes),
    )


def read_goodput(path: Path, reference_step_time_s: float) -> GoodputReport:
    """The goodput report of the event log file at `path` (ReportError only if unreadable)."""
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        raise ReportError(f"cannot read {path}: {exc.strerror or exc}") from None
    events, warnings = parse_events(text)
    return compute_goodput(events, reference_step_time_s, warnings)


# ---------------------------------------------------------------------------------------------
# Live from Cloud Logging


def logging_filter(jobset: str, project: str, since: datetime) -> str:
    """The Cloud Logging filter selecting log `<jobset>-goodput` from `since` on."""
    return f'logName="projects/{project}/logs/{jobset}-goodput" AND timestamp>="{since.astimezone(UTC).isoformat()}"'


def fetch_entries(jobset: str, project: str, lookback_days: float = 7.0) -> list[dict[str, Any]]:
    """Entries of `<jobset>-goodput` over the last `lookback_days`, oldest first (needs google-cloud-logging)."""
    try:
        from google.cloud import logging as cloud_logging
    except ImportError:
        raise ReportError(
            "reading events live needs google-cloud-logging: pip install google-cloud-logging "
            "(or export the log with `gcloud logging read --format=json` and pass the file)"
        ) from None
    since = datetime.now(UTC) - timedelta(days=lookback_days)
    try:
        client = cloud_logging.Client(project=project)
        found = client.list_entries(filter_=logging_filter(jobset, project, since), order_by=cloud_logging.ASCENDING)
        return [entry.to_api_repr() for entry in found]
    except Exception as exc:  # auth, permission and API errors all end the report the same way
        raise ReportError(f"reading Cloud Logging for {jobset}-goodput in {project} failed: {exc}") from None
