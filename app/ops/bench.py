"""`trainstack bench`: run a recipe once on a fresh, ephemeral stack, and always tear it down.

1. prepare: a new stack `<recipe>-bench-<utc yyyymmddhhmm>-<4 hex>` with the recipe's config
   plus overrides (a unique cluster name that carries the expiry, no deletion protection,
   disposable storage, a bucket of its own, and the labels `trainstack-ephemeral=true` and
   `trainstack-expires=<utc time>`): `trainstack reap` finds what is left by those labels and, for
   the networks, which have none, by that name. The config is validated before anything is created.
2. up, through the Automation API.
3. wait for the job's preflight (where on) to pass, and stop there if it fails (app/ops/bench_preflight.py),
   then for the training JobSet to finish (kubectl with the stack's `kubeconfig` output).
4. collect the leader pod's log, MFU from it and goodput from Cloud Logging (best effort).
5. teardown, on success, on any error and on SIGINT or SIGTERM: `refresh` if an update began and
   did not finish, destroy (refused, before anything is deleted, while the state holds a
   protected resource: automation.destroy), check with `pulumi stack export` that the state
   holds no resource and no pending operation, then `stack rm`; failed steps retried with
   backoff, and `pulumi cancel` only when a step finds the stack locked. A stack that still
   holds anything is kept, and what it holds is named from its state (exit 3).
   `trainstack bench --teardown NAME` runs the same teardown alone, for a run that was killed
   (CI cancellation gives a step 10 s: .github/workflows/bench.yml tears down in a job of its own).

Signals. A bench is stopped by a signal to this process alone (`kill`, a CI runner) or to its
terminal's process group (Ctrl-C), and must never leave the Pulumi CLI killed mid-update: that
leaves the stack locked and the resources it was creating as pending operations, which destroy
does not delete and `stack rm` erases. So the CLI runs in a process group of its own
(`automation.CancellableCommand`), where only this process signals it, and the Python handler
never raises while a CLI command runs: during `up` it asks the command to cancel (a watcher
thread sends the CLI one SIGINT, its graceful cancel) and the Automation API call returns once
the CLI has finished the steps under way and exited; during stack init it lets the command
finish, so the new stack is torn down; during teardown it only reports. It raises at once only
while waiting for the job or collecting its log. See SignalGuard.

The boundaries (stack factory, waiter, log fetcher, goodput source, sleep, clocks) are
injectable, so the flow is tested offline. A job on a fleet is benched with copies of the fleet
and its workers: app/ops/bench_fleet.py, which runs each copy's teardown as this one.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import itertools
import json
import os
import re
import secrets
import signal
import subprocess
import tempfile
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import FrameType
from typing import Any, Protocol

from pulumi.automation.errors import ConcurrentUpdateError, StackNotFoundError

from trainstack.app.deploy import stack_file
from trainstack.app.deploy.secrets import secure_paths
from trainstack.app.deploy.stacks import project_root
from trainstack.app.metrics import goodput, mfu, timeline
from trainstack.app.ops import automation, bench_preflight, bench_timeline
from trainstack.app.ops.reap import bench_prefix, expires_label
from trainstack.components.storage import KINDS
from trainstack.core import catalog
from trainstack.core.errors import TrainstackError
from trainstack.infra.contract import KUBECONFIG_OUTPUT
from trainstack.workloads import launchers
from trainstack.workloads.spec import WorkloadSpec

# --ttl must cover --timeout plus this: creating an A3 cluster and its GPU pool (up to ~1 h with
# a reservation) and destroying it (~30 min). A shorter TTL lets `reap` delete a running bench.
DEPLOY_AND_TEARDOWN_S = 2 * 3600.0
TEARDOWN_ATTEMPTS = 3
TEARDOWN_BACKOFF_S = (60.0, 180.0)
POLL_S = 60.0
_CLUSTER_NAME_MAX = 40  # trainstack:cluster.name's limit


class BenchError(TrainstackError):
    """A bench that cannot start (bad name, TTL, overrides) or a step that failed."""


# ---------------------------------------------------------------------------------------------
# Preparing the stack


@dataclass(frozen=True)
class BenchSpec:
    """What a bench creates: names, expiry, and the new stack's (validated) raw config."""

    recipe: str
    stack: str
    cluster: str
    project: str
    expires: datetime
    timeout_s: float
    raw: dict[str, Any]
    config: stack_file.PlatformStackFile


