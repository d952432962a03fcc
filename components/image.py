"""The workload image: an Artifact Registry repository and a Cloud Build build of a Dockerfile
context in this repository, pinned by digest.

`ImageSpec` is the stack file's `trainstack:image` (a build or a prebuilt reference, streaming, a
preload disk image) with its rules; `WorkloadImageArgs` is its `build` (`BuildSpec`) plus where the
build runs and pushes, and a preload build's `PreloadBuild` takes its size from `preload`.

pulumi-gcp has no resource that runs a build, so the build is a `pulumi_command` local command
running `gcloud builds submit --tag` (the machine running `pulumi up` needs gcloud, logged in,
and may act as the build account: roles/iam.serviceAccountUser on it, which a project owner
has). Its trigger is a hash of the context's files, so it rebuilds exactly when the context
changes.

The build runs as a service account of its own with exactly what a build needs, not as the
project's default build account (which organizations often strip of automatic grants): write
to this repository, read its staged source and write its logs in a staging bucket of its own
(so a user-specified build account needs no default Cloud Build bucket), and write to Cloud
Logging (cloud.google.com/build/docs/securing-builds/configure-user-specified-service-accounts).

A base image behind a registry login (NGC's early-access `nvcr.io/ea-bignlp`) is pulled with a
RegistryLogin: the build account may read that one Secret Manager secret, and the build runs a
config of two steps, `docker login` with the secret as its password, then `docker build`
(cloud.google.com/build/docs/securing-builds/use-secrets; the steps share the builder's home,
where Docker keeps the login).

With `preload`, a second build by the same path makes a disk image of the built image's layers for
the GPU nodes' secondary boot disks: it runs GKE's gke-disk-image-builder (catalog.startup
DISK_IMAGE_BUILDER, at a pinned commit) on the image pinned by its digest. The disk image is named
from that digest, so the same image never builds twice (the command skips a name that exists: an
interrupted `up` resumes) and a new image makes a new name, which replaces the pools that boot from
it; the old disk image is deleted with the command that made it, after them. The builder's VM runs as
an account of its own that may only pull from this repository and read and write the staging bucket;
the build account gets the compute roles the tool needs and may run VMs as that account only.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import pulumi
import pulumi_command as command
import pulumi_gcp as gcp
from pydantic import Field, model_validator

from trainstack.components.args import Args, Problem
from trainstack.components.options import Children
from trainstack.core import catalog, names, rules
from trainstack.core.spec import Duration, K8sName, Section, by_pattern, by_rule, rule_errors

_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


def context_digest(directory: Path) -> str:
    """A SHA-256 over every file under `directory` (relative path and bytes, in path order):
    the same tree gives the same digest on any machine."""
    h = hashlib.sha256()
    files = sorted(p for p in directory.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    for path in files:
        h.update(path.relative_to(directory).as_posix().encode() + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def pinned_reference(image: str, build_stdout: str | None) -> str:
    """`<repo>/<name>@sha256:...` from `image` (`<repo>/<name>:<tag>`) and the digest the
    build printed; the tag reference itself when the output holds no digest."""
    found = _DIGEST.findall(build_stdout or "")
    if not found:
        return image
    return f"{image.rsplit(':', 1)[0]}@{found[-1]}"


# Image references by the grammar of github.com/distribution/reference (regexp.go): an optional
# registry host, lowercase path components joined by one '.' or '_', '__' or dashes, an ASCII tag.
_HOST_PART = r"[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?"
_PATH_PART = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_IMAGE_REFERENCE = rf"(?:{_HOST_PART}(?:\.{_HOST_PART})*(?::\d+)?/)?{_PATH_PART}(?:/{_PATH_PART})*(?::{rules.IMAGE_TAG_REGEX})?(?:@sha256:[0-9a-f]{{64}})?"


class RegistryLogin(Section):
    """A registry the build logs in to before it builds (a base image in a private registry)."""

    server: Annotated[str, Field(min_length=1, max_length=253)]
    """The registry host (`nvcr.io`, `ghcr.io`)."""
    username: Annotated[str, Field(min_length=1)]
    """The user name (NGC API keys log in as `$oauthtoken`)."""
    secret: Annotated[str, by_rule(rules.SECRET_ID)]
    """The Secret Manager secret, in the build's project, whose latest version is the password."""


