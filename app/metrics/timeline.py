"""Time to first step, measured: a job's bring-up, phase by phase, from what the cluster recorded.

Inputs:

- a dump: a Kubernetes List as `kubectl get nodes,pods,events -A -o json` writes it (`kind: List`,
  `items`), or a directory of such `.json` files, read together;
- optionally the leader's log as `kubectl logs --timestamps` writes it (each line prefixed with an
  RFC 3339 time), for the first and the steady step;
- optionally the Pulumi engine's marks (`EngineMarks`: when `up` began, when the cluster and each
  GPU pool were created), which `trainstack bench` records from the engine's events.

The marks, as the kubelet, the scheduler and the controllers write them (kubernetes/kubernetes;
reasons: 819ecd4 pkg/kubelet/events/event.go; messages: cfce511 pkg/kubelet/images/image_manager.go):

- a node: `metadata.creationTimestamp` (it registered) and its `Ready` condition's
  `lastTransitionTime` with status True (the kubelet's node status);
- a pod: `metadata.creationTimestamp`, the conditions `PodScheduled` (the scheduler bound it),
  `PodReadyToStartContainers` (its volumes are mounted and its sandbox runs; the kubelet mounts
  volumes before it creates the sandbox) and each container's `state.running.startedAt`;
- events on a pod: `Pulling` (message `Pulling image "<image>"`) and `Pulled` (`Successfully
  pulled image "<image>" in <duration> (<duration> including waiting). Image size: <n> bytes.`, or
  `Container image "<image>" already present on machine`); an event's time is its `eventTime`,
  else `firstTimestamp`, else its creation time. Events expire after the API server's
  `--event-ttl` (one hour by default), so a late dump may lack them: the pull is then missing.

The job's pods are those with the JobSet's label `jobset.sigs.k8s.io/jobset-name` (of one JobSet
when named); its nodes, those its pods were bound to (else every node with GKE's accelerator label).
The drivers and plugins on a node are the pods of its node-setup DaemonSets (`SETUP_DAEMONSETS`).

Each phase runs from a start mark to an end mark of one subject (a node or a pod); its `seconds` are
the slowest subject's (a gang starts with its last member), `start`/`end` the earliest start and the
latest end. The marks come from different clocks (API server, scheduler, kubelets, this machine): a
subject whose end precedes its start counts 0 s and is reported as clock skew. A phase no mark
measures is listed as missing, with the reason. Time to first step runs from the origin (the
engine's start of `up`, else the first node or pod created) to the first step.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from trainstack.app.metrics import mfu
from trainstack.core.errors import ReportError, TrainstackError

JOBSET_LABEL = "jobset.sigs.k8s.io/jobset-name"
ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"
# The DaemonSets that make a GPU node usable: GKE's driver installer and device plugin, and the
# GPUDirect installers (components/gpudirect_installers.py), matched by the owner's name prefix.
SETUP_DAEMONSETS = ("nvidia-driver-installer", "nvidia-gpu-device-plugin", "nccl-tcpx-installer", "nccl-tcpxo-installer", "nccl-rdma-installer")
WARMUP_STEPS = 10  # as `metrics mfu`: the steady step is the first after these logged steps
SKEW_TOLERANCE_S = 1.0  # timestamps are whole seconds: less than this backwards is not skew
PULLED_IN = re.compile(
    r'^Successfully pulled image "(?P<image>[^"]*)" in (?P<pull>\S+?)(?: \((?P<waiting>\S+?) including waiting\))?(?:\. Image size: (?P<bytes>\d+) bytes\.)?$'
)
ALREADY_PRESENT = re.compile(r'^Container image "(?P<image>[^"]*)" already present on machine')
_GO_DURATION = re.compile(r"(\d+(?:\.\d+)?)(h|ms|us|µs|ns|m|s)")
_GO_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
_LOG_TIME = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)) ?(.*)$")
_FRACTION = re.compile(r"\.(\d+)")


@dataclass(frozen=True)
class PhaseSpec:
    """A phase: its key in the result JSON, its name for people and what measures it."""

    key: str
    label: str
    source: str


PHASES = (
    PhaseSpec("cluster", "cluster created", "Pulumi engine: start of up -> the cluster's outputs"),
    PhaseSpec("gpuPools", "GPU pools created", "Pulumi engine: the cluster's outputs -> the last GPU pool's"),
    PhaseSpec("nodes", "GPU nodes ready", "node: created -> condition Ready True"),
    PhaseSpec("drivers", "drivers and plugins ready", "node Ready -> its setup DaemonSet pods Ready"),
    PhaseSpec("scheduling", "pods scheduled", "pod: created -> condition PodScheduled True"),
    PhaseSpec("mounts", "volumes and sandbox", "pod: PodScheduled -> PodReadyToStartContainers True"),
    PhaseSpec("imagePull", "image pull", "pod events: Pulling -> Pulled (the kubelet's own duration)"),
    PhaseSpec("containers", "containers started", "pod: Pulled (else PodReadyToStartContainers) -> last container running"),
    PhaseSpec("firstStep", "to the first step", "last container running -> first step in the leader's log"),
    PhaseSpec("steady", "to the steady step", f"first step -> the step after {WARMUP_STEPS} logged steps"),
)
PHASE_KEYS = tuple(p.key for p in PHASES)


@dataclass(frozen=True)
class Phase:
    """One measured phase (times in epoch seconds), or a missing one with its reason in `note`."""

    spec: PhaseSpec
    seconds: float | None = None
    start: float | None = None
    end: float | None = None
    subject: str = ""
    note: str = ""


@dataclass(frozen=True)
class Pull:
    """One pod's image pull on its node: seconds and bytes as the kubelet reported them."""

    node: str
    pod: str
    image: str
    seconds: float
    size_bytes: int | None


