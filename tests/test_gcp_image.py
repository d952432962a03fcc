"""The workload image: a prebuilt reference, or an Artifact Registry repository and a Cloud Build."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from gcp_support import BUCKET, COMMAND, PROJECT, REGION, REPOSITORY, by_name, of_type, render
from trainstack.app.deploy.stacks import project_root
from trainstack.components.image import context_digest, pinned_reference
from trainstack.core import catalog
from trainstack.infra.gcp import dockerfile_bases

DIGEST = "sha256:" + "ab" * 32
TAGGED = f"{REGION}-docker.pkg.dev/{PROJECT}/a3ultra-405b-images/nemo-workload:24.07"


def test_prebuilt_image_needs_no_repository_or_build() -> None:
    rendered = render("a3ultra")
    assert not of_type(rendered, REPOSITORY)
    assert not of_type(rendered, COMMAND)
    assert rendered.outputs["image"] == ("us-central1-docker.pkg.dev/deeplearning-images/reproducibility/pytorch-gpu-goodput:nemo24.12.01-A3Mega-20250605")


def test_docker_repository_in_the_cluster_region() -> None:
    repository = by_name(render("a3mega"), REPOSITORY, "image-repository").inputs
    assert repository["repositoryId"] == "a3ultra-405b-images"
    assert repository["format"] == "DOCKER"
    assert repository["location"] == REGION
    assert repository["labels"] == {"managed-by": "trainstack", "trainstack-stack": "a3ultra-405b"}


def test_configured_repository_name() -> None:
    repository = by_name(render("a3mega", trainstack_image={"repository": "shared"}), REPOSITORY, "image-repository").inputs
    assert repository["repositoryId"] == "shared"


def test_cloud_build_of_the_context_rebuilds_when_the_context_changes() -> None:
    build = by_name(render("a3mega"), COMMAND, "image-build")
    argv = shlex.split(build.inputs["create"])
    assert argv[:4] == ["gcloud", "builds", "submit", "images/nemo-24.07"]
    assert set(argv[4:]) == {
        f"--project={PROJECT}",
        f"--region={REGION}",
        f"--tag={TAGGED}",
        "--machine-type=e2-highcpu-32",
        "--timeout=2h",
        f"--service-account=projects/{PROJECT}/serviceAccounts/a3ultra-405b-builder@{PROJECT}.iam.gserviceaccount.com",
        f"--gcs-source-staging-dir=gs://{PROJECT}-a3ultra-405b-builds/source",
        f"--gcs-log-dir=gs://{PROJECT}-a3ultra-405b-builds/logs",
        "--suppress-logs",
        "--quiet",
        "--format=value(results.images[0].digest)",
    }
    assert build.inputs["triggers"] == [context_digest(project_root() / "images/nemo-24.07")]


def test_the_build_runs_as_its_own_account_with_exactly_the_grants_a_build_needs() -> None:
    """Not the project's default build account, whose automatic grants organizations often
    disable: push to this repository, read its source and write its logs in its own staging
    bucket, write to Cloud Logging (cloud.google.com/build/docs/securing-builds/
    configure-user-specified-service-accounts)."""
    rendered = render("a3mega")
    account = by_name(rendered, "gcp:serviceaccount/account:Account", "image-builder")
    member = f"serviceAccount:a3ultra-405b-builder@{PROJECT}.iam.gserviceaccount.com"
    grants = {r.name: (r.type, r.inputs["role"], r.inputs["member"]) for r in rendered.registrations if r.name.startswith("image-builder-")}
    assert grants == {
        "image-builder-push": ("gcp:artifactregistry/repositoryIamMember:RepositoryIamMember", "roles/artifactregistry.writer", member),
        "image-builder-staging": ("gcp:storage/bucketIAMMember:BucketIAMMember", "roles/storage.objectAdmin", member),
        "image-builder-logs": ("gcp:projects/iAMMember:IAMMember", "roles/logging.logWriter", member),
    }
    staging = by_name(rendered, BUCKET, "image-staging").inputs
    assert staging["publicAccessPrevention"] == "enforced" and staging["forceDestroy"] is True
    build = by_name(rendered, COMMAND, "image-build")
    assert {r.urn for r in rendered.registrations if r.name.startswith("image-builder-")} <= set(build.dependencies)
    assert account.inputs["accountId"] == "a3ultra-405b-builder"


def test_image_output_falls_back_to_the_tag_without_a_build_digest() -> None:
    # The mock engine runs no command, so there is no digest on stdout.
    assert render("a3mega").outputs["image"] == TAGGED


@pytest.mark.parametrize(
    ("stdout", "expected"),
    [
        (f"{DIGEST}\n", f"{REGION}-docker.pkg.dev/{PROJECT}/a3ultra-405b-images/nemo-workload@{DIGEST}"),
        (f"pushing\ndigest: sha256:{'00' * 32}\n{DIGEST}\n", f"{REGION}-docker.pkg.dev/{PROJECT}/a3ultra-405b-images/nemo-workload@{DIGEST}"),
        ("", TAGGED),
        (None, TAGGED),
    ],
)
def test_reference_is_pinned_by_the_printed_digest(stdout: str | None, expected: str) -> None:
    assert pinned_reference(TAGGED, stdout) == expected


def test_context_digest_is_stable_and_sees_every_change(tmp_path: Path) -> None:
    (tmp_path / "Dockerfile").write_text("FROM scratch\n")
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "a.txt").write_text("a")
    first = context_digest(tmp_path)
    assert context_digest(tmp_path) == first
    (tmp_path / "lib" / "a.txt").write_text("b")
    second = context_digest(tmp_path)
    assert second != first
    (tmp_path / "lib" / "a.txt").rename(tmp_path / "lib" / "c.txt")
    assert context_digest(tmp_path) not in (first, second)


@pytest.mark.parametrize("context", ["nemo-24.07", "nemofw-23.05", "litgpt", "mistral"])
def test_build_contexts_start_from_a_catalog_image(context: str) -> None:
    bases = dockerfile_bases(project_root() / "images" / context / "Dockerfile")
    assert bases, f"images/{context}/Dockerfile has no FROM"
    assert set(bases) <= {image.ref for image in catalog.IMAGES.values()}
