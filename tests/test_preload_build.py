"""The preload disk image built by the image's Cloud Build path (`trainstack:image.preload.build`): a
second build runs gke-disk-image-builder at its pinned commit on the image pinned by its digest, as the
build account with the least compute rights the tool needs, its VM as an account of its own; the disk
image is named from the image's digest, so a new image replaces the GPU pools that boot from it; the
first-step model shows what the build holds back."""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

import pytest

from gcp_support import COMMAND, NODE_POOL, PROJECT, REGION, ZONE, by_name, closure, first_gpu_pool, of_type, render
from helpers import merge
from trainstack.app.deploy.stacks import raw_stack_config
from trainstack.app.plan.engine import run
from trainstack.app.plan.plan import render as plan
from trainstack.app.review.diff import diff_plans
from trainstack.app.review.semantics import REPLACE
from trainstack.components.image import DISK_IMAGE_NAME_MAX, disk_image_name, preload_command
from trainstack.core import catalog, rules
from trainstack.core.errors import ConfigError

PRELOAD = {"trainstack_image": {"streaming": True, "preload": {"build": True}}, "trainstack_cluster": {"versionPrefix": "1.33."}}
TAGGED = f"{REGION}-docker.pkg.dev/{PROJECT}/a3ultra-405b-images/nemo-workload:24.07"
BUILDER = f"a3ultra-405b-builder@{PROJECT}.iam.gserviceaccount.com"
VM = f"a3ultra-405b-preload@{PROJECT}.iam.gserviceaccount.com"


def build_config(create: str) -> dict[str, Any]:
    """The Cloud Build config the preload command writes before submitting it."""
    found = re.search(r"printf '%s' ('(?:[^']|'\\'')*') > \"\$config\"", create)
    assert found, create
    return dict(json.loads(shlex.split(found.group(1))[0]))


def flags(config: dict[str, Any]) -> dict[str, list[str]]:
    """The gke-disk-image-builder flags of the config's one step, by name."""
    (step,) = config["steps"]
    script = step["args"][1]
    words = shlex.split(script.split("go run ./cli ", 1)[1])
    out: dict[str, list[str]] = {}
    for word in words:
        key, _, value = word.partition("=")
        out.setdefault(key, []).append(value)
    return out


def test_the_preload_build_runs_the_pinned_builder_on_the_built_image() -> None:
    rendered = render("a3mega", **PRELOAD)
    create = by_name(rendered, COMMAND, "image-preload").inputs["create"]
    config = build_config(create)
    (step,) = config["steps"]
    assert step["name"] == catalog.image("go-builder").ref and "@sha256:" in step["name"]
    script = step["args"][1]
    assert f"git clone --quiet {catalog.DISK_IMAGE_BUILDER_REPOSITORY} tools && cd tools/{catalog.DISK_IMAGE_BUILDER_DIR}" in script
    assert f"git checkout --quiet {catalog.DISK_IMAGE_BUILDER_COMMIT} && go run ./cli " in script
    name = disk_image_name("a3ultra-405b-preload", TAGGED)
    got = flags(config)
    assert got["--container-image"] == [TAGGED], "the image the job runs (its digest once the build prints one)"
    assert got["--image-name"] == [name] and got["--project-name"] == [PROJECT] and got["--zone"] == [ZONE]
    assert got["--network"] == ["a3ultra-405b-net"] and got["--subnet"] == ["a3ultra-405b-subnet"]
    assert got["--service-account"] == [VM] and got["--image-pull-auth"] == ["ServiceAccountToken"]
    assert got["--gcs-path"] == [f"gs://{PROJECT}-a3ultra-405b-builds/preload/{name}"] and got["--disk-size-gb"] == ["100"]
    assert len(got["--job-name"][0]) < 50
    # the same path as the image: gcloud builds submit as the build account, logs in the staging bucket
    assert "gcloud builds submit --no-source" in create and f"--service-account=projects/{PROJECT}/serviceAccounts/{BUILDER}" in create
    assert f"--gcs-log-dir=gs://{PROJECT}-a3ultra-405b-builds/logs" in create
    # built once per image: an interrupted `up` or an unchanged image skips a name that exists
    assert create.startswith(f"{{ gcloud compute images describe {name} --project={PROJECT}")
    assert create.endswith(f"echo projects/{PROJECT}/global/images/{name}")
    command = by_name(rendered, COMMAND, "image-preload")
    assert command.inputs["delete"] == f"gcloud compute images delete {name} --project={PROJECT} --quiet"
    assert by_name(rendered, COMMAND, "image-build").urn in command.dependencies