# NGC logs in with the literal user name `$oauthtoken` and an API key as the password
# (docs.nvidia.com/ngc/gpu-cloud/ngc-user-guide: "Accessing the NGC Container Registry").
NGC_USERNAME = "$oauthtoken"


def ngc_login(secret: str) -> RegistryLogin:
    """The login to NGC's registry with the API key held in Secret Manager secret `secret`."""
    return RegistryLogin(server=catalog.NGC_REGISTRY, username=NGC_USERNAME, secret=secret)


class BuildSpec(Section):
    """A Cloud Build of the workload image from a build context in this repository."""

    context: Annotated[
        str,
        Field(max_length=200),
        by_pattern(r"(?!.*(^|/)\.\.?(/|$))[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*", "must be a relative path inside the repository, such as images/nemo-24.07"),
    ]
    """A directory relative to the repository root holding a Dockerfile (`images/<name>`)."""
    image_name: K8sName
    """The image's name in the repository."""
    tag: Annotated[str, by_rule(rules.IMAGE_TAG)]
    """The tag the build pushes."""
    machine_type: Annotated[str, by_rule(rules.cloud_build_machine)] = "e2-highcpu-32"
    """The Cloud Build machine type."""
    timeout: Duration = "2h"
    """The build's timeout."""
    ngc_api_key_secret: Annotated[str, by_rule(rules.SECRET_ID)] | None = None
    """A Secret Manager secret in the stack's project holding an NGC API key: the build logs in to
    nvcr.io with it before building (needed for a base in NGC's early-access organization)."""
    registry_login: RegistryLogin | None = None
    """The login to another registry the build's base image is in; or ngcApiKeySecret for NGC's."""

    @model_validator(mode="after")
    def _one_login(self) -> BuildSpec:
        if self.ngc_api_key_secret is not None and self.registry_login is not None:
            rule_errors(
                "BuildSpec", [Problem(("registryLogin",), self.registry_login.server, "set at most one of ngcApiKeySecret (NGC's login) and registryLogin")]
            )
        return self

    @property
    def login(self) -> RegistryLogin | None:
        """The registry the build logs in to before it builds, if any."""
        return ngc_login(self.ngc_api_key_secret) if self.ngc_api_key_secret else self.registry_login


class PreloadSpec(Section):
    """A disk image of the job image's layers for the GPU nodes' secondary boot disks: named, or built here."""

    disk_image: Annotated[str, by_rule(rules.DISK_IMAGE)] | None = None
    """The disk image, `projects/<project>/global/images/<name>`, built from the job image (GKE's
    gke-disk-image-builder); its project must let the nodes' service account use it. Or build."""
    build: bool = False
    """Build the disk image here, after the image's Cloud Build and by the same path: a second build runs
    gke-disk-image-builder (catalog.startup) on the image pinned by its digest, and names the disk image
    from that digest, so a new image makes a new disk image, and new GPU node pools."""
    disk_size_gb: Annotated[int, Field(ge=10, le=65536)] = 100
    """The built disk image's size: the image unpacked (and, on the builder's boot disk, its layers beside
    it); each GPU node gets a secondary boot disk this size."""

    @model_validator(mode="after")
    def _rules(self) -> PreloadSpec:
        if (self.disk_image is None) == (not self.build):
            rule_errors(
                "PreloadSpec", [Problem(("diskImage",), self.disk_image, "set exactly one of diskImage (a disk image built elsewhere) and build: true")]
            )
        return self

    @property
    def named(self) -> str:
        """How the disk image is given, for messages: its path, or that it is built here."""
        return self.disk_image or "build: true"


