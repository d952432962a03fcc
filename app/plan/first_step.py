"""Time to first step, modelled: the deploy critical path (critical_path.py), then what a job waits
for on its nodes before its first training step, as configured and with and without each cut.

The phases after the deploy, each a figure with its basis (the facts in core/catalog/startup.py; the
rest, like creation_times, estimates to correct when `trainstack bench` measures otherwise):

- nodes: a job pool created empty (autoscaled from 0, DWS) gets its nodes only when the job asks;
- drivers: the GPU driver and device plugin (and GPUDirect installers) become ready on each node
  after it registers, overlapping whatever the deploy still does after the pool is created;
- image pull: the job image's pinned size at the per-node cold pull rate; with image streaming, only
  the bytes a container reads to start; with a secondary boot disk preloading the image, none;
- mounts: the pod's volumes and sandbox;
- preflight: the job's preflight on its own nodes (`preflight_seconds`: 0 for a job without one);
- restore: a resumed job reads its checkpoint (restore.py): its nodes' shares at the storage's read
  rate, with gcsfuse's parallel downloads or without; 0 for a job that does not checkpoint, None where
  the storage has no rate;
- framework start: imports, model construction and distributed (NCCL) initialization to step 0.

A job stack on a platform sees warm nodes: no node provisioning, drivers already up. Each scenario
also states its time on a warm platform (from the job's submission), where the cuts are measured
against the job's own start-up, not the cluster's creation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainstack.app.deploy.stack_file import JobContext
from trainstack.app.plan import restore
from trainstack.app.plan.cost import NODE_POOL
from trainstack.app.plan.creation_times import CREATION_TIMES, EMPTY_NODE_POOL, GPU_NODE_POOL, PRELOAD_BUILD
from trainstack.app.plan.critical_path import CriticalPath, critical_path, is_gpu_pool, weight_keys
from trainstack.components.image import ImageSpec
from trainstack.core import catalog, rules
from trainstack.infra.stack import StackConfig

DRIVERS_SECONDS = CREATION_TIMES["kubernetes:apps/v1:DaemonSet"].seconds
MOUNTS_SECONDS = 15.0
FRAMEWORK_START_SECONDS = 300.0
BASES = {
    "nodes": "a pool created empty gets its nodes when the job asks: a GPU pool's creation less its template and groups (creation_times)",
    "drivers": "driver, device plugin and GPUDirect DaemonSets rolled out on each node (creation_times DaemonSet), less the deploy's own tail after the pool",
    "imagePull": "the image's pinned size at the cold per-node pull rate (core/catalog/startup.py)",
    "mounts": "volumes (GCS FUSE sidecar, hostPath, PVCs) and the pod sandbox: seconds (estimate)",
    "preflight": "the job's preflight on its nodes (0: no preflight)",
    "restore": "a resumed job's checkpoint (model states, core/memory) in shares over its nodes, at the storage's per-node read rate (app/plan/restore.py, core/catalog/startup.py); 0: no checkpoints",
    "framework": "imports, model construction and NCCL initialization to step 0: minutes for a NeMo job (estimate; the bench's firstStep phase measures it)",
}
CUTS = ("streaming", "preload", "parallelDownloads")


@dataclass(frozen=True)
class Scenario:
    """One set of cuts: the seconds of each phase after the deploy (None: not modelled), and totals."""

    name: str
    streaming: bool
    preload: bool
    parallel: bool
    job_start: float
    phases: Mapping[str, float | None]
    warm: Mapping[str, float | None]

    @property
    def seconds(self) -> float:
        """From the start of `pulumi up` to the first step."""
        return self.job_start + sum(v or 0.0 for v in self.phases.values())

    @property
    def pods_ready_seconds(self) -> float:
        """From the job's admission (its pods created) to all its pods ready: what Kueue's waitForPodsReady times."""
        return sum(self.phases[k] or 0.0 for k in ("nodes", "drivers", "imagePull", "mounts"))

    @property
    def warm_seconds(self) -> float:
        """From the job's submission on a warm platform (its nodes and drivers up) to the first step."""
        return sum(v or 0.0 for v in self.warm.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "cuts": [c for c, on in zip(CUTS, (self.streaming, self.preload, self.parallel), strict=True) if on],
            "seconds": round(self.seconds, 1),
            "onWarmPlatformSeconds": round(self.warm_seconds, 1),
            "podsReadySeconds": round(self.pods_ready_seconds, 1),
            "phases": {k: None if v is None else round(v, 1) for k, v in self.phases.items()},
        }