def bench_stack_name(recipe: str, now: datetime, token: str) -> str:
    """`<recipe>-bench-<utc yyyymmddhhmm>-<token>`."""
    return f"{recipe}-bench-{now.astimezone(UTC):%Y%m%d%H%M}-{token}"


def bench_cluster_name(base: str, stack: str, expires: datetime) -> str:
    """`<base>-bench-<yymmddhhmm of the expiry>-<4 hex of the stack name>` (reap.bench_prefix), `base`
    trimmed to keep it within 40 characters. The stack's networks are named from it, which is how
    `trainstack reap` finds them: networks have no labels."""
    token = hashlib.sha1(stack.encode()).hexdigest()[:4]
    room = _CLUSTER_NAME_MAX - len(bench_prefix("", expires, token))
    return bench_prefix(base[:room].rstrip("-"), expires, token)


_TOP_KEY = re.compile(r"([^.\[]+)(.*)")
_PATH_PART = re.compile(r"\.([^.\[\]]+)|\[(\d+)\]")


def key_steps(key: str) -> list[str | int]:
    """`trainstack:a.b[0].c` -> ['trainstack:a', 'b', 0, 'c']."""
    top = _TOP_KEY.fullmatch(key)
    parts = list(_PATH_PART.finditer(top.group(2))) if top else []
    if not top or "".join(m.group(0) for m in parts) != top.group(2):
        raise BenchError(f"--set {key}: not a config key such as trainstack:gpuPool.reservation.name")
    return [top.group(1), *(m.group(1) or int(m.group(2)) for m in parts)]


def set_path(raw: dict[str, Any], key: str, value: Any) -> None:
    """Set `value` at a `pulumi config set --path` style key, creating objects on the way."""
    steps = key_steps(key)
    node: Any = raw
    for step, following in itertools.pairwise(steps):
        if isinstance(step, int) and isinstance(node, list) and step < len(node):
            node = node[step]
        elif isinstance(step, str) and isinstance(node, dict):
            node = node.setdefault(step, [] if isinstance(following, int) else {})
        else:
            raise BenchError(f"--set {key}: cannot go into {step!r} (not an object, or no such list element)")
    last = steps[-1]
    if isinstance(last, int) and isinstance(node, list) and last <= len(node):
        node[last : last + 1] = [value]
    elif isinstance(last, str) and isinstance(node, dict):
        node[last] = value
    else:
        raise BenchError(f"--set {key}: cannot set {last!r} (not an object, or no such list element)")


def prepare(
    recipe: str,
    recipe_raw: dict[str, Any],
    *,
    now: datetime,
    ttl_s: float,
    timeout_s: float,
    taken: list[str],
    name: str | None = None,
    token: str | None = None,
    sets: Sequence[tuple[str, Any]] = (),
) -> BenchSpec:
    """The bench stack for `recipe`, checked: a free name, a TTL that outlives the run, no
    secrets to copy, and a config that validates. Nothing is created here."""
    stack = name or bench_stack_name(recipe, now, token or secrets.token_hex(2))
    if stack in taken:
        raise BenchError(f"stack name {stack!r} is taken by stacks/Pulumi.{stack}.yaml; a bench needs a stack of its own")
    check_ttl(ttl_s, timeout_s)
    # Ciphertext is bound to the recipe stack's key: copied, it would become a plain value of the
    # new stack. Found at any depth (`trainstack:workload.env.HF_TOKEN`), not only at the top.
    secret = secure_paths(recipe_raw)
    if secret:
        raise BenchError(f"cannot copy secret config to a new stack ({', '.join(secret)}); pass them with --set or an ESC environment")
    raw = copy.deepcopy(recipe_raw)
    for key, value in sets:
        set_path(raw, key, value)
    stack_file.load(recipe, raw)  # the recipe (with --set) must be valid before it is adapted
    base = stack_file.PLATFORM.load(recipe, raw) if stack_file.kind(raw) is stack_file.PLATFORM else None
    if base is None or base.workload is None:
        raise BenchError(
            f"{recipe!r} is not a whole recipe nor a job on a fleet: a bench deploys a platform and runs its job on it, so it "
            "needs a stack with both, or a workload stack whose trainstack:platform.stack is a fleet stack here (whose "
            "workers and fleet it copies too); not a platform-only stack, nor a workload stack on a platform made elsewhere"
        )
    stack_file.PLATFORM.check(recipe, base, project_root())
    expires = now + timedelta(seconds=ttl_s)
    cluster = make_ephemeral(raw, base.cluster.name, stack, expires, base.storage.kind)
    config = stack_file.PLATFORM.load(stack, raw)
    stack_file.PLATFORM.check(stack, config, project_root())  # every rule, the launchers' included
    return BenchSpec(recipe, stack, cluster, config.project, expires, timeout_s, raw, config)