@dataclass(frozen=True)
class EngineMarks:
    """From the Pulumi engine's events: when `up` began, the cluster was created and each GPU pool (epoch seconds)."""

    up_started: float
    cluster: float | None = None
    pools: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Timeline:
    """The phases in order, the first step (epoch seconds), the origin and what could not be read."""

    phases: tuple[Phase, ...]
    origin: float | None
    first_step: float | None
    pulls: tuple[Pull, ...]
    warnings: tuple[str, ...]

    @property
    def to_first_step(self) -> float | None:
        """Seconds from the origin to the first step."""
        return None if self.origin is None or self.first_step is None else self.first_step - self.origin

    def seconds(self) -> dict[str, float | None]:
        """Each phase's seconds, and `timeToFirstStep`: what a baseline compares."""
        return {**{p.spec.key: p.seconds for p in self.phases}, "timeToFirstStep": self.to_first_step}

    def to_dict(self) -> dict[str, Any]:
        def offset(t: float | None) -> float | None:
            return None if t is None or self.origin is None else round(t - self.origin, 1)

        return {
            "origin": _iso(self.origin),
            "timeToFirstStepSeconds": _round(self.to_first_step),
            "phases": [
                {
                    "phase": p.spec.key,
                    "label": p.spec.label,
                    "seconds": _round(p.seconds),
                    "from": offset(p.start),
                    "to": offset(p.end),
                    "slowest": p.subject or None,
                    "source": p.spec.source,
                    **({"missing": p.note} if p.seconds is None else {}),
                }
                for p in self.phases
            ],
            "imagePulls": [{"node": u.node, "pod": u.pod, "image": u.image, "seconds": round(u.seconds, 1), "bytes": u.size_bytes} for u in self.pulls],
            "warnings": list(self.warnings),
        }

    def to_table(self) -> str:
        return format_table(self.to_dict())


