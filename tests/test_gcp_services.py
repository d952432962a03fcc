"""Project services: the APIs each stack needs, never disabled on destroy, and waited for."""

from __future__ import annotations

import re

import pulumi
import pytest

from gcp_support import (
    BUCKET,
    CLUSTER,
    COMMAND,
    FILESTORE,
    NETWORK,
    NODE_POOL,
    REPOSITORY,
    SERVICE,
    by_name,
    of_type,
    render,
)
from helpers import render_with
from trainstack.app.plan import inputcheck
from trainstack.components.gcp_services import ProjectServices, ProjectServicesArgs

BASE = {"container", "compute", "iam", "cloudresourcemanager", "storage", "logging", "monitoring"}


@pytest.mark.parametrize(
    ("variant", "extra"),
    [("a3ultra", set()), ("a3mega", {"file", "artifactregistry", "cloudbuild"}), ("a3high", {"file"}), ("a2", set())],
)
def test_enables_the_apis_the_stack_calls(variant: str, extra: set[str]) -> None:
    services = of_type(render(variant), SERVICE)
    assert {s.name for s in services} == {f"services-{name}" for name in BASE | extra}
    assert {s.inputs["service"] for s in services} == {f"{name}.googleapis.com" for name in BASE | extra}


@pytest.mark.parametrize("variant", ["a3ultra", "a3mega"])
def test_services_are_never_disabled_on_destroy(variant: str) -> None:
    services = of_type(render(variant), SERVICE)
    assert services
    for service in services:
        assert service.inputs["disableOnDestroy"] is False, service.name
        assert service.inputs["disableDependentServices"] is False, service.name


@pytest.mark.parametrize(
    ("variant", "type_token", "name", "apis"),
    [
        ("a3ultra", CLUSTER, "cluster", {"container", "compute", "logging", "monitoring"}),
        ("a3ultra", NODE_POOL, "gpu-pool-a3-ultra", {"container"}),
        ("a3ultra", NETWORK, "gpu-nics-a3-ultragpu-8g-rdma", {"compute"}),
        ("a3ultra", BUCKET, "bucket", {"storage"}),
        ("a3ultra", "gcp:serviceaccount/account:Account", "node-sa", {"iam"}),
        ("a3ultra", "gcp:projects/iAMMember:IAMMember", "node-sa-logging.logWriter", {"cloudresourcemanager"}),
        ("a3mega", FILESTORE, "filestore", {"file"}),
        ("a3mega", REPOSITORY, "image-repository", {"artifactregistry"}),
        ("a3mega", COMMAND, "image-build", {"cloudbuild", "artifactregistry"}),
        ("a2", "gcp:compute/disk:Disk", "nfs-disk", {"compute"}),
    ],
)
def test_resources_wait_for_the_apis_they_call(variant: str, type_token: str, name: str, apis: set[str]) -> None:
    rendered = render(variant)
    services = {s.urn: s.name.removeprefix("services-") for s in of_type(rendered, SERVICE)}
    waited = {services[u] for u in by_name(rendered, type_token, name).dependencies if u in services}
    assert apis <= waited


@pytest.mark.parametrize("variant", ["a3ultra", "a3mega", "a3high", "a2", "flex"])
def test_every_input_is_known_to_the_provider_sdks(variant: str) -> None:
    assert inputcheck.check(render(variant).registrations) == []


def test_need_rejects_an_api_that_is_not_enabled() -> None:
    def body(ctx) -> None:
        services = ProjectServices("services", ProjectServicesArgs("my-training-project", ["compute.googleapis.com"]))
        with pytest.raises(KeyError, match=re.escape("file.googleapis.com")):
            services.need("file.googleapis.com")
        pulumi.export("need", len(services.need("compute.googleapis.com")))

    assert render_with(body).outputs["need"] == 1