def check_ttl(ttl_s: float, timeout_s: float) -> None:
    """The expiry must outlive the run, deploy and teardown included."""
    if ttl_s < timeout_s + DEPLOY_AND_TEARDOWN_S:
        raise BenchError(
            f"--ttl must be at least --timeout plus {DEPLOY_AND_TEARDOWN_S / 3600:g}h for deploy and teardown "
            f"({_hours(ttl_s)} < {_hours(timeout_s)} + {DEPLOY_AND_TEARDOWN_S / 3600:g}h); otherwise `trainstack reap` "
            "could delete the cluster while the bench still runs"
        )


def make_ephemeral(raw: dict[str, Any], cluster: str, stack: str, expires: datetime, storage: str | None) -> str:
    """Turn `raw`, the config of a stack that makes a cluster, into its bench copy's: a cluster name
    carrying the expiry (`bench_cluster_name`, which its networks' names begin with), no deletion
    protection, disposable storage with a bucket of its own (`storage`: the stack's storage kind,
    None if it has none), and the ephemeral labels. Returns the cluster's name."""
    name = bench_cluster_name(cluster, stack, expires)
    set_path(raw, "trainstack:cluster.name", name)
    set_path(raw, "trainstack:cluster.deletionProtection", False)
    if storage is not None:
        # Its data goes with it: destroy deletes the bucket, share or disk rather than leaving it.
        set_path(raw, "trainstack:storage.disposable", True)
    if storage is not None and KINDS[storage].bucket is not None:
        # A bucket of its own (the recipe's may exist, or its default name may not fit 63 characters).
        set_path(raw, f"trainstack:storage.{KINDS[storage].block}.name", f"{name}-ckpt")
    raw["trainstack:ephemeral"] = {"expires": expires_label(expires)}  # the labels `trainstack reap` reads
    return name


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:g}h"


