"""`trainstack reap`: delete ephemeral GKE clusters whose time is up.

A cluster is reaped only when it carries all three labels `trainstack bench` puts on it:
`managed-by=trainstack`, `trainstack-ephemeral=true` and a `trainstack-expires` time that has
passed. Anything else, including a labelled cluster whose expiry cannot be read, is left alone.
Dry run by default; `--yes` deletes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

MANAGED_BY = ("managed-by", "trainstack")
EPHEMERAL = ("trainstack-ephemeral", "true")
EXPIRES_LABEL = "trainstack-expires"
STACK_LABEL = "trainstack-stack"
_EXPIRES_FORMAT = "%Y-%m-%dt%H%Mz"  # 2026-11-23t0630z: a valid GCP label value


def expires_label(when: datetime) -> str:
    """A UTC time as a label value, to the minute: `2026-11-23t0630z`."""
    return when.astimezone(UTC).strftime(_EXPIRES_FORMAT)


def parse_expires(value: str) -> datetime | None:
    """The time in an `expires_label` value, or None if it is not one."""
    try:
        return datetime.strptime(value, _EXPIRES_FORMAT).replace(tzinfo=UTC)
    except ValueError:
        return None


class ClusterClient(Protocol):
    """The part of google.cloud.container_v1.ClusterManagerClient reap uses."""

    def list_clusters(self, *, parent: str) -> Any: ...

    def delete_cluster(self, *, name: str) -> Any: ...


def default_client() -> ClusterClient:
    """A GKE client with the ambient credentials (Application Default Credentials)."""
    from google.cloud import container_v1

    return container_v1.ClusterManagerClient()


@dataclass(frozen=True)
class Expired:
    """An ephemeral cluster past its expiry."""

    name: str
    location: str
    expires: datetime
    stack: str

    def path(self, project: str) -> str:
        return f"projects/{project}/locations/{self.location}/clusters/{self.name}"


@dataclass(frozen=True)
class Survey:
    """What one listing found: expired clusters, and notes on clusters left alone and why."""

    expired: list[Expired]
    notes: list[str]


def survey(client: ClusterClient, project: str, now: datetime) -> Survey:
    """The expired ephemeral clusters of `project` (every location)."""
    response = client.list_clusters(parent=f"projects/{project}/locations/-")
    expired, notes = [], []
    for zone in response.missing_zones:
        notes.append(f"could not list clusters in {zone}; run again later to reap there")
    for cluster in sorted(response.clusters, key=lambda c: (c.location, c.name)):
        labels = dict(cluster.resource_labels)
        if labels.get(MANAGED_BY[0]) != MANAGED_BY[1] or labels.get(EPHEMERAL[0]) != EPHEMERAL[1]:
            continue
        raw = labels.get(EXPIRES_LABEL, "")
        expires = parse_expires(raw)
        if expires is None:
            notes.append(f"left {cluster.name} ({cluster.location}): label {EXPIRES_LABEL}={raw!r} is not a time like 2026-11-23t0630z")
        elif cluster.status.name == "STOPPING":
            notes.append(f"left {cluster.name} ({cluster.location}): already being deleted")
        elif expires <= now:
            expired.append(Expired(cluster.name, cluster.location, expires, labels.get(STACK_LABEL, "")))
    return Survey(expired, notes)


def reap(project: str, delete: bool, client: ClusterClient, now: datetime | None = None, echo: Callable[[str], Any] = print) -> int:
    """Report (and with `delete`, delete) the expired ephemeral clusters; the exit code: 0, or 1
    if a deletion failed."""
    found = survey(client, project, now or datetime.now(UTC))
    for note in found.notes:
        echo(note)
    if not found.expired:
        echo(f"no expired ephemeral trainstack clusters in {project}")
        return 0
    verb = "deleting" if delete else "would delete (dry run; pass --yes to delete)"
    echo(f"{verb} {len(found.expired)} expired ephemeral cluster(s) in {project}:")
    failures = 0
    for cluster in found.expired:
        line = f"  {cluster.name}  {cluster.location}  expired {cluster.expires:%Y-%m-%d %H:%M} UTC  stack {cluster.stack or '?'}"
        if delete:
            try:
                operation = client.delete_cluster(name=cluster.path(project))
            except Exception as exc:  # one refusal must not stop the others
                failures += 1
                line += f"  FAILED: {exc}"
            else:
                line += f"  deletion started ({getattr(operation, 'name', '') or 'operation pending'})"
        echo(line)
    if delete:
        echo(
            "The rest of each stack (networks, bucket, Pulumi state) remains: run "
            "`trainstack destroy <stack> --yes` where the stack's state lives, then `pulumi stack rm <stack>`."
        )
    return 1 if failures else 0