def format_table(data: Mapping[str, Any]) -> str:
    """A timeline's result JSON (`Timeline.to_dict`) as a table for people."""
    total = data.get("timeToFirstStepSeconds")
    head = f"time to first step: {_minutes(total)} min" if total is not None else "time to first step: not measured (no first step in the log)"
    rows = [("phase", "seconds", "from", "to", "slowest / why missing")]
    for p in data["phases"]:
        note = p["slowest"] if p["seconds"] is not None else f"missing: {p.get('missing', '')}"
        rows.append((p["label"], _num(p["seconds"]), _num(p["from"]), _num(p["to"]), note or ""))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = [head, ""] + ["  " + "  ".join(r[i].ljust(widths[i]) if i == 0 else r[i].rjust(widths[i]) for i in range(4)) + "  " + r[4] for r in rows]
    if pulls := data.get("imagePulls"):
        slow = max(pulls, key=lambda u: u["seconds"])
        size = f", {slow['bytes'] / 1e9:.1f} GB" if slow["bytes"] else ""
        lines += ["", f"image pulls: {len(pulls)}; slowest {slow['seconds']:.1f} s on {slow['node']}{size}"]
    lines += [f"warning: {w}" for w in data.get("warnings", [])]
    return "\n".join(lines)


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f}"


def _iso(t: float | None) -> str | None:
    return None if t is None else datetime.fromtimestamp(t, UTC).isoformat()


# ---------------------------------------------------------------------------------------------
# Reading


def parse_time(value: object) -> float | None:
    """Epoch seconds of an RFC 3339 time as Kubernetes writes it (fractions to nanoseconds), else None."""
    if not isinstance(value, str) or not value:
        return None
    text = _FRACTION.sub(lambda m: "." + m.group(1)[:6].ljust(6, "0"), value.strip(), count=1).replace("Z", "+00:00")
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment.timestamp() if moment.tzinfo else None


def go_duration(text: str) -> float | None:
    """Seconds of a Go duration as `time.Duration.String` writes it (`4m3.2s`, `850ms`), else None."""
    parts = _GO_DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(float(n) * _GO_UNITS[u] for n, u in parts)


def list_items(data: object, where: str) -> list[dict[str, Any]]:
    if not isinstance(data, dict) or not isinstance(data.get("items"), list) or not str(data.get("kind", "")).endswith("List"):
        raise ReportError(f"{where}: not a Kubernetes List (an object with kind: List and items), as `kubectl get nodes,pods,events -A -o json` writes")
    for index, item in enumerate(data["items"]):
        if not isinstance(item, dict) or not isinstance(item.get("kind"), str):
            raise ReportError(f"{where}: items[{index}] is not a Kubernetes object (no kind)")
    return data["items"]


def read_dump(path: Path) -> list[dict[str, Any]]:
    """The objects of a dump file, or of every `.json` file in a dump directory; ReportError if unreadable."""
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    if not files:
        raise ReportError(f"{path}: a directory with no .json file (expected the output of `kubectl get nodes,pods,events -A -o json`)")
    items: list[dict[str, Any]] = []
    for file in files:
        try:
            data = json.loads(file.read_text(errors="replace"))
        except OSError as exc:
            raise ReportError(f"cannot read {file}: {exc.strerror or exc}") from None
        except json.JSONDecodeError as exc:
            raise ReportError(f"{file}: not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
        items += list_items(data, str(file))
    return items


def log_step_times(log: str) -> tuple[dict[int, float], int]:
    """Step number -> the time its line was logged (epoch seconds), from a `kubectl logs --timestamps`
    log; and how many lines carried a timestamp."""
    stamped, times = 0, dict[int, float]()
    for line in log.splitlines():
        match = _LOG_TIME.match(line)
        moment = parse_time(match.group(1)) if match else None
        if match is None or moment is None:
            continue
        stamped += 1
        try:
            steps = mfu.parse_step_times(match.group(2))
        except TrainstackError:
            continue
        for step in steps:
            times.setdefault(step, moment)
    return times, stamped


def strip_timestamps(log: str) -> str:
    """The log without `kubectl logs --timestamps` prefixes (for `metrics mfu`'s parser)."""
    return "\n".join(m.group(2) if (m := _LOG_TIME.match(line)) and parse_time(m.group(1)) is not None else line for line in log.splitlines())


# ---------------------------------------------------------------------------------------------
# Marks


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _condition(obj: Mapping[str, Any], kind: str) -> float | None:
    """When condition `kind` last became True, or None."""
    for c in (obj.get("status") or {}).get("conditions") or []:
        if isinstance(c, Mapping) and c.get("type") == kind and c.get("status") == "True":
            return parse_time(c.get("lastTransitionTime"))
    return None


def _event_time(event: Mapping[str, Any]) -> float | None:
    for key in ("eventTime", "firstTimestamp", "lastTimestamp"):
        if (t := parse_time(event.get(key))) is not None:
            return t
    return parse_time(_meta(event).get("creationTimestamp"))


def _containers_running(pod: Mapping[str, Any]) -> float | None:
    """When the pod's last container began running, or None unless every container has."""
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    starts = []
    for s in statuses:
        state = (s.get("state") or {}) if isinstance(s, Mapping) else {}
        running = state.get("running") or state.get("terminated") or {}
        starts.append(parse_time(running.get("startedAt")))
    return max(starts) if starts and None not in starts else None  # type: ignore[type-var]


@dataclass
class _Span:
    """A phase's per-subject (start, end) pairs, and its own durations where a component measured them."""

    pairs: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)
    own: dict[str, float] = field(default_factory=dict)