def test_the_gpu_pools_boot_from_the_built_disk_image_once_it_exists() -> None:
    rendered = render("a3mega", **PRELOAD)
    pool = first_gpu_pool(rendered)
    name = disk_image_name("a3ultra-405b-preload", TAGGED)
    assert pool.inputs["nodeConfig"]["secondaryBootDisks"] == [{"diskImage": f"projects/{PROJECT}/global/images/{name}", "mode": "CONTAINER_IMAGE_CACHE"}]
    assert by_name(rendered, COMMAND, "image-preload").urn in closure(rendered, pool)
    plain = render("a3mega", trainstack_image={"streaming": True})
    assert "secondaryBootDisks" not in first_gpu_pool(plain).inputs["nodeConfig"]
    assert not [r for r in of_type(plain, COMMAND) if r.name == "image-preload"]


def test_least_privilege_for_the_build_account_and_the_vm() -> None:
    rendered = render("a3mega", **PRELOAD)
    grants = {
        (r.type.split(":")[1], r.name, r.inputs.get("role"), r.inputs.get("member"))
        for r in rendered.registrations
        if "IAMMember" in r.type or "IamMember" in r.type
    }
    builder = {(kind, role) for kind, name, role, member in grants if member == f"serviceAccount:{BUILDER}"}
    vm = {(kind, role) for kind, name, role, member in grants if member == f"serviceAccount:{VM}"}
    # the image build's own grants, then the tool's: compute instances and images (not upstream's
    # compute.admin and compute.serviceAgent), and running VMs as the VM's account only
    assert builder == {
        ("artifactregistry/repositoryIamMember", "roles/artifactregistry.writer"),
        ("storage/bucketIAMMember", "roles/storage.objectAdmin"),
        ("projects/iAMMember", "roles/logging.logWriter"),
        ("projects/iAMMember", "roles/compute.instanceAdmin.v1"),
        ("projects/iAMMember", "roles/compute.storageAdmin"),
        ("serviceaccount/iAMMember", "roles/iam.serviceAccountUser"),
    }
    (acts,) = [r for r in rendered.registrations if r.name == "image-builder-runs-preload-vm"]
    assert acts.type == "gcp:serviceaccount/iAMMember:IAMMember" and acts.inputs["role"] == "roles/iam.serviceAccountUser", "on the VM's account only"
    assert vm == {
        ("artifactregistry/repositoryIamMember", "roles/artifactregistry.reader"),
        ("storage/bucketIAMMember", "roles/storage.objectViewer"),
        ("storage/bucketIAMMember", "roles/storage.objectCreator"),
    }
    plain = render("a3mega")
    assert not [r for r in plain.registrations if r.inputs.get("role", "").startswith("roles/compute.")]


def test_the_disk_image_is_named_from_the_images_digest() -> None:
    one, two = "sha256:" + "ab" * 32, "sha256:" + "cd" * 32
    first = disk_image_name("a3ultra-405b-preload", f"{TAGGED.rsplit(':', 1)[0]}@{one}")
    assert first == "a3ultra-405b-preload-" + "ab" * 6
    assert disk_image_name("a3ultra-405b-preload", f"x@{two}") != first, "a new image, a new disk image"
    long = disk_image_name("p" * 80, f"x@{one}")
    assert len(long) <= DISK_IMAGE_NAME_MAX and long.endswith("-" + "ab" * 6) and rules.GCP_NAME(long) is None
    assert disk_image_name("a", TAGGED) == disk_image_name("a", TAGGED) != disk_image_name("a", TAGGED + "x")


