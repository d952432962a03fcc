"""`trainstack bench` of a job on a fleet: ephemeral copies of the fleet's workers, of the fleet
and of the job, deployed in dependency order, the job run and measured on the worker MultiKueue
dispatches it to, and every copy torn down in reverse order, always.

1. prepare: the job stack's `trainstack:platform.stack` names a fleet stack here, whose
   `trainstack:fleet.workers` name platform stacks here (each by the last part of its name). Each
   is copied as `trainstack bench` copies a recipe (bench.make_ephemeral: a cluster name carrying
   the expiry, which the manager's networks are named from too, no deletion protection,
   disposable storage, the ephemeral labels); the fleet copy names the worker copies in
   `trainstack:fleet.workers[i].stack` and the job copy the fleet copy in
   `trainstack:platform.stack`, fully qualified in the organization and project the originals
   name, so they read each other through the same StackReference contract as the real stacks.
   `--set KEY=VALUE` goes to every copy whose config has KEY's section, `--set STACK/KEY=VALUE`
   to the copy of STACK alone. Every copy is validated, and the workers and the fleet are
   rendered offline (app.plan.engine) so that the fleet is checked against its workers'
   contracts and the job against the fleet's, before anything is created.
2. create every copy's stack, one at a time: `pulumi stack init` selects the new stack in the
   project's workspace file, which concurrent inits corrupt (pulumi/pulumi#8186, open; the
   Python SDK 3.272 `LocalWorkspace.create_stack` runs `stack init` without `--no-select`).
3. `pulumi install` once: every `up` of a Python program creates its virtual environment if it is
   missing (pulumi/pulumi@1b59498 sdk/python/toolchain/pip.go EnsureVenv, from the language host's
   GetRequiredPackages), and several at once would each create it. Then
   up the workers at once, one CLI each (every other command of the Automation API names its
   stack with `--stack`: pulumi 3.272 sdk/python/lib/pulumi/automation/_stack.py
   `_run_pulumi_cmd_sync`; each writes only its own `Pulumi.<stack>.yaml`); a worker whose up fails
   cancels the others. Then the fleet. Then the link: each worker copy names the fleet copy in
   `trainstack:cluster.admitFleets`, so its first up finds no fleet yet (the engine's `unknown
   stack`) and admits nothing; a second up reads the fleet copy's exported `egressAddresses` and
   authorizes them, as a fleet's first deployment goes (README, fleets). Then the job.
4. watch the job: MultiKueue records on the manager's Workload the worker that admitted it
   (`status.clusterName`, Kueue v0.19.2 apis/kueue/v1beta2/workload_types.go) and copies the
   worker's JobSet status to the manager's JobSet (pkg/controller/jobs/jobset/
   jobset_multikueue_adapter.go SyncJob); once the job finishes the manager deletes the worker's
   copy, its pods and their logs with it (pkg/controller/admissionchecks/multikueue/workload.go
   reconcileGroup, step 2). So the leader's log is read from that worker while the job runs, at
   every poll, and the last read is kept.
5. teardown of every stack created, in reverse order (the job, the fleet, the workers last to
   first), each as bench.teardown; on success, any error, SIGINT and SIGTERM. A stack whose
   teardown fails does not stop the others' (a kept worker bills GPUs; `trainstack reap` deletes
   the leftovers once expired), and each failed one is named with what its state holds.
   `trainstack bench STACK --teardown NAME` does the same for the copies of a killed run.
"""

from __future__ import annotations

import contextlib
import copy as copying
import json
import secrets
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from pulumi.automation.errors import StackNotFoundError

from trainstack.app.deploy import stack_file, validation
from trainstack.app.deploy.secrets import secure_paths
from trainstack.app.deploy.stacks import raw_stack_config, stack_names
from trainstack.app.ops import automation, bench
from trainstack.app.ops.bench import BenchError, Interrupted, JobOutcome, SignalGuard, Teardown
from trainstack.app.ops.reap import expires_label
from trainstack.app.plan import engine
from trainstack.core.errors import TrainstackError
from trainstack.infra import fleet_stack as fleet
from trainstack.infra.contract import KUBECONFIG_OUTPUT, OUTPUT

# ---------------------------------------------------------------------------------------------
# What a fleet job is


def platform_stack(raw: dict[str, Any]) -> str | None:
    """A workload stack's `trainstack:platform.stack`, if it names one."""
    ref = raw.get("trainstack:platform")
    name = ref.get("stack") if isinstance(ref, dict) else None
    return name if isinstance(name, str) else None


