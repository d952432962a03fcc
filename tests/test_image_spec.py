"""The image's spec (components/image.py `ImageSpec`, with `BuildSpec` and `PreloadSpec`): each rule
of the `trainstack:image` section refuses its value through the one door, the spec's model, which
the stack file's section and (for the build) the WorkloadImage package inputs both are. One case a
rule: with the rule deleted, its case passes the model and the test fails. A build logs in to NGC
with `ngcApiKeySecret`, or to any registry with `registryLogin` (the package's input as it was)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from helpers import refuses
from trainstack.components.image import NGC_USERNAME, BuildSpec, ImageSpec, PreloadSpec, WorkloadImage, WorkloadImageArgs
from trainstack.core import catalog
from trainstack.core.errors import ArgsError
from trainstack.infra.stack import StackConfig, WorkloadStackConfig

BUILD = {"context": "images/nemo", "imageName": "nemo", "tag": "24.07"}
STREAMED = "us-central1-docker.pkg.dev/my-project/images/nemo:24.07"
# (rule, the spec's model, the keys it refuses, the key the problem names, a text of the rule's message)
CASES: list[tuple[str, type[BaseModel], dict[str, Any], tuple[str | int, ...], str]] = [
    ("build_or_prebuilt", ImageSpec, {}, ("build",), "set exactly one of build"),
    ("not_both", ImageSpec, {"build": BUILD, "prebuilt": "nvcr.io/nvidia/nemo:24.07"}, ("build",), "set exactly one of build"),
    ("streamable", ImageSpec, {"prebuilt": "nvcr.io/nvidia/nemo:24.07", "streaming": True}, ("streaming",), "serves only images in Artifact Registry"),
    (
        "preload_build_of_a_build",
        ImageSpec,
        {"prebuilt": STREAMED, "streaming": True, "preload": {"build": True}},
        ("preload", "build"),
        "builds a disk image from the image this stack builds",
    ),
    ("preload_streams", ImageSpec, {"build": BUILD, "preload": {"build": True}}, ("preload",), "only with image streaming"),
    ("disk_image_or_build", PreloadSpec, {}, ("diskImage",), "set exactly one of diskImage"),
    ("reference_grammar", ImageSpec, {"prebuilt": "NVCR.io/Nvidia/NeMo:24.07"}, ("prebuilt",), "must be an image reference"),
    ("context_inside", BuildSpec, {**BUILD, "context": "../elsewhere"}, ("context",), "must be a relative path inside the repository"),
]


@pytest.mark.parametrize(("model", "keys", "key", "text"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_an_image_rule_refuses_its_value_naming_the_key_as_written(model: type[BaseModel], keys: dict[str, Any], key: tuple[str | int, ...], text: str) -> None:
    refuses(model, keys, key, text)


def test_the_bases_pass_and_the_stack_files_sections_are_the_spec() -> None:
    """The keys the cases change are valid; both stack-file kinds' `trainstack:image` is this model."""
    assert ImageSpec.model_validate({"build": BUILD, "streaming": True, "preload": {"build": True}}).preload == PreloadSpec(build=True)
    assert ImageSpec.model_validate(
        {"prebuilt": STREAMED, "streaming": True, "preload": {"diskImage": "projects/my-project/global/images/nemo-preload"}}
    ).streaming
    assert StackConfig.model_fields["image"].annotation is WorkloadStackConfig.model_fields["image"].annotation is ImageSpec


PACKAGE = {**BUILD, "project": "my-project", "region": "us-central1", "repository_id": "repo", "context_digest": "0" * 64}
PACKAGE |= {"builder_account_id": "builder", "staging_bucket": "my-project-builds"}


def test_the_package_builds_by_the_specs_rules() -> None:
    with pytest.raises(ArgsError) as refused:
        WorkloadImageArgs.checked({**PACKAGE, "context": "/abs"}, WorkloadImage, "image")
    assert [p.key for p in refused.value.problems] == [("context",)]


def test_a_build_logs_in_to_ngc_by_its_secret_or_to_any_registry_by_a_login() -> None:
    ngc = WorkloadImageArgs.checked({**PACKAGE, "ngcApiKeySecret": "ngc-key"}, WorkloadImage, "image").registry_login
    assert ngc is not None and (ngc.server, ngc.username, ngc.secret) == (catalog.NGC_REGISTRY, NGC_USERNAME, "ngc-key")
    login = {"server": "ghcr.io", "username": "me", "secret": "ghcr-token"}
    other = WorkloadImageArgs.checked({**PACKAGE, "registryLogin": login}, WorkloadImage, "image").registry_login
    assert other is not None and (other.server, other.username, other.secret) == ("ghcr.io", "me", "ghcr-token")
    assert BuildSpec.model_validate({**BUILD, "registryLogin": login}).login == other  # the stack file's key, the same login


def test_a_build_takes_one_login() -> None:
    login = {"server": "ghcr.io", "username": "me", "secret": "k"}
    with pytest.raises(ArgsError) as refused:
        WorkloadImageArgs.checked({**PACKAGE, "ngcApiKeySecret": "k", "registryLogin": login}, WorkloadImage, "image")
    ((found, _, rule),) = refused.value.problems
    assert found == ("registryLogin",) and rule.startswith("set at most one of ngcApiKeySecret")
