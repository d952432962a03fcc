"""Small readers over Kubernetes objects as the API serves them (conditions, times, durations),
and the Finding each job's explanation ends in."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from trainstack.app.status.snapshot import meta

QUEUED, ADMITTED, RUNNING, FAILED, FINISHED = "queued", "admitted", "running", "failed", "finished"
STATES = (QUEUED, ADMITTED, RUNNING, FAILED, FINISHED)


@dataclass
class Finding:
    """One job's state (`queued`, `admitted` but not running, `running`, `failed`, `finished`),
    its cause and the fix in one line each, the detail, and the facts they were read from."""

    job: str
    namespace: str
    kind: str
    state: str
    cause: str
    fix: str
    detail: list[str] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)
    worker: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Why:
    """A state with its cause and fix, before it is attached to a job."""

    state: str
    cause: str
    fix: str
    detail: list[str] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)


def condition(obj: dict[str, Any] | None, kind: str) -> dict[str, Any] | None:
    for item in ((obj or {}).get("status") or {}).get("conditions") or []:
        if isinstance(item, dict) and item.get("type") == kind:
            return item
    return None


def is_true(obj: dict[str, Any] | None, kind: str) -> bool:
    found = condition(obj, kind)
    return found is not None and found.get("status") == "True"


def brief(cond: dict[str, Any] | None) -> dict[str, Any] | None:
    """A condition as a fact: type, status, reason, message, when."""
    if cond is None:
        return None
    return {k: cond[k] for k in ("type", "status", "reason", "message", "lastTransitionTime") if k in cond}


def parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def ago(then: datetime | None, now: datetime) -> str:
    """`3h12m`, `4m`, `20s`: how long before `now`."""
    if then is None:
        return "?"
    return span((now - then).total_seconds())


def span(seconds: float) -> str:
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m" if minutes else f"{secs}s"


def utc(value: datetime | None) -> str:
    return f"{value.astimezone(UTC):%Y-%m-%d %H:%M} UTC" if value else "?"


def name_of(obj: dict[str, Any]) -> str:
    return str(meta(obj).get("name", ""))


def namespace_of(obj: dict[str, Any]) -> str:
    return str(meta(obj).get("namespace", ""))
