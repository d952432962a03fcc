"""Mutation over the components' rules between a spec and its wiring (a zone against the cluster's
location, a flavor against the queue): every `yield` of a Problem written in an Args' `_cross` (a
spec's own rules are its validators, cased one by one in tests/test_<x>_spec.py) is removed in
turn, and some case must then go unrefused: this door is the only one these rules have. The mutants are read from the source, so a
new inline rule without a case fails here; no component rule can be deleted with every test green."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import sys
import textwrap
import typing
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import test_component_args as component_args
import test_component_rules as component_rules
from trainstack.components.args import Args
from trainstack.components.dra_driver import NvidiaDraDriverArgs
from trainstack.components.gpudirect_installers import GpuDirectInstallersArgs
from trainstack.components.kueue import GpuFlavor, KueueSpec, MultiKueueDispatch
from trainstack.components.multikueue import MultiKueueClustersArgs, MultiKueueQueue, MultiKueueWorker
from trainstack.components.multinic import GpuNetworksArgs, NicAttachment
from trainstack.components.node_daemons import MachineDaemonSetsArgs
from trainstack.components.node_pools import CpuNodePoolArgs, CpuPoolSpec, ExtraNetwork, GpuNodePoolArgs, GpuPoolSpec
from trainstack.components.storage.gcs import BucketSpec, CheckpointBucketArgs
from trainstack.components.workload_identity import JobIdentityArgs
from trainstack.core.errors import ArgsError, Problem, key_path

KUEUE, CLUSTER, FILESTORE = component_rules.KUEUE, component_rules.CLUSTER, component_rules.FILESTORE
MEGA = "a3-megagpu-8g"
WORKERS = [MultiKueueWorker("east", "kubeconfig-east"), MultiKueueWorker("west", "kubeconfig-west")]
A4X_DRANET = GpuNodePoolArgs(
    spec=GpuPoolSpec.model_validate(
        {
            "name": "a4x",
            "zones": ["us-central1-b"],
            "machineType": "a4x-highgpu-4g",
            "nodeCount": 18,
            "reservation": {"affinity": "specific", "name": "a4x-reservation"},
            "networking": "dranet",
        }
    ),
    project="my-project",
    location="us-central1",
    cluster="c",
    service_account="sa@example.com",
)
CPU_POOL = CpuNodePoolArgs(CpuPoolSpec.model_validate({"zones": ["us-central1-a"]}), "my-project", "us-central1", "c", "sa@example.com")
BUCKET = CheckpointBucketArgs(BucketSpec.model_validate({"name": "ckpt", "location": "us-central1"}), "my-project")
IDENTITY = JobIdentityArgs(namespace="ml", service_account="trainer", prefix="hello", project="my-project", project_number="123", bucket="ckpt")

# (valid Args, the change that breaks one inline rule, the field it names, words of its rule)
Case = tuple[Any, dict[str, Any], str, str]
CASES: list[Case] = [
    (NvidiaDraDriverArgs("a4x-highgpu-4g"), {"machine_type": MEGA}, "machine_type", "has no multi-node NVLink domain"),
    (GpuDirectInstallersArgs(MEGA), {"machine_type": "a2-highgpu-8g"}, "machine_type", "there is nothing to install"),
    (MachineDaemonSetsArgs("a4x-maxgpu-4g-metal"), {"machine_type": MEGA}, "machine_type", "needs no node DaemonSets"),
    (CLUSTER, {"dranet": True}, "dranet", "needs Dataplane V2"),
    (FILESTORE, {"location": "us-central1"}, "location", "zone"),
    (KUEUE, {"flavors": [GpuFlavor("mega", "gpus", MEGA, 2, autoscaled=True)]}, "waitForPodsReady.timeout", "must be at least"),  # its default 10m
    (KUEUE, {"spec": KueueSpec()}, "localQueue", "required key is missing"),  # the stack file's default queue is the stack's
    (KUEUE, {"flavors": [GpuFlavor("mega", "gpus", MEGA, 2, queue="other")]}, "flavors", "none is of the main queue"),
    (KUEUE, {"flavors": [GpuFlavor("mega", "gpus", MEGA, 2, queued=True)], "multikueue": MultiKueueDispatch()}, "flavors", "a MultiKueue manager runs no job"),
    (KUEUE, {"flavors": [GpuFlavor("mega", "gpus", MEGA, 2), GpuFlavor("ultra", "ultra", "a3-ultragpu-8g", 2)]}, "flavors", "mixes machine types"),
    (
        GpuNetworksArgs([NicAttachment("rdma-0", "rdma", "v", "s")]),
        {"attachments": [NicAttachment("rdma-0", "rdma", "v", "s")] * 2},
        "attachments[1].name",
        "is already used by another network",
    ),
    (IDENTITY, {"project_number": None}, "project_number", "needed with a bucket"),
    (A4X_DRANET, {"extra_networks": [ExtraNetwork("vpc", "subnet")]}, "extra_networks", "GKE makes the NIC networks"),
    (CPU_POOL, {"spec": CpuPoolSpec()}, "zones", "required key is missing"),  # the stack file's default zones are the stack's
    (BUCKET, {"spec": BucketSpec.model_validate({"location": "us-central1"})}, "name", "required key is missing"),  # the stack's default
    (component_args.TENSORBOARD_ARGS, {"log_dir": "/elsewhere/runs"}, "log_dir", "is not on the shared storage"),
    (component_args.JOB_ARGS, {"name": "n" * 60}, "name", "is too long"),
    (MultiKueueQueue("cq", ["east"]), {"workers": [f"w{i}" for i in range(21)]}, "workers", "at most 20 workers"),
    (MultiKueueQueue("cq", ["east"]), {"workers": ["east", "east"]}, "workers", "a worker at most once"),
    (
        MultiKueueClustersArgs(WORKERS, [MultiKueueQueue("cq", ["east"])]),
        {"queues": [MultiKueueQueue("cq", ["north"])]},
        "queues[0].workers",
        "not among the workers",
    ),
]


def refused(case: Case) -> bool:
    """Whether the broken Args carry the case's problem."""
    args, change, field, rule = case
    return any(key_path(p.key) == field and rule in p.rule for p in problems(args, change))


