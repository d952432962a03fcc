"""Recipe 001's job reads the GPT-2 vocabulary and merges its image bakes, not a download.

NeMo's megatron_gpt_config leaves model.tokenizer.vocab_file and merge_file null, and NeMo then
downloads both at run time (NVIDIA/NeMo@913e5e5 nemo/collections/nlp/modules/common/megatron/
megatron_utils.py). images/nemofw-23.05 bakes them (base-image.txt `tokenizer-files`); this reads
the plan of the a3high-nemo-gpt5b stack (`trainstack plan ... --out DIR`) and checks that the
rendered Hydra config, or a command-line override, names exactly those files, and that the
Dockerfile writes them.

    python check_nemo_tokenizer.py PLAN_DIR images/nemofw-23.05
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import facts  # noqa: E402

KEYS = {"vocab_file": "gpt2-vocab.json", "merge_file": "gpt2-merges.txt"}


def effective(plan: Path) -> dict[str, object]:
    manifests = plan / "manifests"
    (jobset_file,) = manifests.glob("jobset-*.yaml")
    jobset = yaml.safe_load(jobset_file.read_text())
    args = next(
        c["args"]
        for job in jobset["spec"]["replicatedJobs"]
        for c in job["template"]["spec"]["template"]["spec"]["containers"]
        if any(str(a).startswith("--config-name=") for a in c.get("args") or [])
    )
    config_name = next(a.split("=", 1)[1] for a in args if a.startswith("--config-name="))
    config: dict = {}
    for path in manifests.glob("configmap-*.yaml"):
        data = yaml.safe_load(path.read_text()).get("data") or {}
        if config_name in data:
            config = yaml.safe_load(data[config_name])
    tokenizer = ((config.get("model") or {}).get("tokenizer")) or {}
    values: dict[str, object] = {key: tokenizer.get(key) for key in KEYS}
    for arg in args:  # Hydra overrides win over the config: key=value, +key=value, ++key=value
        name, _, value = str(arg).lstrip("+").partition("=")
        for key in KEYS:
            if name == f"model.tokenizer.{key}":
                values[key] = value
    return values


def main(plan: str, context: str) -> int:
    baked = facts.read(Path(context))["tokenizer-files"].split()
    dockerfile = (Path(context) / "Dockerfile").read_text()
    failures = [f"{context}/Dockerfile does not write {path}" for path in baked if path not in dockerfile]
    values = effective(Path(plan))
    for key, file_name in KEYS.items():
        wanted = next((p for p in baked if p.endswith("/" + file_name)), None)
        value = values[key]
        if value != wanted:
            how = "null: NeMo downloads it when training starts" if value is None else repr(value)
            failures.append(f"model.tokenizer.{key} is {how}; the image bakes {wanted}")
        else:
            print(f"model.tokenizer.{key} = {value} (baked by {context})")
    for failure in failures:
        print(f"FAIL: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
