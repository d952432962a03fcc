"""A build whose base needs a registry login (recipe 001's NGC early-access base): the build
account may read the key's secret, the build logs in with it before building, and a stack that
would build such a base without a key is refused before anything registers. The login command is
run for real: /bin/sh runs the rendered line with a fake `gcloud` on PATH."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from helpers import merge, named
from trainstack.app.plan.plan import Plan, render
from trainstack.app.stacks import project_root, raw_stack_config
from trainstack.app.validation import validate
from trainstack.core.errors import ConfigError

STACK = "a3high-nemo-gpt5b"
PROJECT = "my-training-project"
SECRET = "ngc-api-key"
COMMAND = "command:local:Command"


@pytest.fixture(scope="module")
def plan() -> Plan:
    return render(STACK, raw_stack_config(STACK))


def registered(plan: Plan, type_token: str, name: str) -> dict[str, Any]:
    (found,) = [r for r in plan.resources if r["type"] == type_token and named(r["name"], name)]
    return found


def test_the_build_account_may_read_only_the_keys_secret(plan: Plan) -> None:
    grant = registered(plan, "gcp:secretmanager/secretIamMember:SecretIamMember", "image-builder-registry-login")["inputs"]
    assert grant["secretId"] == SECRET and grant["project"] == PROJECT
    assert grant["role"] == "roles/secretmanager.secretAccessor"
    assert grant["member"] == f"serviceAccount:a3high-nemo-gpt5b-builder@{PROJECT}.iam.gserviceaccount.com"
    build = registered(plan, COMMAND, "image-build")
    assert registered(plan, "gcp:secretmanager/secretIamMember:SecretIamMember", "image-builder-registry-login")["urn"] in build["dependencies"]


def test_secret_manager_is_enabled_for_the_build(plan: Plan) -> None:
    services = {r["inputs"]["service"] for r in plan.resources if r["type"] == "gcp:projects/service:Service"}
    assert "secretmanager.googleapis.com" in services
    other = render("a3high-litgpt", raw_stack_config("a3high-litgpt"))
    assert "secretmanager.googleapis.com" not in {r["inputs"]["service"] for r in other.resources if r["type"] == "gcp:projects/service:Service"}


FAKE_GCLOUD = """#!/usr/bin/env python3
import json, sys
args = sys.argv[1:]
config = next(a.split("=", 1)[1] for a in args if a.startswith("--config="))
with open(config) as f:
    text = f.read()
json.dump({"argv": args, "config": text}, open(sys.argv[0] + ".call", "w"))
print("sha256:" + "cd" * 32)
"""


def run_create(create: str, tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """Run the build's create line as the command provider does (`/bin/sh -c`, from the project
    root), with a `gcloud` on PATH that records its arguments and the config file it was given."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    gcloud = bin_dir / "gcloud"
    gcloud.write_text(FAKE_GCLOUD)
    gcloud.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "TMPDIR": str(tmp_path)}
    done = subprocess.run(["/bin/sh", "-c", create], cwd=project_root(), env=env, capture_output=True, text=True, timeout=30, check=False)
    return done, json.loads((bin_dir / "gcloud.call").read_text())


def test_the_build_logs_in_to_ngc_from_secret_manager_then_builds(plan: Plan, tmp_path: Path) -> None:
    create = registered(plan, COMMAND, "image-build")["inputs"]["create"]
    done, call = run_create(create, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "sha256:" + "cd" * 32  # what the image reference is pinned by
    assert list(tmp_path.glob("tmp*")) == []  # the config file is removed on exit
    argv = call["argv"]
    assert argv[:3] == ["builds", "submit", "images/nemofw-23.05"]
    assert not [a for a in argv if a.startswith("--tag")]  # --tag and --config exclude each other
    assert "--format=value(results.images[0].digest)" in argv
    config = yaml.safe_load(call["config"])
    reference = f"us-central1-docker.pkg.dev/{PROJECT}/a3high-nemo-gpt5b-images/nemofw-training:23.05-py3"
    login, build = config["steps"]
    assert login["secretEnv"] == ["REGISTRY_PASSWORD"] and login["entrypoint"] == "bash"
    # Cloud Build turns `$$` into `$`: the step's shell reads the secret, Docker gets NGC's user name.
    script = login["args"][1].replace("$$", "$")
    assert shlex.split(script) == ["printf", "%s", "$REGISTRY_PASSWORD", "|", "docker", "login", "nvcr.io", "--username", "$oauthtoken", "--password-stdin"]
    assert '"$REGISTRY_PASSWORD"' in script  # expanded by the step's shell, not Cloud Build
    assert build["args"] == ["build", "--tag", reference, "."]
    assert config["images"] == [reference]
    assert config["availableSecrets"]["secretManager"] == [{"versionName": f"projects/{PROJECT}/secrets/{SECRET}/versions/latest", "env": "REGISTRY_PASSWORD"}]


def test_a_build_without_a_login_keeps_its_tag_line(tmp_path: Path) -> None:
    plan = render("a3high-litgpt", raw_stack_config("a3high-litgpt"))
    create = registered(plan, COMMAND, "image-build")["inputs"]["create"]
    argv = shlex.split(create)
    assert argv[:4] == ["gcloud", "builds", "submit", "images/litgpt"]
    assert [a for a in argv if a.startswith("--tag=")] and not [a for a in argv if a.startswith("--config")]


def test_an_early_access_base_without_a_key_is_refused() -> None:
    raw = merge(raw_stack_config(STACK), {"trainstack:image": {"build": {"ngcApiKeySecret": None}}})
    with pytest.raises(ConfigError) as info:
        validate(STACK, raw, project_root())
    (problem,) = info.value.problems
    assert problem.startswith("trainstack:image.build.ngcApiKeySecret")
    assert "nvcr.io/ea-bignlp/nemofw-training:23.05-py3" in problem and "Secret Manager" in problem


@pytest.mark.parametrize("secret", ["", "a/b", "x" * 256, "ngc key"])
def test_a_secret_id_outside_secret_managers_rule_is_refused(secret: str) -> None:
    raw = merge(raw_stack_config(STACK), {"trainstack:image": {"build": {"ngcApiKeySecret": secret}}})
    with pytest.raises(ConfigError) as info:
        validate(STACK, raw, project_root())
    assert any(p.startswith("trainstack:image.build.ngcApiKeySecret") and "Secret Manager secret ID" in p for p in info.value.problems)


def test_the_stack_never_owns_the_key(plan: Plan) -> None:
    """Day 2: the key's secret is the user's. The stack holds only the read grant, so `pulumi
    destroy` removes that binding and leaves the secret and its versions; a refresh has no secret
    of ours to read back."""
    owned = {r["type"] for r in plan.resources if r["type"].startswith("gcp:secretmanager/")}
    assert owned == {"gcp:secretmanager/secretIamMember:SecretIamMember"}
    grant = registered(plan, "gcp:secretmanager/secretIamMember:SecretIamMember", "image-builder-registry-login")
    assert not grant["options"].get("protect") and not grant["options"].get("retainOnDelete")