def local_name(reference: str) -> str:
    """The stack file of a fully qualified stack name: its last part."""
    return reference.rsplit("/", 1)[-1]


def fleet_of(raw: dict[str, Any], root: Path) -> str | None:
    """The fleet stack here that a workload stack runs on, else None."""
    ref = platform_stack(raw)
    if ref is None or local_name(ref) not in stack_names(root):
        return None
    return local_name(ref) if fleet.is_fleet(raw_stack_config(local_name(ref), root)) else None


def refuse_fleet(recipe: str, raw: dict[str, Any], root: Path) -> None:
    """A fleet stack alone runs no job: BenchError naming the jobs on it that can be benched."""
    if not fleet.is_fleet(raw):
        return
    jobs = [name for name in stack_names(root) if _runs_on(name, recipe, root)]
    hint = (
        f"bench a job on it: {', '.join(f'trainstack bench {j}' for j in jobs)}" if jobs else "bench a workload stack whose trainstack:platform.stack names it"
    )
    raise BenchError(f"{recipe!r} is a fleet and runs no job of its own: {hint} (its workers and the fleet are copied with it)")


def _runs_on(stack: str, fleet_stack: str, root: Path) -> bool:
    try:
        ref = platform_stack(raw_stack_config(stack, root))
    except TrainstackError:
        return False
    return ref is not None and local_name(ref) == fleet_stack


# ---------------------------------------------------------------------------------------------
# The copies


WORKER, FLEET, JOB = "worker", "fleet", "job"


@dataclass(frozen=True)
class Copy:
    """One stack a fleet bench creates: the stack file it copies, its fully qualified name, its
    config, its cluster (None: the job's, which makes none), and a worker's name in the fleet."""

    role: str
    recipe: str
    stack: str
    raw: dict[str, Any]
    cluster: str | None = None
    worker: str | None = None

    @property
    def local(self) -> str:
        return local_name(self.stack)


@dataclass(frozen=True)
class FleetBenchSpec:
    """A fleet bench: its copies in deployment order (the workers, the fleet, the job) and the job's
    validated context."""

    recipe: str
    name: str
    project: str
    expires: datetime
    timeout_s: float
    copies: tuple[Copy, ...]
    job: stack_file.JobContext

    def of(self, role: str) -> list[Copy]:
        return [c for c in self.copies if c.role == role]


def copy_names(recipe: str, recipe_raw: dict[str, Any], name: str, root: Path) -> list[tuple[str, str, str, str | None]]:
    """(role, stack file, copy's fully qualified name, worker name) of every copy of the fleet job
    `recipe` for the bench `name`, in deployment order: each worker `<name>-<worker>`, the fleet
    `<name>-fleet`, the job `<name>`, in the organization and project their references name."""
    fleet_ref = platform_stack(recipe_raw)
    fleet_stack = fleet_of(recipe_raw, root)
    if fleet_ref is None or fleet_stack is None:
        raise BenchError(f"{recipe!r} is not a job on a fleet stack here (trainstack:platform.stack names none)")
    workers = fleet.load(fleet_stack, raw_stack_config(fleet_stack, root)).fleet.workers
    names: list[tuple[str, str, str, str | None]] = []
    for i, worker in enumerate(workers):
        if local_name(worker.stack) not in stack_names(root):
            raise BenchError(
                f"{fleet.KEY}.workers[{i}].stack of {fleet_stack!r} = {worker.stack!r}: no stack file here to copy (stacks/Pulumi.<last part>.yaml)"
            )
        names.append((WORKER, local_name(worker.stack), _sibling(worker.stack, f"{name}-{worker.name}"), worker.name))
    names.append((FLEET, fleet_stack, _sibling(fleet_ref, f"{name}-fleet"), None))
    names.append((JOB, recipe, _sibling(fleet_ref, name), None))
    return names


def _sibling(reference: str, name: str) -> str:
    """`org/project/<name>`, beside the fully qualified stack `reference` (of this project)."""
    parts = reference.split("/")
    if len(parts) != 3 or parts[1] != engine.PROJECT:
        raise BenchError(
            f"{reference!r} is not a stack of project {engine.PROJECT!r} as organization/{engine.PROJECT}/stack: a bench creates its copies beside it"
        )
    return f"{parts[0]}/{engine.PROJECT}/{name}"