def test_a_new_image_replaces_the_gpu_pools() -> None:
    """GKE fixes a pool's secondary boot disks when it creates the pool (catalog.startup); the provider's
    ForceNew data says the same (app/review/replacement_data nodeConfig.secondaryBootDisks.diskImage)."""
    base_raw = merge(raw_stack_config("a3ultra-405b"), {k.replace("_", ":", 1): v for k, v in PRELOAD.items()})
    base_raw = merge(
        base_raw, {"trainstack:image": {"prebuilt": None, "build": {"context": "images/nemo-24.07", "imageName": "nemo-workload", "tag": "24.07"}}}
    )
    head_raw = merge(base_raw, {"trainstack:image": {"build": {"tag": "24.07-2"}}})
    replaced = [
        c for c in diff_plans("a3ultra-405b", plan("a3ultra-405b", base_raw).to_dict(), plan("a3ultra-405b", head_raw).to_dict()).changed if c.effect == REPLACE
    ]
    pools = [c for c in replaced if c.resource.type == NODE_POOL]
    assert pools and all(any(p.path == "nodeConfig.secondaryBootDisks[0].diskImage" for p in c.changes) for c in pools)
    reasons = {p.reason for c in pools for p in c.changes if p.path.startswith("nodeConfig.secondaryBootDisks")}
    assert reasons == {"a new disk image needs a new node pool: GKE does not update the disk image of existing nodes (GKE: data-container-image-preloading)"}
    assert {c.resource.type for c in replaced} >= {NODE_POOL, COMMAND}


def test_the_model_shows_what_building_the_disk_image_holds_back() -> None:
    raw = merge(
        raw_stack_config("a2-gpt2-deepspeed"),
        {"trainstack:image": {"streaming": True, "preload": {"build": True}}, "trainstack:cluster": {"versionPrefix": "1.33."}},
    )
    built = plan("a2-gpt2-deepspeed", raw).first_step
    plain = plan("a2-gpt2-deepspeed", raw_stack_config("a2-gpt2-deepspeed")).first_step
    assert built is not None and plain is not None
    assert built.without.job_start == plain.without.job_start, "the scenarios take a disk image made elsewhere"
    held = built.configured.job_start - plain.configured.job_start
    assert held >= 1800 and "holds the GPU pools back" in built.verdict()


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"trainstack:image": {"streaming": True, "preload": {"build": True}}},
            "trainstack:image.preload.build = True: builds a disk image from the image this stack builds",
        ),
        (
            {"trainstack:image": {"streaming": True, "preload": {"build": True, "diskImage": "projects/my-training-project/global/images/x"}}},
            "set exactly one of diskImage (a disk image built elsewhere) and build: true",
        ),
        ({"trainstack:image": {"streaming": True, "preload": {}}}, "set exactly one of diskImage"),
        ({"trainstack:image": {"streaming": True, "preload": {"build": True, "diskSizeGb": 5}}}, "trainstack:image.preload.diskSizeGb = 5"),
    ],
)
def test_the_preload_build_rules(changes: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        run("a3ultra-405b", merge(merge(raw_stack_config("a3ultra-405b"), {"trainstack:cluster": {"versionPrefix": "1.33."}}), changes))
    assert message in str(caught.value)


def test_a_shared_vpc_by_path_is_refused_for_the_builder_vm() -> None:
    existing = {"network": "projects/host/global/networks/shared", "subnetwork": "shared-subnet", "podsRangeName": "p", "servicesRangeName": "s"}
    changes = {
        "trainstack:image": {
            "prebuilt": None,
            "build": {"context": "images/nemo-24.07", "imageName": "nemo-workload", "tag": "24.07"},
            "streaming": True,
            "preload": {"build": True},
        },
        "trainstack:cluster": {"versionPrefix": "1.33."},
        "trainstack:network": {"existing": existing},
    }
    with pytest.raises(
        ConfigError, match=r"trainstack:network\.existing\.network = 'projects/host/global/networks/shared': the preload disk image's builder VM"
    ):
        run("a3ultra-405b", merge(raw_stack_config("a3ultra-405b"), changes))


def test_the_command_builds_only_a_missing_disk_image() -> None:
    from trainstack.components.image import BuildSpec, PreloadBuild, WorkloadImageArgs

    args = WorkloadImageArgs(BuildSpec.model_validate({"context": "ctx", "imageName": "img", "tag": "t"}), PROJECT, REGION, "repo", "d", "acct-builder", "bkt")
    line = preload_command(args, PreloadBuild(ZONE, "net", "sub", "p", "acct-preload"), "p-abc", "r@sha256:" + "ab" * 32, "b", "bkt", "vm@x", "net", "sub")
    probe, _, rest = line.partition(" || ")
    assert probe == f"{{ gcloud compute images describe p-abc --project={PROJECT} '--format=value(name)' >/dev/null 2>&1"
    assert "gcloud builds submit" in rest and "gcloud builds submit" not in probe