def _phase(spec: PhaseSpec, span: _Span, missing: str, warnings: list[str]) -> Phase:
    measured: dict[str, tuple[float, float, float]] = {}
    for subject, (start, end) in sorted(span.pairs.items()):
        if start is None or end is None:
            continue
        seconds = span.own.get(subject, end - start)
        if seconds < -SKEW_TOLERANCE_S:
            warnings.append(f"clock skew in {spec.label}: {subject} ends {-seconds:.1f} s before it starts (marks from different clocks); counted as 0 s")
        measured[subject] = (start, end, max(seconds, 0.0))
    if not measured:
        return Phase(spec, note=missing)
    slowest = max(sorted(measured), key=lambda s: measured[s][2])
    return Phase(spec, measured[slowest][2], min(v[0] for v in measured.values()), max(v[1] for v in measured.values()), slowest)


def _pulls(pods: Mapping[str, Mapping[str, Any]], events: Iterable[Mapping[str, Any]]) -> tuple[_Span, list[Pull], dict[str, float]]:
    """Per job pod: the first Pulling and the last Pulled of its containers; the kubelet's own pull
    durations; and when each pod's image was pulled (for the containers phase)."""
    span, pulls, pulled_at = _Span(), [], {}
    by_pod: dict[str, list[Mapping[str, Any]]] = {}
    for e in events:
        target = e.get("involvedObject") or {}
        key = f"{target.get('namespace', '')}/{target.get('name', '')}"
        main = "initContainers" not in str(target.get("fieldPath", ""))
        if target.get("kind") == "Pod" and key in pods and e.get("reason") in ("Pulling", "Pulled") and main:
            by_pod.setdefault(key, []).append(e)
    for key, found in sorted(by_pod.items()):
        node = (pods[key].get("spec") or {}).get("nodeName") or "?"
        pulling = [t for e in found if e.get("reason") == "Pulling" and (t := _event_time(e)) is not None]
        pulled = [(t, e) for e in found if e.get("reason") == "Pulled" and (t := _event_time(e)) is not None]
        if not pulled:
            continue
        end, last = max(pulled, key=lambda p: p[0])
        message = str(last.get("message", ""))
        own: float | None
        if match := PULLED_IN.match(message):
            own = go_duration(match.group("waiting") or match.group("pull"))
            image, size = match.group("image"), int(match.group("bytes")) if match.group("bytes") else None
        elif match := ALREADY_PRESENT.match(message):
            own, image, size = 0.0, match.group("image"), None
        else:
            own, image, size = None, "", None
        start = min(pulling) if pulling else (end - own if own is not None else None)
        span.pairs[node if node != "?" else key] = (start, end)
        if own is not None:
            span.own[node if node != "?" else key] = own
            pulls.append(Pull(node, key, image, own, size))
        pulled_at[key] = end
    return span, pulls, pulled_at


