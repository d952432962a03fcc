"""Pinned container images, by role.

An image without `platforms` has none recorded (unknown), so it runs on amd64 nodes only (see
Image.runs_on and workloads.platform_problems).

Sources, by record:
- resiliency (supervisor and trainer image): the resiliency recipe, gpu-recipes 27b47e7
  .../nemo-pretraining-gke-resiliency/values.yaml workload.image, the same era as its 1800 s heartbeat
  timeouts.
- nvidia-driver-installer-cos: GoogleCloudPlatform/container-engine-accelerators
  nvidia-driver-installer/cos/daemonset-preloaded.yaml.
- pause: the digest of the multi-arch index as cilium/alpine-curl's Dockerfile pins it.
- nfs-server: Kubernetes' own e2e NFS server (kubernetes/kubernetes test/utils/image/manifest.go), an OCI
  image containerd 2 pulls; `volume-nfs:0.8` is Docker schema 1, which GKE 1.33+ cannot pull. Same
  contract: privileged, exports /exports. The digest is the one registry.k8s.io promotes as tag 1.4
  (kubernetes/k8s.io e10ab5f registry.k8s.io/images/k8s-staging-e2e-test-images/images.yaml); that tag is
  a manifest list (kubernetes/kubernetes 00dd02f test/images/image-util.sh pushes one per tag) of
  linux/amd64, arm64, ppc64le and s390x (f9cfc9d test/images/volume/nfs/BASEIMAGE).
- nemo-24.07, nemofw-training-23.05 (framework base images): the NGC catalog.
- nemo-26.02: published for both architectures: the upstream recipes run this tag on A4X's arm64 nodes
  and on A3 Ultra's amd64 ones (AI-Hypercomputer/gpu-recipes 2e1fd5e
  training/a4x/llama3_70b/nemo-gke/nemo2602/64gpus-bf16-gbs256/values.yaml and
  training/a3ultra/deepseek_v3/megatron-bridge-gke/nemo2602/256gpus-bf16-seq4096-gbs2048/recipe/values.yaml
  `workload.image`).
- nvidia-dra-driver: the DRA driver chart's image (DRA_DRIVER_CHART 25.3.0 renders
  nvcr.io/nvidia/k8s-dra-driver-gpu at its appVersion, v25.3.0): Toolkit's gke-a4x runs its controller on
  the x86 system pool (e2-standard-16, affinity nvidia.com/gpu DoesNotExist) and its kubelet plugin on the
  arm64 GB200 nodes (cluster-toolkit 1047080 examples/gke-a4x/gke-a4x.yaml, modules/management/
  kubectl-apply/main.tf), so it is published for both.
- nvidia-dra-driver-25.8.0: the same for DRA_DRIVER_CHART_GB300 (appVersion 25.8.0), which Toolkit's A4X Max
  blueprint runs the same way (c765092 examples/gke-a4x-max-bm, `target_architecture: "arm64"`).
- asapd-lite: the DaemonSet A4X Max nodes need (components.node_daemons), as Cluster Toolkit c765092
  examples/gke-a4x-max-bm/asapd-lite-installer.yaml pins it (v0.0.8, PR #5715); it runs on the arm64 A4X
  Max hosts only.
- pytorch-23.05: digest as tensorwavecloud/ScalarLM 80b89ce Dockerfile pins the tag (it does not say
  whether index or amd64 manifest; the image is built on Cloud Build's x86 workers either way).
- pytorch-23.09: recipe 003's base, GoogleCloudPlatform/ai-infra-cluster-provisioning 26e3b34
  sample_workloads/lit-gpt-demo/Dockerfile (torch 2.1, which lit-gpt 6178c7cc needs). Digest: the tag's,
  as BuildKit resolved it in the recipe's own build log (d9d860e sample_workloads/lit-gpt-demo/README.md,
  Troubleshooting: `[1/8] FROM ...@sha256:...`); BuildKit prints the digest of the descriptor the tag
  resolves to, the index for a multi-platform tag (moby/buildkit d0f8125 util/imageutil/config.go: Config
  returns desc.Digest).
- cloud-builder: Cloud Build's Docker builder, the steps of a build that logs in to a registry first
  (components/image.py); `gcloud builds submit --tag` runs the same builder unnamed.
- go-builder: the Cloud Build step that runs GKE's gke-disk-image-builder from its source (`go run ./cli`,
  components/image.py), which needs Go 1.23+ (ai-on-gke/tools dd19189 gke-disk-image-builder/go.mod) and git
  to fetch it: golang:1.25-bookworm (Go 1.25.12, git, GOTOOLCHAIN=local), its OCI index digest from
  docker-library/repo-info dcc2ba5 repos/golang/remote/1.25-bookworm.md.
- node-setup: runs `nsenter` into the host for the TCPXO node setup (aperture devices, import-helper);
  container-engine-accelerators gpudirect-tcpxo/nccl-tcpxo-installer.yaml uses unpinned `ubuntu`, pinned
  here to the Ubuntu 24.04 build of 2026-09-11 (GKE pulls Docker Hub through mirror.gcr.io). Digest of its
  OCI index (linux/amd64, arm/v7, arm64/v8, ppc64le): docker-library/repo-info 1c2b9d9
  repos/ubuntu/remote/noble-20260911.md.
- NGC_EARLY_ACCESS: NGC's early-access organization; pulling from it needs an NGC API key of an account
  with that access (recipe 001's base, nvcr.io/ea-bignlp/nemofw-training; GoogleCloudPlatform/
  ai-infra-cluster-provisioning ca1fbce sample_workloads/megatron-demo README: access to these images is
  obtained by registering with NVIDIA).
"""