def problems(args: Any, change: dict[str, Any]) -> list[Problem]:
    """The problems of `args` changed: Args, or (Args class, the dict the package passes)."""
    if not isinstance(args, tuple):
        return dataclasses.replace(args, **change).problems()
    cls, given = args
    try:
        cls.checked({**given, **change}, cls, "mutant")
    except ArgsError as error:
        return error.problems
    return []


def _args_classes(base: type[Args] = Args) -> Iterator[type[Args]]:
    sub: type[Args]
    for sub in base.__subclasses__():
        yield sub
        yield from _args_classes(sub)


def _inline(node: ast.AST) -> bool:
    """A statement that yields a Problem written in `_cross` itself."""
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Yield | ast.YieldFrom)


def _without(cls: type[Args], index: int) -> Callable[..., Iterator[Any]]:
    """`cls._cross` with its `index`-th inline yield removed, compiled in its module."""
    function = cls.__dict__["_cross"]
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    definition = tree.body[0]
    assert isinstance(definition, ast.FunctionDef)
    definition.returns = None  # annotations name the module's imports; the mutant needs none
    target = [n for n in ast.walk(tree) if _inline(n)][index]

    class Cut(ast.NodeTransformer):
        def visit_Expr(self, node: ast.Expr) -> ast.AST:
            # `if False: yield` keeps the function a generator when its only yield goes.
            return ast.parse("if False:\n    yield").body[0] if node is target else node

    namespace: dict[str, Any] = {}
    exec(
        compile(ast.fix_missing_locations(Cut().visit(tree)), inspect.getsourcefile(function) or "<mutant>", "exec"),
        vars(sys.modules[cls.__module__]),
        namespace,
    )
    mutant: Callable[..., Iterator[Any]] = namespace["_cross"]
    return mutant


MUTANTS = [
    (cls, i, ast.unparse(site))
    for cls in _args_classes()
    if "_cross" in cls.__dict__
    for i, site in enumerate(n for n in ast.walk(ast.parse(textwrap.dedent(inspect.getsource(cls.__dict__["_cross"])))) if _inline(n))
]


# test_component_rules' boundary cases (just outside each limit) kill mutants too.
def _boundary(case: tuple[Any, ...]) -> Case:
    _, component, args, _, outside, field, rule = case
    return ((typing.get_type_hints(component.__init__)["args"], args) if isinstance(args, dict) else args), outside, field, rule


BOUNDARY = [_boundary(case) for case in component_rules.CASES]


@pytest.mark.parametrize("case", CASES, ids=[f"{type(c[0]).__name__}:{c[2]}" for c in CASES])
def test_each_case_breaks_its_rule_from_a_valid_base(case: Case) -> None:
    """The base is valid and the change breaks the rule the case names."""
    assert case[0].problems() == []
    assert refused(case)


@pytest.mark.parametrize(("cls", "index", "site"), MUTANTS, ids=[f"{cls.__name__}:{i}" for cls, i, _ in MUTANTS])
def test_removing_an_inline_rule_fails_a_case(cls: type[Args], index: int, site: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cls, "_cross", _without(cls, index))
    survived = [case for case in (*CASES, *BOUNDARY) if not refused(case)]
    assert survived, f"{cls.__name__}._cross without `{site[:100]}` still refuses every case: add one that only it refuses"


def test_the_mutants_are_found() -> None:
    """The source reader sees the inline rules (one per yield), so the harness cannot pass empty."""
    assert len(MUTANTS) >= len(CASES)
    assert {cls.__name__ for cls, _, _ in MUTANTS} >= {type(case[0]).__name__ for case in CASES}