@dataclass(frozen=True)
class FirstStepModel:
    """The job's time to first step in each scenario; `image` and its size's source, or why not sized."""

    image: str
    size_source: str | None
    deploy_seconds: float
    configured: Scenario
    scenarios: tuple[Scenario, ...]
    pods_ready: tuple[str, float] | None = None  # Kueue's waitForPodsReady.timeout (its key, seconds) on this stack's platform; None: not known here

    @property
    def without(self) -> Scenario:
        return self.scenarios[0]

    @property
    def with_all(self) -> Scenario:
        return self.scenarios[-1]

    def verdict(self) -> str:
        none, cut = self.without, self.with_all
        held = self.configured.job_start - none.job_start
        built = (
            f"; building the preload disk image here holds the GPU pools back {_min(held)} min on the first `up` (and on each new image)" if held > 0 else ""
        )
        if self.size_source is None:
            return f"the image {self.image} has no pinned size (core/catalog/startup.py): the cuts' effect on its pull is not modelled{built}"
        ratio, warm = cut.seconds / none.seconds, cut.warm_seconds / none.warm_seconds
        verdict = f"with every cut {_min(cut.seconds)} of {_min(none.seconds)} min ({ratio:.0%}); on a warm platform {_min(cut.warm_seconds)} of {_min(none.warm_seconds)} min ({warm:.0%}){built}"
        if ratio > 0.5:
            verdict += (
                f". Not halved from `up`: the deploy's {_min(self.deploy_seconds)} min (cluster, GPU pool) is untouched by the cuts "
                "(GKE: secondary boot disks do not add to node provisioning, nor shorten it); a job on a warm platform stack skips it"
            )
        return verdict

    def warnings(self) -> list[str]:
        """Where Kueue would evict the job as configured: its pods get ready after waitForPodsReady.timeout."""
        if self.pods_ready is None or self.configured.pods_ready_seconds <= self.pods_ready[1]:
            return []
        ready, (key, timeout) = self.configured.pods_ready_seconds, self.pods_ready
        # the image cuts that would fit it, its own nodes and drivers kept (the restore comes after Ready)
        pulled = ready - (self.configured.phases["imagePull"] or 0.0)
        fits = [s.name for s in self.scenarios if not s.parallel and pulled + (s.phases["imagePull"] or 0.0) <= timeout]
        helps = f"; {' and '.join(fits)} would fit it" if fits else ""
        waiting = "pull its image" if self.configured.phases["imagePull"] else "get ready"
        late = f"the job's pods are modelled ready {_min(ready)} min after admission, later than {key}"
        return [f"{late} ({_min(timeout)} min): Kueue evicts and requeues it while nodes {waiting}{helps}"]

    def to_dict(self) -> dict[str, Any]:
        return {
            "estimate": True,
            "warnings": self.warnings(),
            "image": self.image,
            "imageSizeSource": self.size_source,
            "deploySeconds": round(self.deploy_seconds, 1),
            "seconds": round(self.configured.seconds, 1),
            "configured": self.configured.to_dict(),
            "scenarios": {s.name: s.to_dict() for s in self.scenarios},
            "bases": BASES,
            "verdict": self.verdict(),
        }

    def _rows(self) -> list[str]:
        keys = list(self.without.phases)
        head = ["phase", *(s.name for s in self.scenarios)]
        rows = [head, ["job submitted (deploy path)", *(_min(s.job_start) for s in self.scenarios)]]
        rows += [[k, *("n/a" if s.phases[k] is None else _min(s.phases[k] or 0.0) for s in self.scenarios)] for k in keys]
        rows += [["to first step", *(_min(s.seconds) for s in self.scenarios)], ["on a warm platform", *(_min(s.warm_seconds) for s in self.scenarios)]]
        return ["\t".join(r) for r in rows]

    def to_table(self) -> str:
        rows = [r.split("\t") for r in self._rows()]
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = [f"time to first step (modelled): {_min(self.configured.seconds)} min as configured", ""]
        lines += ["  " + "  ".join(c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(r)) for r in rows]
        return "\n".join([*lines, "", f"  minutes; {self.verdict()}", *(f"WARNING: {w}" for w in self.warnings())])

    def to_markdown(self) -> str:
        rows = [r.split("\t") for r in self._rows()]
        lines = ["### Time to first step (modelled)", "", f"**{_min(self.configured.seconds)} min as configured**", ""]
        lines += ["| " + " | ".join(rows[0]) + " |", "|---|" + "---:|" * (len(rows[0]) - 1)]
        lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
        return "\n".join([*lines, "", f"Minutes. {self.verdict()}.", *(f"\n⚠️ {w}." for w in self.warnings())])


def _min(seconds: float) -> str:
    return f"{seconds / 60:.1f}"


def image_reference(image: ImageSpec, root: Path) -> str:
    """The job image's reference: the prebuilt one, or a build's base (its Dockerfile's first FROM)."""
    if image.prebuilt is not None:
        return image.prebuilt
    assert image.build is not None
    dockerfile = root / image.build.context / "Dockerfile"
    lines = dockerfile.read_text().splitlines() if dockerfile.is_file() else []
    base = next((line.split()[1] for line in lines if line.upper().startswith("FROM ") and len(line.split()) > 1), "")
    return base or f"{image.build.image_name}:{image.build.tag}"