class ImageSpec(Section):
    """`trainstack:image`: the Artifact Registry repository, and a build or a prebuilt image."""

    repository: K8sName | None = None
    """The Artifact Registry repository a build pushes to; defaults to `<cluster name>-images`, so
    stacks sharing a project never contend for one repository's lifecycle."""
    build: BuildSpec | None = None
    """A Cloud Build of the image; or prebuilt: exactly one of the two."""
    prebuilt: (
        Annotated[
            str,
            Field(max_length=1024),
            by_pattern(_IMAGE_REFERENCE, "must be an image reference such as nvcr.io/nvidia/nemo:24.07"),
            by_rule(rules.pinned_image),
        ]
        | None
    ) = None
    """An image reference to run as it is, pinned by a tag or a digest; or build."""
    streaming: bool = False
    """GKE image streaming on the GPU pools: a container starts once the bytes it reads to start have
    arrived, the rest streams (catalog.startup). Only for an image in Artifact Registry: a build here
    (its FROM layers, NGC's included, are copied into the stack's repository), or a prebuilt
    `<region>-docker.pkg.dev/...` reference."""
    preload: PreloadSpec | None = None
    """A secondary boot disk on each GPU node, from a disk image holding the job image's layers, so
    no node pulls them; needs streaming. A new disk image means new GPU node pools."""

    @model_validator(mode="after")
    def _rules(self) -> ImageSpec:
        problems = []
        if (self.build is None) == (self.prebuilt is None):
            problems.append(Problem(("build",), None, "set exactly one of build (a Cloud Build from a context) and prebuilt (an image reference)"))
        if self.streaming and self.prebuilt is not None and (wrong := rules.streamable_image(self.prebuilt)):
            problems.append(Problem(("streaming",), True, wrong))
        if self.preload is not None and self.preload.build and self.build is None:
            rule = "builds a disk image from the image this stack builds (trainstack:image.build), pinned by its digest; for a prebuilt image, name a diskImage built from it"
            problems.append(Problem(("preload", "build"), True, rule))
        if self.preload is not None and not self.streaming:
            problems.append(
                Problem(
                    ("preload",),
                    self.preload.named,
                    "GKE preloads container images from a secondary boot disk only with image streaming: set streaming: true",
                )
            )
        rule_errors("ImageSpec", problems)
        return self


@dataclass(frozen=True)
class PreloadBuild(Args):
    """A disk image of the built image's layers (GKE's container image preloading), built after it."""

    zone: str
    """Where the builder's VM and disk run."""
    network: pulumi.Input[str]
    """The VM's VPC, by name in the build's project."""
    subnetwork: pulumi.Input[str]
    """The VM's subnet, by name, in the zone's region."""
    name_prefix: str
    """Disk image names are `<name_prefix>-<12 hex digits of the image's digest>`."""
    vm_account_id: str
    """The builder VM's service account id (6-30 characters)."""
    disk_size_gb: int = 100
    """The disk image's size (the builder's disks)."""

    _checks = {
        "zone": rules.ZONE_ID,
        "name_prefix": rules.GCP_NAME,
        "vm_account_id": rules.ACCOUNT_ID,
    }


DISK_IMAGE_NAME_MAX = 63  # gke-disk-image-builder cli/main.go: image-name under 64 characters
DISK_IMAGE_JOB_MAX = 49  # gke-disk-image-builder cli/main.go: job-name under 50 characters
DIGEST_HEX = 12


def disk_image_name(prefix: str, reference: str) -> str:
    """The disk image of `reference`: `<prefix>-<12 hex>` of its digest (of the reference itself when it
    holds none), so each image has its own name; the prefix shortened to fit (names.shortened)."""
    found = _DIGEST.findall(reference)
    hexes = found[-1].removeprefix("sha256:") if found else hashlib.sha256(reference.encode()).hexdigest()
    tail = f"-{hexes[:DIGEST_HEX]}"
    return names.shortened(prefix, DISK_IMAGE_NAME_MAX - len(tail)) + tail


@dataclass(frozen=True)
class WorkloadImageArgs(Args):
    """Arguments of WorkloadImage: the build as a stack file's `trainstack:image.build` writes it, and
    where it runs and pushes."""

    spec: BuildSpec
    """The build: its context (relative to the Pulumi project root, where the engine runs the
    command, holding a `Dockerfile`), image name, tag, machine, timeout and NGC login."""
    project: str
    """Where the repository lives and the build runs."""
    region: str
    """The repository's and the build's region."""
    repository_id: str
    """The Artifact Registry repository (Docker format)."""
    context_digest: str
    """`context_digest()` of the context; a change triggers a rebuild."""
    builder_account_id: str
    """The build service account's id (6-30 characters)."""
    staging_bucket: str
    """The bucket the build's source and logs are staged in (created here, emptied on destroy:
    it holds nothing but build inputs and logs)."""
    labels: dict[str, str] = field(default_factory=dict)
    """GCP labels on the repository and the bucket."""
    readers: dict[str, pulumi.Input[str]] = field(default_factory=dict)
    """IAM members allowed to pull from the repository, and from it only (the nodes' account),
    keyed by the grantee's own name (its account id): the grant is `reader-<key>`, so adding or
    removing a reader touches no other."""
    preload: PreloadBuild | None = None
    """Build a disk image of the image for the GPU nodes' secondary boot disks (`disk_image`)."""

    _checks = {
        "project": rules.PROJECT_ID,
        "region": rules.REGION_ID,
        "repository_id": rules.REPOSITORY_ID,
        "builder_account_id": rules.ACCOUNT_ID,
        "staging_bucket": rules.bucket_name,
        "labels": rules.gcp_labels,
        "readers": rules.grantees,
    }

    @property
    def registry_login(self) -> RegistryLogin | None:
        """The registry the build logs in to before it builds."""
        return self.spec.login


