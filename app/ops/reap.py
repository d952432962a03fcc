"""`trainstack reap`: delete everything expired ephemeral stacks left in a project, every kind, in
dependency order. Dry run by default; `--yes` deletes.

What `trainstack bench` creates is found through two handles it writes:
- the labels `managed-by=trainstack`, `trainstack-ephemeral=true` and `trainstack-expires=<time>`
  (core/rules.py), on every kind whose API has labels: GKE clusters (their node pools and nodes go
  with them), Filestore and Managed Lustre instances, Compute Engine disks, Cloud Storage buckets,
  Artifact Registry repositories, and global addresses (Lustre's private services access range);
- the name: a bench cluster is `<base>-bench-<yymmddhhmm>-<4 hex>`, its expiry in UTC
  (`bench_prefix`), and the stack's networks and workload policies are named from it
  (infra/gcp.py: `name_prefix=config.cluster.name`). VPC networks, subnetworks, firewall rules,
  Cloud Routers (and the NAT they hold) and private services access connections have no labels in
  their APIs: an expired network is found by its name, and what sits on it through the network; a
  NAT's reserved regional address (components/gcp_network.py, `<cluster>-nat-ip`) by its name.
Anything else, including a labelled resource whose expiry cannot be read, is left alone.

The deletions go tier by tier (TIERS), each waiting for the one before: gcloud's deletes wait for
their operations. A tier in which a deletion fails ends the run there, since what follows may
need it gone (a network with a subnetwork, a connection Lustre still uses); the next run resumes.
Everything is read and deleted with the `gcloud` CLI (`GCLOUD` below), each command as its
reference documents it (cloud.google.com/sdk/gcloud/reference/...).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from trainstack.core.errors import TrainstackError
from trainstack.core.rules import EPHEMERAL, EXPIRES_LABEL, MANAGED_BY, STACK_LABEL

_EXPIRES_FORMAT = "%Y-%m-%dt%H%Mz"  # 2026-11-23t0630z: a valid GCP label value
_NAME_STAMP = "%y%m%d%H%M"  # 2611230630: the expiry in a bench cluster's name
_BENCH_NAME = re.compile(r"(?P<prefix>[a-z].*-bench-(?P<stamp>\d{10})-[0-9a-f]{4})(?:-.*)?")
PSA_SERVICE = "servicenetworking.googleapis.com"


class ReapError(TrainstackError):
    """gcloud is missing or could not list what reap needs."""


def expires_label(when: datetime) -> str:
    """A UTC time as a label value, to the minute: `2026-11-23t0630z`."""
    return when.astimezone(UTC).strftime(_EXPIRES_FORMAT)


def parse_expires(value: str) -> datetime | None:
    """The time in an `expires_label` value, or None if it is not one."""
    try:
        return datetime.strptime(value, _EXPIRES_FORMAT).replace(tzinfo=UTC)
    except ValueError:
        return None


def bench_prefix(base: str, expires: datetime, token: str) -> str:
    """`<base>-bench-<yymmddhhmm>-<token>`: a bench cluster's name, which its networks' names begin with."""
    return f"{base}-bench-{expires.astimezone(UTC).strftime(_NAME_STAMP)}-{token}"


def name_expires(name: str) -> datetime | None:
    """The expiry in the name of a bench cluster or of what is named from it, or None."""
    match = _BENCH_NAME.fullmatch(name)
    if not match:
        return None
    try:
        return datetime.strptime(match.group("stamp"), _NAME_STAMP).replace(tzinfo=UTC)
    except ValueError:
        return None


# ---------------------------------------------------------------------------------------------
# gcloud


Runner = Callable[[list[str]], subprocess.CompletedProcess[str]]


def run_gcloud(args: list[str]) -> subprocess.CompletedProcess[str]:
    """`gcloud <args>`, its output captured."""
    return subprocess.run(["gcloud", *args], capture_output=True, text=True, timeout=3600, stdin=subprocess.DEVNULL)


class Gcloud:
    """The gcloud calls of one project: JSON listings and waiting deletes."""

    def __init__(self, project: str, runner: Runner = run_gcloud):
        self.project, self.runner = project, runner

    def list(self, *args: str) -> list[dict[str, Any]]:
        done = self.runner([*args, f"--project={self.project}", "--format=json"])
        if done.returncode != 0:
            raise ReapError(cause(done.stderr))
        return json.loads(done.stdout or "[]")

    def delete(self, args: tuple[str, ...]) -> str | None:
        """Run a delete (it waits for its operation); the error's last line, or None."""
        done = self.runner([*args, f"--project={self.project}", "--quiet"])
        return None if done.returncode == 0 else _last_line(done.stderr)