def _pull(size: float | None, streaming: bool, preload: bool) -> float | None:
    if preload:
        return 0.0
    if size is None:
        return None
    return size * (catalog.STREAMED_FRACTION if streaming else 1.0) / catalog.COLD_PULL_BYTES_PER_S


def model(resources: list[dict[str, Any]], path: CriticalPath, ctx: JobContext, preflight_seconds: float) -> FirstStepModel | None:
    """The time-to-first-step model of a stack with a job (None for a platform or a fleet manager)."""
    image = getattr(ctx.stack_file, "image", None)
    if ctx.workload is None or not isinstance(image, ImageSpec):
        return None
    reference = image_reference(image, ctx.root)
    size = catalog.image_size(reference)
    gpu_pools = [r for r in resources if r["custom"] and r["type"] == NODE_POOL and is_gpu_pool(r)]
    empty = bool(gpu_pools) and all(not r["inputs"].get("nodeCount", r["inputs"].get("initialNodeCount", 0)) for r in gpu_pools)
    nodes = CREATION_TIMES[GPU_NODE_POOL].seconds - CREATION_TIMES[EMPTY_NODE_POOL].seconds if empty else 0.0
    # A preload disk image built here (trainstack:image.preload.build) holds the GPU pools back on the
    # deploy path; the scenarios take a disk image made elsewhere, as the cuts' comparison
    configured_start, configured_drivers = _start(path, gpu_pools, empty)
    job_start, drivers = configured_start, configured_drivers
    if image.preload and image.preload.build:
        job_start, drivers = _start(critical_path(_without_preload_build(resources)), gpu_pools, empty)

    resumed = restore.restore(ctx)
    no_checkpoints = ctx.workload.checkpoint_interval is None

    def scenario(name: str, streaming: bool, preload: bool, parallel: bool, start: tuple[float, float] = (job_start, drivers)) -> Scenario:
        rest = {"imagePull": _pull(size.bytes if size else None, streaming, preload), "mounts": MOUNTS_SECONDS, "preflight": preflight_seconds}
        rest["restore"] = resumed.seconds(parallel) if resumed else (0.0 if no_checkpoints else None)
        rest["framework"] = FRAMEWORK_START_SECONDS
        return Scenario(name, streaming, preload, parallel, start[0], {"nodes": nodes, "drivers": start[1], **rest}, rest)

    scenarios = (
        scenario("no cuts", False, False, False),
        scenario("streaming", True, False, False),
        scenario("streaming + preload", True, True, False),
        scenario("+ parallel downloads", True, True, True),
    )
    parallel = bool(resumed and resumed.configured_parallel)
    configured = scenario("as configured", image.streaming, image.preload is not None, parallel, (configured_start, configured_drivers))
    # Kueue's timeout as the stack renders it (StackConfig.pods_ready_budgets, the preflight's budget
    # too); a workload stack's is its platform's, not known here
    budgets = ctx.stack_file.pods_ready_budgets if isinstance(ctx.stack_file, StackConfig) else []
    timeout = (budgets[0][0], rules.duration_seconds(budgets[0][1])) if budgets else None
    return FirstStepModel(reference, size.source if size else None, job_start, configured, scenarios, timeout)


def _without_preload_build(resources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The plan as if the preload disk image were made elsewhere: its build gone, and the GPU pools no
    longer waiting on the image's component (the disk image's name comes from the image's digest)."""
    builds = {r["urn"] for r in resources if r["custom"] and PRELOAD_BUILD in weight_keys(r)}
    images = {r["parent"] for r in resources if r["urn"] in builds}
    parts = images | {r["urn"] for r in resources if r.get("parent") in images}

    def kept(r: dict[str, Any]) -> list[str]:
        deps = [d for d in r.get("dependencies") or [] if d not in builds]
        return [d for d in deps if d not in parts] if r["type"] == NODE_POOL and is_gpu_pool(r) else deps

    return [{**r, "dependencies": kept(r)} for r in resources if r["urn"] not in builds]


def _start(path: CriticalPath, gpu_pools: list[dict[str, Any]], empty: bool) -> tuple[float, float]:
    """When the job is submitted on the deploy path, and what its nodes' drivers still take after it."""
    pools_ready = max((p.ready for p in path.pools), default=0.0)
    job_start = max(path.jobset_ready or path.total_seconds, pools_ready)
    if not gpu_pools:  # a job stack: the platform's nodes and drivers are up
        return job_start, 0.0
    if empty:
        return job_start, DRIVERS_SECONDS
    return job_start, max(0.0, pools_ready + DRIVERS_SECONDS - job_start)
