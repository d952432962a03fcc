"""Secret config stays a Pulumi secret all the way to the resource that uses it.

`pulumi config set --secret --path 'trainstack:workload.env.HF_TOKEN' ...` writes
`{secure: <ciphertext>}` in the stack file. Under `pulumi up` the engine hands the program the
decrypted `trainstack:workload` object and marks only the whole top-level key secret, so which
leaf was secret is read back from the stack file; without one (config from elsewhere), every
value of the env map is taken for secret. Secret values are wrapped as `{"secure": value}`,
which the config model reads as `Secure`, and the training job passes them through a Kubernetes
Secret, never as a literal in the pod spec or the state. Offline, the stack file's ciphertext
is the value and the plan shows `[secret]`.
"""

from __future__ import annotations

from typing import Any

from pulumi.runtime import config as runtime_config

WORKLOAD = "trainstack:workload"


def is_secure(value: Any) -> bool:
    return isinstance(value, dict) and set(value) == {"secure"}


def has_secure_leaf(value: Any) -> bool:
    if is_secure(value):
        return True
    if isinstance(value, dict):
        return any(has_secure_leaf(v) for v in value.values())
    if isinstance(value, list):
        return any(has_secure_leaf(v) for v in value)
    return False


def secure_paths(value: Any, path: str = "") -> list[str]:
    """Where `value` holds encrypted leaves, as `pulumi config set --path` spells them."""
    if is_secure(value):
        return [path]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in secure_paths(v, f"{path}.{k}" if path else str(k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in secure_paths(v, f"{path}[{i}]")]
    return []


def secret_keys(raw: dict[str, Any]) -> set[str]:
    """The top-level keys the engine marked secret."""
    return set(runtime_config.get_config_secret_keys_env()) | {k for k in raw if runtime_config.is_config_secret(k)}


def _secure_env_names(stack_file: dict[str, Any] | None) -> set[str] | None:
    """Env names the stack file stores encrypted; None when it cannot tell (no file, no such
    section, or the whole section encrypted)."""
    workload = (stack_file or {}).get(WORKLOAD)
    env = workload.get("env") if isinstance(workload, dict) else None
    if not isinstance(env, dict):
        return None
    return {name for name, value in env.items() if is_secure(value)}


def mark_secrets(raw: dict[str, Any], secret: set[str], stack_file: dict[str, Any] | None) -> dict[str, Any]:
    """`raw` with each secret value of `trainstack:workload.env` wrapped as `{"secure": value}`."""
    workload = raw.get(WORKLOAD)
    if WORKLOAD not in secret or not isinstance(workload, dict) or not isinstance(workload.get("env"), dict):
        return raw
    names = _secure_env_names(stack_file)
    env = {name: {"secure": value} if (names is None or name in names) and not is_secure(value) else value for name, value in workload["env"].items()}
    return {**raw, WORKLOAD: {**workload, "env": env}}