def cause(stderr: str) -> str:
    """Why a gcloud command failed: the message of its `ERROR: (gcloud.<command>) <message>` line
    (gcloud's format for every error), with the commands its advice gives (`$ gcloud auth login`);
    else its last line."""
    lines = [line.strip() for line in stderr.strip().splitlines() if line.strip()]
    error = next((i for i, line in enumerate(lines) if line.startswith("ERROR:")), None)
    if error is None:
        return lines[-1] if lines else "failed without a message"
    message = re.sub(r"^ERROR:\s*(\(gcloud[.\w-]*\)\s*)?", "", lines[error])
    advice = [line[1:].strip() for line in lines[error + 1 :] if line.startswith("$")]
    return message + (f" (run: {'; or '.join(advice)})" if advice else "")


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "failed without a message"


def _tail(path: str) -> str:
    """The last segment of a resource name or URL: `.../networks/x` -> `x`."""
    return path.rstrip("/").rsplit("/", 1)[-1]


def _network(item: dict[str, Any]) -> str:
    """The name of the VPC network an item sits on ('' if none)."""
    value = item.get("network") or ""
    return _tail(value) if value else ""


# ---------------------------------------------------------------------------------------------
# What is found


@dataclass(frozen=True)
class Doomed:
    """One resource to delete: its kind, name, where it is, why, and the gcloud delete command."""

    kind: str
    name: str
    where: str
    why: str
    tier: int
    command: tuple[str, ...]


@dataclass(frozen=True)
class LabelledKind:
    """A kind whose resources carry the ephemeral labels."""

    kind: str
    tier: int
    listing: tuple[str, ...]
    labels_key: str
    delete: Callable[[dict[str, Any]], tuple[str, ...]]
    where: Callable[[dict[str, Any]], str]
    name: Callable[[dict[str, Any]], str] = lambda item: _tail(item["name"])


# The order of deletion: each tier needs the ones before it gone.
TIERS = {
    1: "clusters (with their node pools)",
    2: "data stores, disks, registries and workload policies",
    3: "private services access connections",
    4: "address ranges",
    5: "firewall rules and routers (with their NAT)",
    6: "subnetworks and NAT addresses (once their router is gone)",
    7: "networks",
}

LABELLED = (
    LabelledKind(
        "GKE cluster",
        1,
        ("container", "clusters", "list"),
        "resourceLabels",
        lambda c: ("container", "clusters", "delete", c["name"], f"--location={c['location']}"),
        lambda c: c["location"],
        lambda c: c["name"],
    ),
    LabelledKind(
        "Filestore instance",
        2,
        ("filestore", "instances", "list"),  # every location by default
        "labels",
        lambda i: ("filestore", "instances", "delete", i["name"]),
        lambda i: i["name"].split("/")[3],
    ),
    LabelledKind(
        "Managed Lustre instance",
        2,
        ("lustre", "instances", "list", "--location=-"),  # `-`: every location
        "labels",
        lambda i: ("lustre", "instances", "delete", i["name"]),
        lambda i: i["name"].split("/")[3],
    ),
    LabelledKind(
        "disk",
        2,
        ("compute", "disks", "list"),
        "labels",
        lambda d: ("compute", "disks", "delete", d["name"], f"--zone={_tail(d['zone'])}"),
        lambda d: _tail(d["zone"]),
    ),
    LabelledKind(
        "bucket",
        2,
        ("storage", "buckets", "list", "--raw"),  # --raw: the API's own fields (`labels`)
        "labels",
        lambda b: ("storage", "rm", "--recursive", f"gs://{b['name']}"),  # its objects, then the bucket
        lambda b: b.get("location", "").lower(),
    ),
    LabelledKind(
        "Artifact Registry repository",
        2,
        ("artifacts", "repositories", "list", "--location=all"),
        "labels",
        lambda r: ("artifacts", "repositories", "delete", r["name"]),
        lambda r: r["name"].split("/")[3],
    ),
    LabelledKind(
        "address range",
        4,
        ("compute", "addresses", "list", "--global"),
        "labels",
        lambda a: ("compute", "addresses", "delete", a["name"], "--global"),
        lambda a: "global",
    ),
)