def _engine_phases(engine: EngineMarks | None) -> tuple[Phase, Phase]:
    cluster_spec, pool_spec = PHASES[0], PHASES[1]
    if engine is None:
        note = "no engine events (only `trainstack bench` records them)"
        return Phase(cluster_spec, note=note), Phase(pool_spec, note=note)
    if engine.cluster is None:
        cluster = Phase(cluster_spec, note="the update created no cluster (it existed, or a platform stack made it)")
    else:
        cluster = Phase(cluster_spec, max(engine.cluster - engine.up_started, 0.0), engine.up_started, engine.cluster, "cluster")
    if not engine.pools:
        return cluster, Phase(pool_spec, note="the update created no GPU pool")
    name = max(sorted(engine.pools), key=engine.pools.__getitem__)
    start = engine.cluster if engine.cluster is not None else engine.up_started
    return cluster, Phase(pool_spec, max(engine.pools[name] - start, 0.0), start, engine.pools[name], name)


def build(items: list[dict[str, Any]], log: str | None = None, engine: EngineMarks | None = None, jobset: str | None = None) -> Timeline:
    """The timeline of the job's bring-up from dump `items`, the leader's `log` and the engine's marks."""
    warnings: list[str] = []
    kinds: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        kinds.setdefault(item["kind"], []).append(item)
    nodes_all, pods_all, events = kinds.get("Node", []), kinds.get("Pod", []), kinds.get("Event", [])
    if not nodes_all and not pods_all:
        raise ReportError("the dump holds no Node and no Pod: nothing to measure (dump them with `kubectl get nodes,pods,events -A -o json`)")
    for kind, found in (("Node", nodes_all), ("Pod", pods_all), ("Event", events)):
        if not found:
            warnings.append(
                f"the dump has no {kind} objects: the phases they mark are missing"
                + (" (events expire after the API server's --event-ttl, 1 h by default)" if kind == "Event" else "")
            )

    def key(obj: Mapping[str, Any]) -> str:
        return f"{_meta(obj).get('namespace', '')}/{_meta(obj).get('name', '')}"

    job_pods = {key(p): p for p in pods_all if (label := (_meta(p).get("labels") or {}).get(JOBSET_LABEL)) is not None and (jobset is None or label == jobset)}
    if pods_all and not job_pods:
        warnings.append(f"no pod carries the label {JOBSET_LABEL}" + (f"={jobset}" if jobset else "") + ": the pod phases are missing")
    bound = {(p.get("spec") or {}).get("nodeName") for p in job_pods.values()} - {None}
    nodes = {
        _meta(n).get("name", ""): n for n in nodes_all if (_meta(n).get("name") in bound if bound else ACCELERATOR_LABEL in (_meta(n).get("labels") or {}))
    }

    node_span = _Span({name: (parse_time(_meta(n).get("creationTimestamp")), _condition(n, "Ready")) for name, n in nodes.items()})
    setup: dict[str, list[float | None]] = {}
    for p in pods_all:
        owners = _meta(p).get("ownerReferences") or []
        node = str((p.get("spec") or {}).get("nodeName"))
        if node in nodes and any(o.get("kind") == "DaemonSet" and str(o.get("name", "")).startswith(SETUP_DAEMONSETS) for o in owners):
            setup.setdefault(node, []).append(_condition(p, "Ready"))
    driver_span = _Span({n: (_condition(nodes[n], "Ready"), None if None in ready else max(ready)) for n, ready in setup.items()})  # type: ignore[type-var]

    created = {k: parse_time(_meta(p).get("creationTimestamp")) for k, p in job_pods.items()}
    scheduled = {k: _condition(p, "PodScheduled") for k, p in job_pods.items()}
    sandbox = {k: _condition(p, "PodReadyToStartContainers") for k, p in job_pods.items()}
    running = {k: _containers_running(p) for k, p in job_pods.items()}
    pull_span, pulls, pulled_at = _pulls(job_pods, events)

    first_step = steady = None
    log_note = "no log given (--log, as `kubectl logs --timestamps` writes it)"
    if log is not None:
        times, stamped = log_step_times(log)
        if not stamped:
            log_note = "the log has no timestamps (fetch it with `kubectl logs --timestamps`)"
        elif not times:
            log_note = "the log has no training step"
        else:
            ordered = sorted(times)
            first_step = times[ordered[0]]
            steady = times[ordered[WARMUP_STEPS]] if len(ordered) > WARMUP_STEPS else None
            log_note = f"the log has {len(ordered)} steps, no more than the {WARMUP_STEPS} warm-up steps"
    last_running = max((t for t in running.values() if t is not None), default=None)

    spans: dict[str, tuple[_Span, str]] = {
        "nodes": (node_span, "no GPU node with a creation time and a Ready condition"),
        "drivers": (driver_span, f"no pod of the setup DaemonSets ({', '.join(SETUP_DAEMONSETS)}) on the job's nodes"),
        "scheduling": (_Span({k: (created[k], scheduled[k]) for k in job_pods}), "no job pod with a PodScheduled condition"),
        "mounts": (_Span({k: (scheduled[k], sandbox[k]) for k in job_pods}), "no job pod with a PodReadyToStartContainers condition (Kubernetes 1.29+)"),
        "imagePull": (pull_span, "no Pulled event for a job pod"),
        "containers": (
            _Span({k: (pulled_at.get(k, sandbox[k]), running[k]) for k in job_pods}),
            "no job pod whose containers all started",
        ),
        "firstStep": (_Span({"leader": (last_running, first_step)}), log_note if first_step is None else "no job pod whose containers all started"),
        "steady": (_Span({"leader": (first_step, steady)}), log_note),
    }
    cluster, pools = _engine_phases(engine)
    phases = (cluster, pools, *(_phase(spec, *spans[spec.key], warnings) for spec in PHASES[2:]))
    starts = [t for t in (*(v[0] for v in node_span.pairs.values()), *created.values()) if t is not None]
    origin = engine.up_started if engine is not None else min(starts, default=None)
    return Timeline(phases, origin, first_step, tuple(pulls), tuple(warnings))