from __future__ import annotations

from dataclasses import dataclass

from trainstack.core.errors import CatalogError


@dataclass(frozen=True)
class Image:
    """A container image pinned by tag, by digest (with its tag beside it where there is one, as
    `repository:tag@digest`: the digest is what is pulled), or by digest alone where upstream
    publishes only digests.

    `platforms` are the `os/arch` pairs the image is published for, recorded only where a source
    shows them (a manifest list, an `-arm64` image name, the upstream running it on such nodes),
    cited beside the record; None: not recorded, so unknown (refused on Arm, see `runs_on`)."""

    repository: str
    tag: str = ""
    digest: str = ""
    platforms: tuple[str, ...] | None = None

    @property
    def ref(self) -> str:
        tag = f":{self.tag}" if self.tag else ""
        return f"{self.repository}{tag}@{self.digest}" if self.digest else f"{self.repository}{tag}"

    def runs_on(self, architecture: str) -> bool | None:
        """Whether the image is published for linux/`architecture`; None where unknown."""
        return None if self.platforms is None else f"linux/{architecture}" in self.platforms


# Each record's source is in the module docstring, under its role.
IMAGES: dict[str, Image] = {
    "resiliency": Image(
        "us-central1-docker.pkg.dev/deeplearning-images/reproducibility/pytorch-gpu-goodput",
        "nemo24.12.01-A3Mega-20250605",
    ),
    "nvidia-driver-installer-cos": Image("cos-nvidia-installer", "fixed"),
    "pause": Image("registry.k8s.io/pause", "3.10", "sha256:ee6521f290b2168b6e0935a181d4cff9be1ac3f505666ef0e3c98fae8199917a"),
    "nfs-server": Image("registry.k8s.io/e2e-test-images/volume/nfs", "1.4", "sha256:c3e380bb5a92095288b4dd586a250c560612afbabf53fb2a057e99fff75f038f"),
    "tensorboard": Image("tensorflow/tensorflow", "2.17.0"),
    "nemo-24.07": Image("nvcr.io/nvidia/nemo", "24.07"),
    "nemo-26.02": Image("nvcr.io/nvidia/nemo", "26.02", platforms=("linux/amd64", "linux/arm64")),
    "nvidia-dra-driver": Image("nvcr.io/nvidia/k8s-dra-driver-gpu", "v25.3.0", platforms=("linux/amd64", "linux/arm64")),
    "asapd-lite": Image("us-docker.pkg.dev/gce-ai-infra/asapd-lite/asapd-lite", "v0.0.8", platforms=("linux/arm64",)),
    "nvidia-dra-driver-25.8.0": Image("nvcr.io/nvidia/k8s-dra-driver-gpu", "v25.8.0", platforms=("linux/amd64", "linux/arm64")),
    "nemofw-training-23.05": Image("nvcr.io/ea-bignlp/nemofw-training", "23.05-py3"),
    "pytorch-23.05": Image("nvcr.io/nvidia/pytorch", "23.05-py3", "sha256:d5aa1e516e68afab9cd3ecaaeac3dd2178618bd26cd7ad96762ed53e32e9e0bd"),
    "pytorch-23.09": Image("nvcr.io/nvidia/pytorch", "23.09-py3", "sha256:b62b664b830dd9f602e2657f471286a075e463ac75d10ab8e8073596fcb36639"),
    "cloud-sdk": Image("gcr.io/google.com/cloudsdktool/google-cloud-cli", "502.0.0-slim"),
    "cloud-builder": Image("gcr.io/cloud-builders/docker"),
    "go-builder": Image("golang", "1.25-bookworm", "sha256:99bcb81b9acb15e54f799e68172da2e888ca7597475dbdaf04cd910defec78cc"),
    "node-setup": Image("ubuntu", "noble-20260911", "sha256:b648a2094b746b16f8e688364f6fa0504788b209f328c54bf9e677f238a142df"),
    # (new pinned images go above this line, each with its source in the module docstring)
}

NGC_REGISTRY = "nvcr.io"
NGC_EARLY_ACCESS = f"{NGC_REGISTRY}/ea-bignlp/"


def image(role: str) -> Image:
    """The pinned image for `role`, or a CatalogError listing the known roles."""
    try:
        return IMAGES[role]
    except KeyError:
        raise CatalogError(f"no pinned image for {role!r}; known: {', '.join(sorted(IMAGES))}") from None