@dataclass
class Survey:
    """What reap found: the resources to delete, and notes on what it left alone and why."""

    doomed: list[Doomed] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    unlisted: dict[str, list[str]] = field(default_factory=dict)  # why a listing failed -> what it could not list

    def add(self, item: Doomed) -> None:
        if all((d.kind, d.name, d.where) != (item.kind, item.name, item.where) for d in self.doomed):
            self.doomed.append(item)


def _expired_by_labels(labels: dict[str, str], now: datetime) -> tuple[bool, str | None]:
    """(expired, a note if its expiry label cannot be read), for a labelled item."""
    if labels.get(MANAGED_BY[0]) != MANAGED_BY[1] or labels.get(EPHEMERAL[0]) != EPHEMERAL[1]:
        return False, None
    raw = labels.get(EXPIRES_LABEL, "")
    expires = parse_expires(raw)
    if expires is None:
        return False, f"label {EXPIRES_LABEL}={raw!r} is not a time like 2026-11-23t0630z"
    return expires <= now, None


def _listing(gcloud: Gcloud, found: Survey, what: str, *args: str) -> list[dict[str, Any]]:
    try:
        return gcloud.list(*args)
    except ReapError as exc:
        if "not enabled" in str(exc) or "has not been used" in str(exc):
            return []  # the API is off: nothing of this kind can exist
        found.unlisted.setdefault(str(exc), []).append(what)
        return []


def survey(gcloud: Gcloud, now: datetime) -> Survey:
    """Every expired ephemeral resource of the project, each with its tier and delete command."""
    found = Survey()
    for kind in LABELLED:
        for item in sorted(_listing(gcloud, found, f"{kind.kind}s", *kind.listing), key=kind.name):
            labels = item.get(kind.labels_key) or {}
            expired, problem = _expired_by_labels(labels, now)
            name, where = kind.name(item), kind.where(item)
            if problem:
                found.notes.append(f"left {kind.kind} {name} ({where}): {problem}")
            elif expired and (item.get("status") or item.get("state")) in ("STOPPING", "DELETING"):
                found.notes.append(f"left {kind.kind} {name} ({where}): already being deleted")
            elif expired:
                stack = labels.get(STACK_LABEL, "?")
                found.add(Doomed(kind.kind, name, where, f"expired {labels[EXPIRES_LABEL]}, stack {stack}", kind.tier, kind.delete(item)))
    _named(gcloud, found, now)
    found.doomed.sort(key=lambda d: (d.tier, d.kind, d.where, d.name))
    return found