def from_files(dump: Path, log: Path | None = None, jobset: str | None = None) -> Timeline:
    """`build` from a dump file or directory and an optional log file."""
    text = None
    if log is not None:
        try:
            text = log.read_text(errors="replace")
        except OSError as exc:
            raise ReportError(f"cannot read {log}: {exc.strerror or exc}") from None
    return build(read_dump(dump), text, jobset=jobset)


# ---------------------------------------------------------------------------------------------
# Regression against a baseline


@dataclass(frozen=True)
class Regression:
    """A phase slower than its baseline by more than the tolerance."""

    phase: str
    seconds: float
    baseline: float

    def __str__(self) -> str:
        return f"{self.phase}: {self.seconds:.1f} s, baseline {self.baseline:.1f} s (+{self.seconds - self.baseline:.1f} s)"


def regressions(current: Mapping[str, float | None], baseline: Mapping[str, float | None], tolerance: float, slack_s: float) -> list[Regression]:
    """Phases (and time to first step) of `current` slower than `baseline` by more than `tolerance`
    (a fraction) and by more than `slack_s` seconds; a phase either side did not measure is not compared."""
    found = []
    for phase in (*PHASE_KEYS, "timeToFirstStep"):
        now, then = current.get(phase), baseline.get(phase)
        if now is not None and then is not None and now > then * (1 + tolerance) and now - then > slack_s:
            found.append(Regression(phase, now, then))
    return found


def baseline_seconds(result: object, where: str) -> dict[str, float | None]:
    """The phase seconds of a bench result JSON (its `timeline`), or ReportError naming what is wrong."""
    timeline = result.get("timeline") if isinstance(result, dict) else None
    if not isinstance(timeline, dict) or not isinstance(timeline.get("phases"), list):
        raise ReportError(f"{where}: not a bench result with a timeline (a result.json of `trainstack bench` that recorded one)")
    seconds: dict[str, float | None] = {"timeToFirstStep": _number(timeline.get("timeToFirstStepSeconds"))}
    for row in timeline["phases"]:
        if isinstance(row, dict) and row.get("phase") in PHASE_KEYS:
            seconds[row["phase"]] = _number(row.get("seconds"))
    return seconds


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
