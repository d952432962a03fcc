"""Secret config stays a secret: in resource inputs, the plan and the pod spec."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from helpers import merge
from trainstack.app.deploy import secrets
from trainstack.app.deploy.stacks import raw_stack_config
from trainstack.app.ops.bench import BenchError, prepare
from trainstack.app.plan.plan import render

JOBSET = "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet"
CIPHERTEXT = "v1:c2VjcmV0LWNpcGhlcnRleHQ=:AAAAbbbbCCCCdddd"


def test_a_secret_env_value_reaches_the_pod_through_a_kubernetes_secret() -> None:
    raw = merge(raw_stack_config("a3ultra-405b"), {"trainstack:workload": {"env": {"HF_TOKEN": {"secure": CIPHERTEXT}}}})
    plan = render("a3ultra-405b", raw)
    text = plan.to_json()
    assert CIPHERTEXT not in text  # neither in the inputs nor anywhere else in the plan
    (secret,) = [r for r in plan.resources if r["type"] == "kubernetes:core/v1:Secret"]
    assert secret["inputs"]["metadata"]["name"] == "llama31-405b-env"
    assert secret["inputs"]["stringData"] == "[secret]"
    (jobset,) = [r for r in plan.resources if r["type"] == JOBSET]
    env = jobset["inputs"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["env"]
    entries = {e["name"]: e for e in env}
    assert entries["HF_TOKEN"] == {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "llama31-405b-env", "key": "HF_TOKEN"}}}
    assert entries["NCCL_WORK_FIFO_DEPTH"]["value"] == "4194304"  # plain values stay plain
    assert secret["urn"] in jobset["dependencies"]


def test_under_pulumi_up_the_stack_file_says_which_decrypted_value_was_secret() -> None:
    """The engine decrypts `trainstack:workload` and marks only the whole key secret."""
    decrypted = {"trainstack:workload": {"name": "j", "env": {"HF_TOKEN": "hf_plaintext", "LOG": "1"}}}
    stack_file = {"trainstack:workload": {"name": "j", "env": {"HF_TOKEN": {"secure": CIPHERTEXT}, "LOG": "1"}}}
    marked = secrets.mark_secrets(decrypted, {"trainstack:workload"}, stack_file)
    assert marked["trainstack:workload"]["env"] == {"HF_TOKEN": {"secure": "hf_plaintext"}, "LOG": "1"}
    # Without a stack file to tell, every env value of a secret section is kept secret.
    assert secrets.mark_secrets(decrypted, {"trainstack:workload"}, None)["trainstack:workload"]["env"] == {
        "HF_TOKEN": {"secure": "hf_plaintext"},
        "LOG": {"secure": "1"},
    }
    # A section the engine did not mark secret is left alone.
    assert secrets.mark_secrets(decrypted, set(), stack_file) == decrypted


def test_secret_leaves_are_found_at_any_depth() -> None:
    assert secrets.has_secure_leaf({"env": {"A": {"secure": "x"}}})
    assert secrets.has_secure_leaf([{"secure": "x"}])
    assert not secrets.has_secure_leaf({"env": {"A": "x"}, "secure_mode": True})


def test_bench_refuses_to_copy_a_nested_secret_as_a_plain_value() -> None:
    """Ciphertext is bound to the recipe stack's key; copied into a new stack's config it would be
    a plain string (and the job would get the ciphertext)."""
    raw = merge(raw_stack_config("a3ultra-405b"), {"trainstack:workload": {"env": {"HF_TOKEN": {"secure": CIPHERTEXT}}}})
    with pytest.raises(BenchError, match=r"cannot copy secret config to a new stack \(trainstack:workload\.env\.HF_TOKEN\)"):
        prepare("a3ultra-405b", raw, now=datetime(2026, 11, 23, tzinfo=UTC), ttl_s=8 * 3600.0, timeout_s=3600.0, taken=[])


def test_bench_makes_every_kind_of_storage_disposable() -> None:
    spec = prepare(
        "a3high-nemo-gpt5b", raw_stack_config("a3high-nemo-gpt5b"), now=datetime(2026, 11, 23, tzinfo=UTC), ttl_s=8 * 3600.0, timeout_s=3600.0, taken=[]
    )
    assert spec.config.storage.kind == "filestore" and spec.config.storage.disposable is True
