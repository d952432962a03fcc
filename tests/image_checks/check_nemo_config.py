"""Recipe 001's job config as NeMo 1.19 would compose it, with Hydra itself.

The plan (`trainstack plan a3high-nemo-gpt5b --out DIR`) holds the generated Hydra config (a
ConfigMap) and the launch's command-line overrides (the JobSet). This composes them with the Hydra
and OmegaConf releases NeMo 1.19 requires (requirements_lightning.txt at NVIDIA/NeMo@913e5e5:
hydra-core>=1.2.0,<1.3, omegaconf>=2.2,<2.3), over a skeleton of NeMo's megatron_gpt_config with
every key path it has at that commit (nemo-config-keys.txt), as the trainer's @hydra_runner does:
an override of a key NeMo 1.19 does not have, or one Hydra's grammar refuses, fails here as it
would at the job's start. Then it checks what the composed config says against the recipe
(its gpt-5b.yaml) and the image: the tokenizer files are the ones images/nemofw-23.05 bakes
(null would make NeMo download them at run time).

    python check_nemo_config.py PLAN_DIR images/nemofw-23.05
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import facts  # noqa: E402

# What the composed config must say: the recipe's gpt-5b.yaml (GoogleCloudPlatform/
# ai-infra-cluster-provisioning@ca1fbce sample_workloads/megatron-demo/nemo-example/
# nemo-configurations/gpt-5b.yaml) where trainstack renders it.
RECIPE = {
    "model.megatron_amp_O2": True,
    "model.transformer_engine": True,
    "model.optim.name": "distributed_fused_adam",
    "model.optim.lr": 1.6e-4,
    "model.optim.betas": [0.9, 0.95],
    "model.optim.sched.min_lr": 1.6e-5,
    "model.activations_checkpoint_granularity": "selective",
    "model.data.splits_string": "99990,8,2",
    "model.data.data_impl": "mmap",
}
TOKENIZER_FILES = {"model.tokenizer.vocab_file": "gpt2-vocab.json", "model.tokenizer.merge_file": "gpt2-merges.txt"}


def skeleton(keys: list[str]) -> dict[str, Any]:
    """NeMo's config with every key path present and null."""
    root: dict[str, Any] = {}
    for key in keys:
        *parents, leaf = key.split(".")
        node = root
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = None
    return root


def job(plan: Path) -> tuple:
    """(config name, its text, the Hydra overrides) from the plan's JobSet and ConfigMap."""
    manifests = plan / "manifests"
    (jobset_file,) = manifests.glob("jobset-*.yaml")
    jobset = yaml.safe_load(jobset_file.read_text())
    args = next(
        c["args"]
        for rj in jobset["spec"]["replicatedJobs"]
        for c in rj["template"]["spec"]["template"]["spec"]["containers"]
        if any(str(a).startswith("--config-name=") for a in c.get("args") or [])
    )
    name = next(a.split("=", 1)[1] for a in args if a.startswith("--config-name="))
    text = next(data[name] for path in manifests.glob("configmap-*.yaml") for data in [yaml.safe_load(path.read_text()).get("data") or {}] if name in data)
    overrides = [a for a in args[args.index(f"--config-name={name}") + 1 :] if not a.startswith("hydra.")]
    return name, text, overrides


def lookup(config: Any, key: str) -> Any:
    return OmegaConf.select(config, key, throw_on_missing=True)


def main(plan: str, context: str) -> int:
    name, text, overrides = job(Path(plan))
    keys = [line for line in (HERE / "nemo-config-keys.txt").read_text().splitlines() if line and not line.startswith("#")]
    with tempfile.TemporaryDirectory() as conf:
        Path(conf, "megatron_gpt_config.yaml").write_text(yaml.safe_dump(skeleton(keys)))
        Path(conf, name).write_text(text)
        with initialize_config_dir(config_dir=conf, version_base=None):
            config = compose(config_name=name[: -len(".yaml")], overrides=overrides)
    print(f"{name} and {len(overrides)} overrides compose under Hydra over NeMo 1.19's {len(keys)} keys")
    failures = [f"{key} is {lookup(config, key)!r}; the recipe has {want!r}" for key, want in RECIPE.items() if lookup(config, key) != want]
    baked = facts.read(Path(context))["tokenizer-files"].split()
    dockerfile = (Path(context) / "Dockerfile").read_text()
    failures += [f"{context}/Dockerfile does not write {path}" for path in baked if path not in dockerfile]
    for key, file_name in TOKENIZER_FILES.items():
        wanted = next((p for p in baked if p.endswith("/" + file_name)), None)
        value = lookup(config, key)
        if value != wanted:
            failures.append(f"{key} is {'null: NeMo downloads it at start' if value is None else repr(value)}; the image bakes {wanted}")
    for failure in failures:
        print(f"FAIL: {failure}")
    if not failures:
        print(f"the recipe's {len(RECIPE)} settings hold; the tokenizer files are the ones {context} bakes")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