class WorkloadImage(pulumi.ComponentResource):
    """A Docker repository and a Cloud Build of one image into it."""

    repository: gcp.artifactregistry.Repository
    """The Artifact Registry repository."""
    builder: gcp.serviceaccount.Account
    """The service account the build runs as."""
    tagged: pulumi.Output[str]
    """`<registry>/<name>:<tag>`."""
    reference: pulumi.Output[str]
    """`<registry>/<name>@sha256:<digest>` once built (the tag reference if the build printed no
    digest)."""
    disk_image: pulumi.Output[str] | None = None
    """`projects/<project>/global/images/<name>`, the preload disk image once built (with `preload`)."""

    def __init__(self, name: str, args: WorkloadImageArgs, opts: pulumi.ResourceOptions | None = None):
        args = WorkloadImageArgs.checked(args, type(self), name)
        super().__init__("trainstack:gcp:WorkloadImage", name, None, opts)
        kids = Children(self, name, opts)
        self.repository = gcp.artifactregistry.Repository(
            **kids("repository"),
            project=args.project,
            location=args.region,
            repository_id=args.repository_id,
            format="DOCKER",
            description="trainstack workload images",
            labels=dict(args.labels),
        )
        self.builder = gcp.serviceaccount.Account(
            **kids("builder"),
            project=args.project,
            account_id=args.builder_account_id,
            display_name="trainstack image builds",
        )
        member = self.builder.email.apply(lambda email: f"serviceAccount:{email}")
        staging = gcp.storage.Bucket(
            **kids("staging"),
            project=args.project,
            name=args.staging_bucket,
            location=args.region,
            uniform_bucket_level_access=True,
            public_access_prevention="enforced",
            force_destroy=True,
            lifecycle_rules=[
                gcp.storage.BucketLifecycleRuleArgs(
                    action=gcp.storage.BucketLifecycleRuleActionArgs(type="Delete"),
                    condition=gcp.storage.BucketLifecycleRuleConditionArgs(age=30),
                )
            ],
            labels=dict(args.labels),
        )
        grants = [
            gcp.artifactregistry.RepositoryIamMember(
                **kids("builder-push"),
                project=args.project,
                location=args.region,
                repository=self.repository.repository_id,
                role="roles/artifactregistry.writer",
                member=member,
            ),
            gcp.storage.BucketIAMMember(
                **kids("builder-staging"),
                bucket=staging.name,
                role="roles/storage.objectAdmin",
                member=member,
            ),
            gcp.projects.IAMMember(
                **kids("builder-logs"),
                project=args.project,
                role="roles/logging.logWriter",
                member=member,
            ),
        ]
        if args.registry_login is not None:
            grants.append(
                gcp.secretmanager.SecretIamMember(
                    **kids("builder-registry-login"),
                    project=args.project,
                    secret_id=args.registry_login.secret,
                    role="roles/secretmanager.secretAccessor",
                    member=member,
                )
            )
        # Keyed by the grantee; readers were named by their place before (`reader-<i>`): aliased
        # from the place each has at the upgrade.
        for i, (key, reader) in enumerate(args.readers.items()):
            gcp.artifactregistry.RepositoryIamMember(
                **kids(f"reader-{key}", was=f"reader-{i}", roles_were=[f"reader-{i}"]),
                project=args.project,
                location=args.region,
                repository=self.repository.repository_id,
                role="roles/artifactregistry.reader",
                member=reader,
            )
        self.tagged = self.repository.registry_uri.apply(lambda uri: f"{uri}/{args.spec.image_name}:{args.spec.tag}")
        build = command.local.Command(
            **kids("build", *grants),
            create=pulumi.Output.all(self.tagged, self.builder.name, staging.name).apply(lambda v: submit_command(args, v[0], v[1], v[2])),
            triggers=[args.context_digest],
        )
        self.reference = pulumi.Output.all(self.tagged, build.stdout).apply(lambda v: pinned_reference(v[0], v[1]))
        if args.preload is not None:
            self.disk_image = self._preload(kids, args, args.preload, member, staging, build)
        self.register_outputs({"reference": self.reference, **({"diskImage": self.disk_image} if self.disk_image else {})})

    def _preload(
        self,
        kids: Children,
        args: WorkloadImageArgs,
        preload: PreloadBuild,
        member: pulumi.Output[str],
        staging: gcp.storage.Bucket,
        build: command.local.Command,
    ) -> pulumi.Output[str]:
        """The preload disk image's build (module docstring): the VM's account and its grants, the
        build account's compute roles, and the command; its disk image path once made."""
        vm = gcp.serviceaccount.Account(
            **kids("preload-vm"),
            project=args.project,
            account_id=preload.vm_account_id,
            display_name="trainstack preload disk image builder VM",
        )
        vm_member = vm.email.apply(lambda email: f"serviceAccount:{email}")
        grants = [
            gcp.artifactregistry.RepositoryIamMember(
                **kids("preload-vm-pull"),
                project=args.project,
                location=args.region,
                repository=self.repository.repository_id,
                role="roles/artifactregistry.reader",
                member=vm_member,
            ),
            *(
                gcp.storage.BucketIAMMember(**kids(f"preload-vm-staging-{verb}"), bucket=staging.name, role=role, member=vm_member)
                for verb, role in (("read", "roles/storage.objectViewer"), ("write", "roles/storage.objectCreator"))
            ),
            *(
                gcp.projects.IAMMember(**kids(f"builder-{what}"), project=args.project, role=role, member=member)
                for what, role in (("instances", "roles/compute.instanceAdmin.v1"), ("images", "roles/compute.storageAdmin"))
            ),
            gcp.serviceaccount.IAMMember(
                **kids("builder-runs-preload-vm"),
                service_account_id=vm.name,
                role="roles/iam.serviceAccountUser",
                member=member,
            ),
        ]
        name = self.reference.apply(lambda reference: disk_image_name(preload.name_prefix, reference))
        inputs = pulumi.Output.all(name, self.reference, self.builder.name, staging.name, vm.email, preload.network, preload.subnetwork)
        made = command.local.Command(
            **kids("preload", build, *grants),
            create=inputs.apply(lambda v: preload_command(args, preload, *v)),
            delete=name.apply(lambda n: shlex.join(["gcloud", "compute", "images", "delete", n, f"--project={args.project}", "--quiet"])),
            triggers=[self.reference],
        )
        return pulumi.Output.all(made.stdout, name).apply(lambda v: f"projects/{args.project}/global/images/{v[1]}")