def _overrides_for(recipe: str, raw: dict[str, Any], sets: Sequence[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """The `--set`s for the copy of `recipe`: `STACK/KEY` ones of it, and plain ones whose
    section (`trainstack:cluster` of `trainstack:cluster.name`) its stack file has."""
    picked = []
    for key, value in sets:
        target, slash, rest = key.partition("/")
        if (target == recipe) if slash else bench.key_steps(key)[0] in raw:
            picked.append((rest if slash else key, value))
    return picked


def _check_targets(sets: Sequence[tuple[str, Any]], copied: dict[str, dict[str, Any]]) -> None:
    """Every `--set` reaches a copy: `STACK/` names a stack copied, a plain key a section one of them has."""
    for key, _ in sets:
        target, slash, _rest = key.partition("/")
        if slash and target not in copied:
            raise BenchError(f"--set {key}: {target!r} is not one of the stacks this bench copies ({', '.join(sorted(copied))})")
        if not slash and not any(bench.key_steps(key)[0] in raw for raw in copied.values()):
            raise BenchError(f"--set {key}: none of the stacks this bench copies has that section; name the stack: --set STACK/{key}=VALUE")


def prepare(
    recipe: str,
    recipe_raw: dict[str, Any],
    root: Path,
    *,
    now: datetime,
    ttl_s: float,
    timeout_s: float,
    name: str | None = None,
    token: str | None = None,
    sets: Sequence[tuple[str, Any]] = (),
) -> FleetBenchSpec:
    """The copies of the fleet job `recipe`, checked: free names, a TTL that outlives the run, no
    secrets to copy, each config valid, the fleet against its workers' and the job against the
    fleet's contracts (rendered offline). Nothing is created here."""
    bench_name = name or bench.bench_stack_name(recipe, now, token or secrets.token_hex(2))
    bench.check_ttl(ttl_s, timeout_s)
    names = copy_names(recipe, recipe_raw, bench_name, root)
    _check_targets(sets, {stack: recipe_raw if role == JOB else raw_stack_config(stack, root) for role, stack, _, _ in names})
    taken = stack_names(root)
    fleet_copy = next(full for role, _, full, _ in names if role == FLEET)
    expires = now + timedelta(seconds=ttl_s)
    copies: list[Copy] = []
    for role, stack, full, worker in names:
        local = local_name(full)
        if local in taken:
            raise BenchError(f"stack name {local!r} is taken by stacks/Pulumi.{local}.yaml; a bench needs stacks of its own")
        original = recipe_raw if role == JOB else raw_stack_config(stack, root)
        if secret := secure_paths(original):
            raise BenchError(f"cannot copy secret config of {stack!r} to a new stack ({', '.join(secret)}); pass them with --set or an ESC environment")
        raw = copying.deepcopy(original)
        for key, value in _overrides_for(stack, raw, sets):
            bench.set_path(raw, key, value)
        cluster = None
        if role == WORKER:
            base = _loaded(stack, raw, stack_file.PlatformStackFile)
            if base.workload is not None:
                raise BenchError(f"worker {stack!r} of the fleet runs a job of its own; a fleet's workers are platform stacks")
            cluster = bench.make_ephemeral(raw, base.cluster.name, local, expires, base.storage.kind)
            # The copy admits the fleet copy's manager, and no other fleet's.
            raw["trainstack:cluster"]["admitFleets"] = [fleet_copy]
        elif role == FLEET:
            base_fleet = _loaded(stack, raw, fleet.FleetStackConfig)
            cluster = bench.make_ephemeral(raw, base_fleet.cluster.name, local, expires, None)
            workers = {c.worker: c.stack for c in copies}
            for entry in raw[fleet.KEY]["workers"]:
                entry["stack"] = workers[entry["name"]]
        else:
            raw["trainstack:platform"]["stack"] = copies[-1].stack
        copies.append(Copy(role, stack, full, raw, cluster, worker))
    job = _validate(copies, root)
    if len(useful := _able(copies, job.machine.name)) < len(copies):  # no GPU pool bought for nothing
        job = _validate(useful, root)
        copies = useful
    return FleetBenchSpec(recipe, bench_name, job.project, expires, timeout_s, tuple(copies), job)


def _able(copies: list[Copy], machine_type: str) -> list[Copy]:
    """The copies without the workers that have no pool of `machine_type`: MultiKueue never
    sends the job there (a queue's MultiKueueConfig lists only the workers with its machine), so
    a bench does not deploy them, and the fleet copy names only the others."""
    idle = {
        c.worker
        for c in copies
        if c.role == WORKER and all(p.machine_type != machine_type for p in _loaded(c.recipe, c.raw, stack_file.PlatformStackFile).pools)
    }
    if not idle:
        return copies
    kept: list[Copy] = []
    for c in copies:
        if c.role == WORKER and c.worker in idle:
            continue
        if c.role == FLEET:
            raw = copying.deepcopy(c.raw)
            raw[fleet.KEY]["workers"] = [w for w in raw[fleet.KEY]["workers"] if w["name"] not in idle]
            c = replace(c, raw=raw)
        kept.append(c)
    return kept


def _loaded(stack: str, raw: dict[str, Any], kind: type) -> Any:
    """The original's config (with --set), which must be valid before it is adapted."""
    config = fleet.load(stack, raw) if kind is fleet.FleetStackConfig else stack_file.load(stack, raw)
    if not isinstance(config, kind):
        raise BenchError(f"{stack!r} is not a {'fleet' if kind is fleet.FleetStackConfig else 'platform'} stack, as the fleet job's chain needs")
    return config


def _validate(copies: list[Copy], root: Path) -> stack_file.JobContext:
    """Every copy validated as `pulumi up` validates it, each reading the copies it references:
    the workers (before the fleet exists, as their first up) and the fleet rendered offline, the
    job checked against the fleet's contract. Returns the job's context."""
    *platforms, job = copies
    outputs: dict[str, dict[str, Any]] = {}
    for item in platforms:  # the workers, then the fleet, which reads them
        references = {c.stack: outputs[c.stack] for c in platforms if c.role == WORKER} if item.role == FLEET else {}
        rendered = engine.run(item.local, item.raw, references)
        outputs[item.stack] = rendered.outputs
    return validation.validate(job.local, job.raw, root, outputs[platforms[-1].stack].get(OUTPUT))


# ---------------------------------------------------------------------------------------------
# Watching the job on the fleet


@dataclass(frozen=True)
class FleetRun:
    """How the job ended, the worker that ran it (None: not dispatched) and the leader's log as last read there."""

    outcome: JobOutcome
    worker: str | None
    log: str | None


FleetWatcher = Callable[[Path, dict[str, Path], str, str, float], FleetRun]


def admitted_on(workloads: dict[str, Any], jobset: str) -> str | None:
    """The worker MultiKueue dispatched the JobSet `jobset` to: `status.clusterName` of the
    manager's Workload that the JobSet controls (Kueue v0.19.2 jobframework reconciler
    SetControllerReference), else None."""
    for item in workloads.get("items") or []:
        owners = (item.get("metadata") or {}).get("ownerReferences") or []
        if any(o.get("kind") == "JobSet" and o.get("name") == jobset and o.get("controller") for o in owners):
            return (item.get("status") or {}).get("clusterName")
    return None


def watch_fleet(
    manager: Path,
    workers: dict[str, Path],
    name: str,
    namespace: str,
    timeout_s: float,
    *,
    run: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run,
    logs: bench.LogFetcher = bench.leader_logs,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    poll_s: float = bench.POLL_S,
) -> FleetRun:
    """Poll the manager until its JobSet finishes (its status is the worker's) or `timeout_s`
    passes; at each poll read which worker admitted the job and, there, the leader's log."""
    deadline = clock() + timeout_s
    worker: str | None = None
    log: str | None = None
    last = "no answer yet"
    while True:
        dispatched = _kubectl_json(run, manager, ["get", "workloads.kueue.x-k8s.io", "-n", namespace])
        if dispatched is not None and (found := admitted_on(dispatched, name)):
            if found != worker:
                worker, log = found, None  # dispatched again: the last worker's log is not this run's
            if found in workers:
                with contextlib.suppress(Exception):
                    log = logs(workers[found], name, namespace) or log
        state = _kubectl_json(run, manager, ["get", "jobset", name, "-n", namespace])
        if state is not None:
            if outcome := bench.jobset_state(state):
                return FleetRun(outcome, worker, log)
            last = f"running on {worker}" if worker else "waiting for a worker to admit it"
        if clock() >= deadline:
            return FleetRun(JobOutcome("timeout", f"not finished after {timeout_s / 3600:g}h; last seen: {last}"), worker, log)
        sleep(poll_s)


def _kubectl_json(run: Callable[..., subprocess.CompletedProcess[str]], kubeconfig: Path, args: list[str]) -> dict[str, Any] | None:
    try:
        done = run(["kubectl", "--kubeconfig", str(kubeconfig), *args, "-o", "json"], capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return None
    return json.loads(done.stdout) if done.returncode == 0 else None


# ---------------------------------------------------------------------------------------------
# The run


@dataclass(kw_only=True)
class FleetDeps(bench.Boundaries):
    """The boundaries of a fleet bench: also how it watches the fleet."""

    watch: FleetWatcher = watch_fleet


@dataclass(kw_only=True)
class FleetBenchResult(bench.RunRecord):
    """Everything a fleet bench reports (the result JSON); `teardowns` by stack, in teardown order."""

    spec: FleetBenchSpec
    teardowns: dict[str, Teardown] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        return bench.exit_code(any(not t.ok for t in self.teardowns.values()), self.interrupted, self.error, self.job.get("outcome"))

    def to_dict(self) -> dict[str, Any]:
        spec = self.spec
        stacks = [{"role": c.role, "recipe": c.recipe, "stack": c.stack, "cluster": c.cluster, "worker": c.worker} for c in spec.copies]
        record = {"recipe": spec.recipe, "stack": spec.of(JOB)[0].stack, "project": spec.project, "expires": spec.expires.isoformat(), "stacks": stacks}
        teardown = {"ok": all(t.ok for t in self.teardowns.values()), "stacks": [{"stack": s, **t.to_dict()} for s, t in self.teardowns.items()]}
        return {**record, **self.record(), "teardown": teardown}


class _Deployment:
    """The stacks created so far, in order, and which began an update that did not finish."""

    def __init__(self) -> None:
        self.stacks: list[tuple[Copy, automation.Stack]] = []
        self.unfinished: set[str] = set()
        self.outputs: dict[str, dict[str, Any]] = {}

    def stack(self, item: Copy) -> automation.Stack:
        return next(s for c, s in self.stacks if c is item)


def run_fleet_bench(spec: FleetBenchSpec, root: Path, deps: FleetDeps, log_path: Path | None = None) -> FleetBenchResult:
    """Create, deploy in order, run, measure and tear down every copy in reverse; the result says what happened."""
    result = FleetBenchResult(spec=spec, started_at=deps.wall())
    done = _Deployment()
    with SignalGuard() as guard:
        try:
            for item in spec.copies:  # one at a time: stack init writes the workspace file (pulumi#8186)
                with guard.holding():
                    stack = deps.create_stack(item.stack, root)
                    done.stacks.append((item, stack))
                    stack.set_all_config(automation.config_values(item.raw))
            with bench.phase(result, "install", deps.clock), guard.holding():
                # Once, before several CLIs run the program: each would create a missing venv/ at once.
                done.stacks[0][1].workspace.install(on_output=automation.echo)
            with bench.phase(result, "up workers", deps.clock):
                _up_all(guard, done, spec.of(WORKER))
            with bench.phase(result, "up fleet", deps.clock):
                _up_all(guard, done, spec.of(FLEET))
            with bench.phase(result, "link workers", deps.clock):
                _up_all(guard, done, spec.of(WORKER))  # now each reads the fleet copy's egress
            with bench.phase(result, "up job", deps.clock):
                _up_all(guard, done, spec.of(JOB))
            with guard.interruptible():
                _measure(result, spec, done, deps, log_path)
        except Interrupted:
            pass  # the guard keeps the signal
        except Exception as exc:  # whatever failed, teardown follows and the result says why
            result.error = str(exc) if isinstance(exc, TrainstackError) else f"{type(exc).__name__}: {exc}"
        finally:
            guard.tearing_down()
            start = deps.clock()
            for item, stack in reversed(done.stacks):
                result.teardowns[item.stack] = bench.teardown(stack, deps.sleep, deps.clock, refresh=item.stack in done.unfinished)
            if done.stacks:
                result.phases["teardown"] = {"seconds": round(deps.clock() - start, 1), "ok": all(t.ok for t in result.teardowns.values())}
    result.interrupted = signal.Signals(guard.signum).name if guard.signum else None
    result.finished_at = deps.wall()
    return result


def _up_all(guard: SignalGuard, done: _Deployment, items: list[Copy]) -> None:
    """`up` of `items` at once, each its own CLI; one failing cancels the others (each finishes
    the steps under way). A signal cancels them all."""
    stacks = [done.stack(item) for item in items]
    commands = [s.workspace.pulumi_command for s in stacks]
    errors: list[str] = []
    with guard.holding(*commands), ThreadPoolExecutor(max_workers=len(stacks)) as pool:
        futures = {}
        for item, stack in zip(items, stacks, strict=True):
            done.unfinished.add(item.stack)
            futures[pool.submit(bench.up_stack, stack, _prefixed(item.local))] = item
        for future in as_completed(futures):
            item = futures[future]
            try:
                outputs = getattr(future.result(), "outputs", None) or {}
            except BenchError as exc:
                errors.append(f"{item.stack}: {exc}")
                for command in commands:
                    command.cancel()
                continue
            done.unfinished.discard(item.stack)
            done.outputs[item.stack] = {k: getattr(v, "value", v) for k, v in outputs.items()}
    if errors:
        raise BenchError("; ".join(sorted(errors)))


def _prefixed(label: str) -> Callable[[str], None]:
    """Echo a CLI's lines with its stack's name: several run at once."""
    return lambda line: automation.echo(f"[{label}] {line}")


def _kubeconfig(done: _Deployment, item: Copy) -> str:
    outputs = done.outputs.get(item.stack) or {}
    if KUBECONFIG_OUTPUT not in outputs:
        raise BenchError(f"stack {item.stack!r} has no {KUBECONFIG_OUTPUT!r} output to reach its cluster (outputs: {', '.join(sorted(outputs)) or 'none'})")
    return str(outputs[KUBECONFIG_OUTPUT])


def _measure(result: FleetBenchResult, spec: FleetBenchSpec, done: _Deployment, deps: FleetDeps, log_path: Path | None) -> None:
    workload = spec.job.workload
    assert workload is not None
    result.job = {"name": workload.name, "namespace": workload.namespace, "outcome": "not finished", "worker": None}
    with tempfile.TemporaryDirectory(prefix="trainstack-bench-") as private:  # mode 0700
        manager = Path(private) / "manager"
        manager.write_text(_kubeconfig(done, spec.of(FLEET)[0]))
        workers = {}
        for item in spec.of(WORKER):
            assert item.worker is not None
            workers[item.worker] = Path(private) / f"worker-{item.worker}"
            workers[item.worker].write_text(_kubeconfig(done, item))
        with bench.phase(result, "wait", deps.clock):
            ran = deps.watch(manager, workers, workload.name, workload.namespace, spec.timeout_s)
    worker = next((c for c in spec.of(WORKER) if c.worker == ran.worker), None)
    result.job.update(outcome=ran.outcome.status, detail=ran.outcome.detail, worker=ran.worker, workerStack=worker.stack if worker else None)
    if ran.log is None:
        result.metrics = {"mfu": {"error": "no leader log: the job's pods were never read on a worker"}, "goodput": {"error": "no reference step time"}}
        return
    if log_path is not None:
        log_path.write_text(ran.log)
        result.log_file = str(log_path)
    result.metrics = bench.job_metrics(ran.log, workload, spec.job.machine, spec.project, deps.goodput)


# ---------------------------------------------------------------------------------------------
# Teardown alone, and what is left


def teardown_only(recipe: str, name: str, root: Path, open_stack: automation.StackOpener = automation.select) -> dict[str, Teardown | None]:
    """Tear down the copies a killed fleet bench `name` of `recipe` left, in reverse order (None:
    no such stack), each as `bench.teardown_only`; SIGINT and SIGTERM only report."""
    copies = copy_names(recipe, raw_stack_config(recipe, root), name, root)
    torn: dict[str, Teardown | None] = {}
    with SignalGuard() as guard:
        guard.tearing_down()
        for _, _, full, _ in reversed(copies):
            try:
                stack = open_stack(full, root)
            except StackNotFoundError:
                torn[full] = None
                continue
            torn[full] = bench.teardown(stack, time.sleep, time.monotonic, refresh=True)
    return torn


def leftovers(torn: dict[str, Teardown], root: Path, reap: str = "") -> list[str]:
    """One message per copy whose teardown failed."""
    return [bench.leftovers(stack, result, root, reap) for stack, result in torn.items() if not result.ok]


def reap_note(spec: FleetBenchSpec) -> str:
    return f"`trainstack reap --project {spec.project} --yes` deletes their labelled resources and networks once they have expired ({expires_label(spec.expires)})."


def is_fleet_job(recipe: str, root: Path) -> bool:
    """Whether stack file `recipe` is a workload stack on a fleet stack here."""
    try:
        return fleet_of(raw_stack_config(recipe, root), root) is not None
    except TrainstackError:  # no such stack file, or one that does not parse
        return False