# ---------------------------------------------------------------------------------------------
# Signals and teardown


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived: unwinds like KeyboardInterrupt, so `finally` blocks run."""


class SignalGuard:
    """What SIGINT and SIGTERM do during a bench. The first is kept in `signum`; then:

    - in `interruptible()` (waiting for the job, collecting its log) it raises Interrupted at once;
    - in `holding()` (stack init, config) the running command completes, and Interrupted is raised
      as the block ends, so a new stack is always known, hence torn down;
    - in `holding(*commands)` (up, of one stack or of several at once) the commands are also
      cancelled: each CLI gets one SIGINT, finishes the steps under way, releases its stack's lock
      and exits;
    - anywhere else (between those blocks, teardown) it raises nothing: either block raises
      Interrupted as it begins, and no signal can stop teardown.
    Later signals are only reported. The previous handlers come back on exit.
    """

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.signum: int | None = None
        self._raising = False
        self._holding = False
        self._tearing_down = False
        self._commands: tuple[automation.CancellableCommand, ...] = ()
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> SignalGuard:
        self._previous = {s: signal.getsignal(s) for s in self.SIGNALS}
        for s in self.SIGNALS:
            signal.signal(s, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for s, handler in self._previous.items():
            signal.signal(s, handler)

    @contextmanager
    def interruptible(self) -> Iterator[None]:
        """A signal raises Interrupted in the block at once."""
        self._stop_if_signalled()
        self._raising = True
        try:
            yield
        finally:
            self._raising = False

    @contextmanager
    def holding(self, *commands: automation.CancellableCommand) -> Iterator[None]:
        """A signal lets the block finish (cancelling `commands`), then raises Interrupted."""
        self._stop_if_signalled()
        self._holding, self._commands = True, commands
        try:
            yield
        finally:
            self._holding, self._commands = False, ()
            for command in commands:
                command.resume()
            self._stop_if_signalled()

    def tearing_down(self) -> None:
        """Teardown begins: signals from now on are only reported."""
        self._tearing_down = True

    def _stop_if_signalled(self) -> None:
        if self.signum is not None:
            raise Interrupted

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        first = self.signum is None
        if first:
            self.signum = signum
            for command in self._commands:
                command.cancel()
        if self._tearing_down:
            note = "teardown is running and continues"
        elif first and self._commands:
            note = "cancelling the running pulumi command: it finishes the steps under way, then teardown begins"
        elif self._holding:
            note = "stopping once the running pulumi command is done, then teardown begins"
        else:
            note = "stopping; teardown begins"
        # os.write, not print: a handler may interrupt a print to the same stream (a reentrant call).
        os.write(2, f"{signal.Signals(signum).name}: {note} (killing this process would leave resources for `trainstack reap`)\n".encode())
        if first and self._raising:
            raise Interrupted


@dataclass
class Teardown:
    """How teardown went. `destroyed`: after destroy, the stack's state (`pulumi stack export`)
    held no resource and no pending operation; else `left` and `pending` say what it held.
    `ok`: destroyed and the stack removed. `attempts`: rounds, a failed step retried in the next."""

    destroyed: bool
    removed: bool
    attempts: int
    seconds: float
    errors: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.destroyed and self.removed

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, **dataclasses.asdict(self)}


def teardown(
    stack: automation.Stack,
    sleep: Callable[[float], None],
    clock: Callable[[], float],
    *,
    refresh: bool,
    attempts: int = TEARDOWN_ATTEMPTS,
    backoff: tuple[float, ...] = TEARDOWN_BACKOFF_S,
) -> Teardown:
    """Refresh (with `refresh`: after an update that did not finish), destroy, check that the
    state is empty, then remove the stack. A step that finds the stack locked (by an update that
    was killed) runs again at once after `pulumi cancel`, once; a failed refresh is passed over
    (destroy does not need it); any other failure is retried after a backoff, up to `attempts`
    rounds, resuming where it failed. A stack whose state still holds anything is kept:
    `stack rm` would erase the only record of it."""
    start = clock()
    steps = [*(["refresh"] if refresh else []), "destroy", "check", "remove stack"]
    errors: list[str] = []
    left: list[str] = []
    pending: list[str] = []
    attempt, cancelled = 1, False
    while steps and not (left or pending):
        try:
            if steps[0] == "check":
                left, pending = held(stack.export_stack().deployment or {})
            else:
                _TEARDOWN_COMMANDS[steps[0]](stack)
        except automation.DestroyRefused as exc:  # the state will not change by itself: no retry
            errors.append(f"attempt {attempt}: destroy refused: {exc}")
            break
        except Exception as exc:  # any failure is retried, then reported
            errors.append(f"attempt {attempt}: {steps[0]} failed: {automation.brief(exc)}")
            if isinstance(exc, ConcurrentUpdateError) and not cancelled:
                cancelled = _cancel(stack, errors)
                if cancelled:
                    continue  # the same step, at once
            if steps[0] != "refresh":
                if attempt == attempts:
                    break
                sleep(backoff[min(attempt - 1, len(backoff) - 1)])
                attempt += 1
                continue
        steps.pop(0)
    destroyed = "check" not in steps and not (left or pending)
    if not destroyed and not (left or pending):  # destroy failed: name what it left, from the state
        try:
            left, pending = held(stack.export_stack().deployment or {})
        except Exception as exc:
            errors.append(f"reading what is left from the state failed: {automation.brief(exc)}")
    return Teardown(destroyed, not steps, attempt, round(clock() - start, 1), errors, left, pending)


_TEARDOWN_COMMANDS: dict[str, Callable[[automation.Stack], Any]] = {
    "refresh": lambda stack: stack.refresh(on_output=automation.echo),
    "destroy": automation.destroy,
    "remove stack": lambda stack: stack.workspace.remove_stack(stack.name),
}


def held(deployment: dict[str, Any]) -> tuple[list[str], list[str]]:
    """What a stack's state (the `deployment` of `pulumi stack export`) holds: its resources but
    the stack itself and the default providers, and its pending operations."""
    resources = [_named(r) for r in deployment.get("resources") or [] if not _bookkeeping(r)]
    pending = [f"{_named(op['resource'])} ({op['type']})" for op in deployment.get("pending_operations") or []]
    return resources, pending


def _named(resource: dict[str, Any]) -> str:
    return f"{resource['type']} {resource['urn'].rsplit('::', 1)[-1]}"


def _bookkeeping(resource: dict[str, Any]) -> bool:
    name = resource["urn"].rsplit("::", 1)[-1]
    return resource["type"] == "pulumi:pulumi:Stack" or (resource["type"].startswith("pulumi:providers:") and name.startswith("default"))


def _cancel(stack: automation.Stack, errors: list[str]) -> bool:
    """A killed update left the stack locked: cancel it, so the step can run again."""
    try:
        stack.cancel()
    except Exception as exc:  # the next attempt reports what still blocks it
        errors.append(f"cancel of the interrupted update failed: {automation.brief(exc)}")
        return False
    return True


def leftovers(stack: str, result: Teardown, root: Path, reap: str = "") -> str:
    """What a failed teardown left (the stack's state, read after it failed), and how to remove it;
    `reap`: a note on what `trainstack reap` will delete once the stack has expired."""
    note = f" {reap}" if reap else ""
    rerun = f"`trainstack bench --teardown {stack}` tears it down again"
    if result.left or result.pending:
        held_text = "; ".join([*result.left, *(f"{p}, pending" for p in result.pending)])
        refused = (
            " Its destroy was refused: protected resources are unprotected first (see the errors)."
            if any("destroy refused" in e for e in result.errors)
            else ""
        )
        pending = (
            "A pending operation was cut short: its resource may exist in the project without Pulumi knowing; "
            f"delete it there if it does, then run `pulumi refresh --clear-pending-creates --stack {stack} --cwd {root}`. "
            if result.pending
            else ""
        )
        return f"teardown left Pulumi stack {stack!r} holding: {held_text}. The stack is kept: its state is the record of them.{refused} {pending}Then {rerun}.{note}"
    if not result.destroyed:
        state = "could not be read" if any(e.startswith("reading what is left") for e in result.errors) else "names no resource"
        return f"teardown of Pulumi stack {stack!r} failed after {result.attempts} attempts ({'; '.join(result.errors)}) and its state {state}. {rerun}.{note}"
    return f"resources destroyed, but removing the empty Pulumi stack {stack!r} failed after {result.attempts} attempts: run `pulumi stack rm {stack} --cwd {root}`."


def reap_note(spec: BenchSpec) -> str:
    """What `trainstack reap` deletes of a bench stack left behind, and from when."""
    return (
        f"`trainstack reap --project {spec.project} --yes` deletes its labelled resources and networks once they have expired ({expires_label(spec.expires)})."
    )


def teardown_only(
    name: str,
    root: Path,
    open_stack: automation.StackOpener = automation.select,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> Teardown | None:
    """Tear down the bench stack `name` that a killed run left (None: there is no such stack).
    Refreshes first (the run may have been killed in an update), and SIGINT or SIGTERM only
    report: nothing stops a teardown."""
    with SignalGuard() as guard:
        guard.tearing_down()
        try:
            stack = open_stack(name, root)
        except StackNotFoundError:
            return None
        return teardown(stack, sleep, clock, refresh=True)


# ---------------------------------------------------------------------------------------------
# The job: wait, logs, metrics


@dataclass(frozen=True)
class JobOutcome:
    """`status` is succeeded, failed or timeout."""

    status: str
    detail: str = ""


Waiter = Callable[[Path, str, str, float, Callable[[], None]], JobOutcome]
"""Waits for the JobSet (kubeconfig, name, namespace, timeout); calls the last argument once, when every pod of it is ready."""
PreflightWaiter = Callable[[Path, str, str, int, str, float], bench_preflight.PreflightOutcome]
LogFetcher = Callable[[Path, str, str], str]
GoodputSource = Callable[[str, str], list[dict[str, Any]]]


def jobset_state(obj: dict[str, Any]) -> JobOutcome | None:
    """The outcome of a finished JobSet (`status.terminalState`), or None while it runs."""
    status = obj.get("status") or {}
    terminal = status.get("terminalState")
    if terminal not in ("Completed", "Failed"):
        return None
    message = next((c.get("message", "") for c in status.get("conditions") or [] if c.get("type") == terminal), "")
    return JobOutcome("succeeded" if terminal == "Completed" else "failed", message)


def jobset_ready(obj: dict[str, Any]) -> bool:
    """Every child Job of the JobSet has all its pods ready (`status.replicatedJobsStatus[].ready`
    reaches `spec.replicatedJobs[].replicas`)."""
    wanted = {r.get("name"): r.get("replicas", 1) for r in (obj.get("spec") or {}).get("replicatedJobs") or []}
    ready = {r.get("name"): r.get("ready", 0) for r in (obj.get("status") or {}).get("replicatedJobsStatus") or []}
    return bool(wanted) and all(ready.get(name, 0) >= count for name, count in wanted.items())


def wait_for_jobset(
    kubeconfig: Path,
    name: str,
    namespace: str,
    timeout_s: float,
    on_ready: Callable[[], None] = lambda: None,
    *,
    run: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    poll_s: float = POLL_S,
) -> JobOutcome:
    """Poll `kubectl get jobset` until the JobSet finishes or `timeout_s` passes; `on_ready` once all its pods are ready."""
    deadline = clock() + timeout_s
    was_ready = False
    last = "no answer yet"
    command = ["kubectl", "--kubeconfig", str(kubeconfig), "get", "jobset", name, "-n", namespace, "-o", "json"]
    while True:
        try:
            done = run(command, capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            last = "kubectl timed out"
        else:
            if done.returncode == 0:
                obj = json.loads(done.stdout)
                outcome = jobset_state(obj)
                if outcome:
                    return outcome
                if not was_ready and jobset_ready(obj):
                    was_ready = True
                    on_ready()
                last = "running"
            else:
                last = (done.stderr.strip().splitlines() or ["kubectl failed"])[-1]
        if clock() >= deadline:
            return JobOutcome("timeout", f"not finished after {_hours(timeout_s)}; last seen: {last}")
        sleep(poll_s)


def leader_logs(kubeconfig: Path, name: str, namespace: str) -> str:
    """The log of the JobSet's leader pod (job 0, completion index 0), every container, each line
    prefixed with its time (for the timeline's first and steady step)."""
    selector = f"jobset.sigs.k8s.io/jobset-name={name},jobset.sigs.k8s.io/job-index=0,batch.kubernetes.io/job-completion-index=0"
    done = subprocess.run(
        ["kubectl", "--kubeconfig", str(kubeconfig), "logs", "-n", namespace, "-l", selector, "--tail=-1", "--all-containers=true", "--timestamps"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0:
        raise BenchError(f"kubectl logs failed: {(done.stderr.strip().splitlines() or ['no output'])[-1]}")
    return done.stdout


def cloud_logging_goodput(jobset: str, project: str) -> list[dict[str, Any]]:
    """The job's goodput events from Cloud Logging (log `<jobset>-goodput`)."""
    return goodput.fetch_entries(jobset, project, lookback_days=1.0)


def mfu_metrics(log: str, workload: WorkloadSpec, machine: catalog.Machine) -> dict[str, Any]:
    """MFU of the run from the leader's log and the job's model figures on `machine`, or the reason not."""
    batch, seq = launchers.global_batch(workload, machine), launchers.training(workload, machine).seq_length
    if batch is None:
        return {"error": "the stack sets no trainstack:workload.globalBatchSize and its framework has no known default"}
    try:
        window = mfu.steady_step_time(mfu.parse_step_times(log, "leader log"))
        result = mfu.compute_mfu(
            window.mean_s,
            workload.model,
            batch,
            seq,
            machine.gpus(workload.nodes),
            machine.gpu.name,
            workload.precision,
        )
    except TrainstackError as exc:
        return {"error": str(exc)}
    return {**dataclasses.asdict(result), "stepsAveraged": dataclasses.asdict(window)}


def goodput_metrics(source: GoodputSource, workload: WorkloadSpec, project: str, step_time_s: float | None) -> dict[str, Any]:
    """Goodput from the job's event log in `project`, against the measured step time, or the reason not."""
    if not workload.resiliency.enabled:
        return {"error": "the stack runs no resiliency supervisor, so there is no goodput event log"}
    if step_time_s is None:
        return {"error": "no reference step time: MFU could not be measured from the log"}
    try:
        events, warnings = goodput.events_from_entries(source(workload.name, project))
        report = goodput.compute_goodput(events, step_time_s, warnings)
    except TrainstackError as exc:
        return {"error": str(exc)}
    return dataclasses.asdict(report)


# ---------------------------------------------------------------------------------------------
# The run


@dataclass(kw_only=True)
class Boundaries:
    """What every bench reaches outside itself (stacks, Cloud Logging, time), replaced by fakes in tests."""

    create_stack: automation.StackOpener = automation.create
    goodput: GoodputSource = cloud_logging_goodput
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    wall: Callable[[], datetime] = lambda: datetime.now(UTC)


@dataclass(kw_only=True)
class Deps(Boundaries):
    """The boundaries of a single-stack bench: also how it waits for the JobSet and reads its logs."""

    wait: Waiter = wait_for_jobset
    preflight: PreflightWaiter = bench_preflight.wait_for_preflight
    logs: LogFetcher = leader_logs
    dump: bench_timeline.Dumper = bench_timeline.kube_dump


@dataclass(kw_only=True)
class RunRecord(ABC):
    """What every bench records as it runs (its phases, the job, its metrics, how it ended)."""

    started_at: datetime
    finished_at: datetime | None = None
    phases: dict[str, dict[str, Any]] = field(default_factory=dict)
    job: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)
    preflight: dict[str, Any] | None = None
    interrupted: str | None = None
    error: str | None = None
    log_file: str | None = None
    timeline: dict[str, Any] | None = None  # the measured time to first step (app/metrics/timeline.py)
    regressions: list[str] = field(default_factory=list)  # phases slower than --baseline's

    @property
    @abstractmethod
    def exit_code(self) -> int:
        """The bench's exit code (`exit_code` of what its teardowns left and how it ended)."""

    def record(self) -> dict[str, Any]:
        """The result JSON's keys every bench writes."""
        return {
            "startedAt": self.started_at.isoformat(),
            "finishedAt": self.finished_at.isoformat() if self.finished_at else None,
            "phases": self.phases,
            "job": self.job,
            "metrics": self.metrics,
            "preflight": self.preflight,
            "logFile": self.log_file,
            "interrupted": self.interrupted,
            "error": self.error,
            "timeline": self.timeline,
            "regressions": self.regressions,
            "exitCode": self.exit_code,
        }


@dataclass(kw_only=True)
class BenchResult(RunRecord):
    """Everything a bench run reports (written as the result JSON)."""

    spec: BenchSpec
    teardown: Teardown | None = None

    @property
    def exit_code(self) -> int:
        code = exit_code(self.teardown is not None and not self.teardown.ok, self.interrupted, self.error, self.job.get("outcome"))
        return REGRESSED if code == 0 and self.regressions else code

    def to_dict(self) -> dict[str, Any]:
        spec = self.spec
        record = {"recipe": spec.recipe, "stack": spec.stack, "project": spec.project, "cluster": spec.cluster, "expires": spec.expires.isoformat()}
        return {**record, **self.record(), "teardown": self.teardown.to_dict() if self.teardown else None}


REGRESSED = 4  # a phase of the timeline regressed from --baseline: the gate's exit, as `diff --fail-on`


def exit_code(left: bool, interrupted: str | None, error: str | None, outcome: str | None) -> int:
    """A bench's exit code. 3: something left behind (a teardown not ok); 128+N: signal N arrived,
    whenever (teardown included); 1: the bench failed; 0: the job succeeded."""
    if left:
        return 3
    if interrupted:
        return 128 + signal.Signals[interrupted].value
    return 0 if not error and outcome == "succeeded" else 1


class Timed(Protocol):
    """A bench's result: each phase's seconds and whether it finished."""

    phases: dict[str, dict[str, Any]]


@contextmanager
def phase(result: Timed, name: str, clock: Callable[[], float]) -> Iterator[None]:
    start, ok = clock(), False
    try:
        yield
        ok = True
    finally:
        result.phases[name] = {"seconds": round(clock() - start, 1), "ok": ok}


def run_bench(spec: BenchSpec, root: Path, deps: Deps, log_path: Path | None = None) -> BenchResult:
    """Create, run, measure and tear down the bench stack; the result says what happened."""
    result = BenchResult(spec=spec, started_at=deps.wall())
    stack: automation.Stack | None = None
    up: Any = None
    with SignalGuard() as guard:
        try:
            with guard.holding():
                stack = deps.create_stack(spec.stack, root)
                stack.set_all_config(automation.config_values(spec.raw))
            engine = bench_timeline.EngineRecorder(deps.wall().timestamp())
            with guard.holding(stack.workspace.pulumi_command), phase(result, "up", deps.clock):
                up = up_stack(stack, on_event=engine.on_event)
            with guard.interruptible():
                _measure(result, spec, _kubeconfig(up), deps, log_path, engine.marks())
        except Interrupted:
            pass  # the guard keeps the signal
        except Exception as exc:  # whatever failed, teardown follows and the result says why
            result.error = str(exc) if isinstance(exc, TrainstackError) else f"{type(exc).__name__}: {exc}"
        finally:
            guard.tearing_down()
            if stack is not None:
                # Refresh after an update that began and did not finish (cancelled, failed).
                result.teardown = teardown(stack, deps.sleep, deps.clock, refresh="up" in result.phases and up is None)
                result.phases["teardown"] = {"seconds": result.teardown.seconds, "ok": result.teardown.ok}
    result.interrupted = signal.Signals(guard.signum).name if guard.signum else None
    result.finished_at = deps.wall()
    return result


def up_stack(stack: automation.Stack, on_output: Callable[[str], Any] = automation.echo, on_event: automation.OnEvent | None = None) -> Any:
    try:
        return stack.up(on_output=on_output, on_event=on_event)
    except Exception as exc:
        raise BenchError(f"pulumi up failed: {automation.brief(exc)}") from None


def _kubeconfig(up: Any) -> str:
    outputs = getattr(up, "outputs", None) or {}
    if KUBECONFIG_OUTPUT not in outputs:
        raise BenchError(f"the stack has no {KUBECONFIG_OUTPUT!r} output to reach the cluster (outputs: {', '.join(sorted(outputs)) or 'none'})")
    return outputs[KUBECONFIG_OUTPUT].value


def _measure(result: BenchResult, spec: BenchSpec, kubeconfig: str, deps: Deps, log_path: Path | None, engine: timeline.EngineMarks) -> None:
    workload = spec.config.workload
    assert workload is not None  # prepare refuses a stack without one
    result.job = {"name": workload.name, "namespace": workload.namespace, "outcome": "not finished"}
    with tempfile.TemporaryDirectory(prefix="trainstack-bench-") as private:  # mode 0700
        path = Path(private) / "kubeconfig"
        path.write_text(kubeconfig)
        recording = bench_timeline.Recording()
        if workload.preflight.enabled:
            # The job's own label on its pods; the preflight runs in them before the trainer starts.
            selector = f"{'jobset.sigs.k8s.io/jobset-name' if workload.controller == 'jobset' else 'batch.kubernetes.io/job-name'}={workload.name}"
            machine = spec.config.job_queue.machine
            with phase(result, "preflight", deps.clock):
                checked = deps.preflight(path, selector, workload.namespace, workload.nodes, machine.name, spec.timeout_s)
            result.preflight = checked.to_dict()
            if checked.status != "passed":  # a bench never spends its hours on a sick fabric: teardown follows
                result.job.update(outcome=f"preflight {checked.status}")
                raise BenchError(bench_preflight.describe_failure(checked))
        with phase(result, "wait", deps.clock):
            # Once every pod is ready, while the kubelet's image-pull events are still kept.
            outcome = deps.wait(path, workload.name, workload.namespace, spec.timeout_s, lambda: recording.take(deps.dump, path))
        result.job.update(outcome=outcome.status, detail=outcome.detail)
        with phase(result, "collect", deps.clock):
            recording.take(deps.dump, path)
            try:
                log = deps.logs(path, workload.name, workload.namespace)
            except Exception as exc:  # best effort: no log, no MFU
                result.metrics = {"mfu": {"error": f"no leader log: {exc}"}, "goodput": {"error": "no reference step time"}}
                result.timeline = recording.timeline(None, engine, workload.name)
                return
            if log_path is not None:
                log_path.write_text(log)
                result.log_file = str(log_path)
            result.timeline = recording.timeline(log, engine, workload.name)
            result.metrics = job_metrics(timeline.strip_timestamps(log), workload, spec.config.job_queue.machine, spec.project, deps.goodput)


def job_metrics(log: str, workload: WorkloadSpec, machine: catalog.Machine, project: str, source: GoodputSource) -> dict[str, Any]:
    """MFU from the leader's log, and goodput against its step time."""
    mfu = mfu_metrics(log, workload, machine)
    return {"mfu": mfu, "goodput": goodput_metrics(source, workload, project, mfu.get("step_time_s"))}