def login_build_config(login: RegistryLogin, project: str, reference: str) -> dict[str, Any]:
    """A Cloud Build config that logs Docker in to `login.server` with the secret's latest version,
    then builds the uploaded context into `reference` and pushes it. `$$` is Cloud Build's escape
    for a literal `$`, so the step's shell expands `$REGISTRY_PASSWORD` (the secret) and Docker
    gets the user name as written."""
    username = login.username.replace("$", "$$")
    builder = catalog.image("cloud-builder").ref
    return {
        "steps": [
            {
                "name": builder,
                "entrypoint": "bash",
                "args": ["-c", f"printf '%s' \"$$REGISTRY_PASSWORD\" | docker login {login.server} --username '{username}' --password-stdin"],
                "secretEnv": ["REGISTRY_PASSWORD"],
            },
            {"name": builder, "args": ["build", "--tag", reference, "."]},
        ],
        "images": [reference],
        "availableSecrets": {"secretManager": [{"versionName": f"projects/{project}/secrets/{login.secret}/versions/latest", "env": "REGISTRY_PASSWORD"}]},
    }


def submit_command(args: WorkloadImageArgs, reference: str, builder: str, staging_bucket: str) -> str:
    """The `gcloud builds submit` line that builds `args.spec.context` into `reference` as the
    `builder` account (its resource name), staging source and logs in `staging_bucket`, and
    prints only the pushed image's digest. With a registry login, the build's config is written
    to a temporary file first (gcloud reads `--config` from a file) and replaces `--tag`."""
    where = ["gcloud", "builds", "submit", args.spec.context, f"--project={args.project}", f"--region={args.region}"]
    how = [
        f"--service-account={builder}",
        f"--gcs-source-staging-dir=gs://{staging_bucket}/source",
        f"--gcs-log-dir=gs://{staging_bucket}/logs",
        f"--machine-type={args.spec.machine_type}",
        f"--timeout={args.spec.timeout}",
        "--suppress-logs",
        "--quiet",
        "--format=value(results.images[0].digest)",
    ]
    if args.registry_login is None:
        return shlex.join([*where, f"--tag={reference}", *how])
    config = json.dumps(login_build_config(args.registry_login, args.project, reference), sort_keys=True)
    return (
        f"""config="$(mktemp)" && trap 'rm -f "$config"' EXIT && printf '%s' {shlex.quote(config)} > "$config" && """
        f"""{shlex.join(where)} --config="$config" {shlex.join(how)}"""
    )