def _named(gcloud: Gcloud, found: Survey, now: datetime) -> None:
    """The label-less kinds: expired networks by name, and what sits on them through the network."""
    networks = {}
    for net in _listing(gcloud, found, "networks", "compute", "networks", "list"):
        expires = name_expires(net["name"])
        if expires is not None and expires <= now:
            networks[net["name"]] = f"expired {expires:%Y-%m-%d %H:%M} UTC (its name)"
    for policy in _listing(gcloud, found, "resource policies", "compute", "resource-policies", "list"):
        expires = name_expires(policy["name"])
        if expires is not None and expires <= now:
            region = _tail(policy["region"])
            found.add(
                Doomed(
                    "workload policy",
                    policy["name"],
                    region,
                    f"expired {expires:%Y-%m-%d %H:%M} UTC (its name)",
                    2,
                    ("compute", "resource-policies", "delete", policy["name"], f"--region={region}"),
                )
            )
    for address in _listing(gcloud, found, "addresses", "compute", "addresses", "list"):
        expires = name_expires(address["name"])
        if "region" in address and expires is not None and expires <= now:
            region = _tail(address["region"])
            why = f"expired {expires:%Y-%m-%d %H:%M} UTC (its name)"
            found.add(Doomed("NAT address", address["name"], region, why, 6, ("compute", "addresses", "delete", address["name"], f"--region={region}")))
    if not networks:
        return
    on = {name: f"on expired network {name}" for name in networks}
    for network in sorted(networks):
        for peering in _listing(gcloud, found, f"peerings of {network}", "services", "vpc-peerings", "list", f"--network={network}"):
            if _tail(peering.get("service", "")) == PSA_SERVICE:
                found.add(
                    Doomed(
                        "private services access",
                        PSA_SERVICE,
                        network,
                        on[network],
                        3,
                        ("services", "vpc-peerings", "delete", f"--network={network}", f"--service={PSA_SERVICE}"),
                    )
                )
    for address in _listing(gcloud, found, "address ranges", "compute", "addresses", "list", "--global"):
        if _network(address) in on:
            found.add(
                Doomed("address range", address["name"], "global", on[_network(address)], 4, ("compute", "addresses", "delete", address["name"], "--global"))
            )
    for rule in _listing(gcloud, found, "firewall rules", "compute", "firewall-rules", "list"):
        if _network(rule) in on:
            found.add(Doomed("firewall rule", rule["name"], "global", on[_network(rule)], 5, ("compute", "firewall-rules", "delete", rule["name"])))
    for router in _listing(gcloud, found, "routers", "compute", "routers", "list"):
        if _network(router) in on:
            region = _tail(router["region"])
            found.add(Doomed("router", router["name"], region, on[_network(router)], 5, ("compute", "routers", "delete", router["name"], f"--region={region}")))
    for subnet in _listing(gcloud, found, "subnetworks", "compute", "networks", "subnets", "list"):
        if _network(subnet) in on:
            region = _tail(subnet["region"])
            found.add(
                Doomed(
                    "subnetwork",
                    subnet["name"],
                    region,
                    on[_network(subnet)],
                    6,
                    ("compute", "networks", "subnets", "delete", subnet["name"], f"--region={region}"),
                )
            )
    for name, why in networks.items():
        found.add(Doomed("network", name, "global", why, 7, ("compute", "networks", "delete", name)))


# ---------------------------------------------------------------------------------------------
# Reaping


def reap(
    project: str,
    delete: bool,
    gcloud: Gcloud | None = None,
    now: datetime | None = None,
    echo: Callable[[str], Any] = print,
    error: Callable[[str], Any] | None = None,
) -> int:
    """Report (and with `delete`, delete) every expired ephemeral resource, tier by tier; the exit
    code: 0, or 1 if a listing or a deletion failed. A failed listing is an `error` (default: `echo`)
    naming its cause once for every kind it hid, and never reads as "nothing to reap"."""
    error = error or echo
    if gcloud is None:
        if shutil.which("gcloud") is None:
            raise ReapError("gcloud is not installed (reap lists and deletes with it): see https://cloud.google.com/sdk/docs/install")
        gcloud = Gcloud(project)
    found = survey(gcloud, now or datetime.now(UTC))
    for note in found.notes:
        echo(note)
    for why, kinds in found.unlisted.items():
        error(f"error: could not list {', '.join(kinds)} in {project}: {why}")
    if not found.doomed and found.unlisted:
        error("error: nothing was reaped; what could not be listed may hold expired resources: run again once the cause is fixed")
        return 1
    if not found.doomed:
        echo(f"no expired ephemeral trainstack resources in {project}")
        return 0
    verb = "deleting" if delete else "would delete (dry run; pass --yes to delete)"
    echo(f"{verb} {len(found.doomed)} expired ephemeral resource(s) in {project}, in this order:")
    failed_tier = None
    for tier, doomed in _by_tier(found.doomed):
        if failed_tier is not None:
            for item in doomed:
                echo(f"  {_line(item)}  SKIPPED: {TIERS[failed_tier]} must go first")
            continue
        for item in doomed:
            line = _line(item)
            if delete:
                refused = gcloud.delete(item.command)
                line += f"  FAILED: {refused}" if refused else "  deleted"
                if refused:
                    failed_tier = tier
            echo(line)
    if failed_tier is not None:
        echo(f"a deletion among the {TIERS[failed_tier]} failed: what comes after it is left for the next run")
    return 1 if failed_tier is not None or found.unlisted else 0


def _by_tier(doomed: Iterable[Doomed]) -> list[tuple[int, list[Doomed]]]:
    tiers: dict[int, list[Doomed]] = {}
    for item in doomed:
        tiers.setdefault(item.tier, []).append(item)
    return sorted(tiers.items())


def _line(item: Doomed) -> str:
    return f"{item.kind} {item.name}  {item.where}  {item.why}"