def preload_build_config(
    args: WorkloadImageArgs, preload: PreloadBuild, image: str, reference: str, staging_bucket: str, vm_account: str, network: str, subnetwork: str
) -> dict[str, Any]:
    """The Cloud Build config that runs gke-disk-image-builder (catalog.startup DISK_IMAGE_BUILDER)
    at its pinned commit, from its own directory, to make disk image `image` of `reference` (pulled by
    the VM as `vm_account`), with its sources and logs under the staging bucket."""
    tool = catalog.DISK_IMAGE_BUILDER_DIR
    flags = [
        f"--project-name={args.project}",
        f"--image-name={image}",
        f"--job-name={names.shortened(image, DISK_IMAGE_JOB_MAX)}",
        f"--zone={preload.zone}",
        f"--network={network}",
        f"--subnet={subnetwork}",
        f"--service-account={vm_account}",
        f"--gcs-path=gs://{staging_bucket}/preload/{image}",
        f"--container-image={reference}",
        "--image-pull-auth=ServiceAccountToken",
        f"--disk-size-gb={preload.disk_size_gb}",
        f"--timeout={args.spec.timeout}",
        *(f"--image-labels={k}={v}" for k, v in sorted(args.labels.items())),
    ]
    script = (
        f"git clone --quiet {catalog.DISK_IMAGE_BUILDER_REPOSITORY} tools && cd tools/{tool} && "
        f"git checkout --quiet {catalog.DISK_IMAGE_BUILDER_COMMIT} && go run ./cli {shlex.join(flags)}"
    )
    return {"steps": [{"name": catalog.image("go-builder").ref, "entrypoint": "bash", "args": ["-c", script]}]}


def preload_command(
    args: WorkloadImageArgs,
    preload: PreloadBuild,
    image: str,
    reference: str,
    builder: str,
    staging_bucket: str,
    vm_account: str,
    network: str,
    subnetwork: str,
) -> str:
    """The line that builds preload disk image `image` of `reference` unless it exists (an interrupted
    `up`, or the same image), with `gcloud builds submit --no-source` as the `builder` account, and
    prints its path."""
    config = json.dumps(preload_build_config(args, preload, image, reference, staging_bucket, vm_account, network, subnetwork), sort_keys=True)
    exists = shlex.join(["gcloud", "compute", "images", "describe", image, f"--project={args.project}", "--format=value(name)"])
    submit = [
        "gcloud",
        "builds",
        "submit",
        "--no-source",
        f"--project={args.project}",
        f"--region={args.region}",
        f"--service-account={builder}",
        f"--gcs-log-dir=gs://{staging_bucket}/logs",
        f"--timeout={args.spec.timeout}",
        "--suppress-logs",
        "--quiet",
    ]
    return (
        f"""{{ {exists} >/dev/null 2>&1 || {{ config="$(mktemp)" && trap 'rm -f "$config"' EXIT && """
        f"""printf '%s' {shlex.quote(config)} > "$config" && {shlex.join(submit)} --config="$config" >/dev/null; }}; }} && """
        f"""echo projects/{args.project}/global/images/{image}"""
    )
