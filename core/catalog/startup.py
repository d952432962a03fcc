"""Facts of a job's start-up on a GKE node: image sizes, how fast a node pulls, and the GKE features
that cut the pull, each with its source.

- IMAGE_SIZES: an image's size, matched by a fragment of its reference. NeMo 24.12 (`nvcr.io/nvidia/
  nemo:24.12`, and the resiliency images built on it, tagged `nemo24.12...`): "around 29GB"
  (NVIDIA-NeMo/Speech#11824, a user building FROM nvcr.io/nvidia/nemo:24.12, 2025-01-11).
- COLD_PULL_BYTES_PER_S: a node pulls a 10 GB image in 4-5 minutes from a cold cache (web.union.ai blog
  "cut container cold boot", as audited in trainstack's landscape notes): 10 GB over 270 s. A pull with
  containerd's store on local SSD (machines with bundled local SSDs: GkeNodePool ephemeral storage,
  components/node_pools.py) is not credited with a faster rate: no source measures it.
- STREAMED_FRACTION: with GKE image streaming the container starts once the data it reads at start
  has arrived, the rest streams and is cached in the background (cloud.google.com/kubernetes-engine/
  docs/how-to/image-streaming, "Overview"); containers read 6.4% of their image's bytes to start while
  pulling is 76% of their start-up (Harter et al., "Slacker: Fast Distribution with Lazy Docker
  Containers", USENIX FAST '16). Image streaming serves only images in Artifact Registry (the same
  page), on Container-Optimized OS with containerd; GKE's API for it is the node
  pool's `gcfsConfig.enabled`, with the Container File System API (containerfilesystem.googleapis.com)
  enabled in the project.
- SECONDARY_BOOT_DISK_MIN_GKE: secondary boot disks that preload container images
  (`mode: CONTAINER_IMAGE_CACHE`) need GKE 1.28.3-gke.1067000 or later on Standard clusters (COS;
  Ubuntu from 1.35.0-gke.1403000), need image streaming, are provisioned in parallel with the node
  ("does not increase the node provisioning time"), and a node pool's secondary boot disks are fixed
  when it is created, so a new disk image means a new node pool
  (cloud.google.com/kubernetes-engine/docs/how-to/data-container-image-preloading). A pod whose image's
  layers are on the disk pulls none of them.
- DISK_IMAGE_BUILDER: GKE's tool that makes such a disk image (ai-on-gke/tools@dd19189
  gke-disk-image-builder, moved there from GoogleCloudPlatform/ai-on-gke tools/; README.md, cli/main.go,
  imager.go, script/startup.sh). Run from its own directory (it reads ./script/startup.sh), it runs a
  Daisy workflow in the project: a disk and a Debian VM in `--zone` on `--network`/`--subnet` (names in
  `--project-name`; the subnet's region is the zone's), the VM running as `--service-account` with the
  cloud-platform scope and an external IP (compute-daisy b10a7fd instance.go populateNetworks), pulls
  each `--container-image` with containerd (with `--image-pull-auth=ServiceAccountToken`, as its
  account: so that account reads the registry), unpacks the snapshots onto the disk, and makes the image
  `--image-name` (1-63 characters, `[a-z]([-a-z0-9]*[a-z0-9])?`) of it; sources and logs under
  `--gcs-path`; `--timeout` bounds each step (default 20m); `--job-name` (under 50 characters) names the
  intermediate disk and VM (`<job>-disk`, `<job>-instance`); `--disk-size-gb` sizes both disks. It fails
  when an image of that name exists. What it needs (its README): the Compute Engine API; the VM's
  account may create and read objects under the GCS path (storage.objectCreator, objectViewer); the
  account running it (README's Cloud Build example: the build's account) compute.admin and
  compute.serviceAgent. trainstack grants less: compute.instanceAdmin.v1 (instances, disks, the subnet,
  serial output) and compute.storageAdmin (images) on the project, serviceAccountUser on the VM's own
  account only (to run a VM as it), and the VM's account reads only the stack's repository.
- GCSFUSE_READ_BYTES_PER_S: a node's gcsfuse read of large files: 14.20 GB/s, sequential reads of 1 GiB
  files on a c4-standard-192 with 200 Gbps Tier_1 networking, gcsfuse v3.4.3
  (GoogleCloudPlatform/gcsfuse@7b39292 docs/benchmarks.md, "Sequential Reads"), taken as what parallel
  downloads let a checkpoint's few readers reach. GCSFUSE_PARALLEL_SPEEDUP: parallel downloads load large
  files "up to 9x faster" (the same commit's README.md, "File Cache Parallel Downloads"), so a node without
  them reads at a ninth of that. Parallel downloads use the file cache's directory as their buffer, so they
  need the file cache (cloud.google.com/storage/docs/cloud-storage-fuse/file-caching, "Configure parallel
  downloads"; gcsfuse v2.4.0 release notes), and from gcsfuse v2.12.0 the file cache turns them on unless
  told otherwise (its release notes, "File Cache: Parallel Downloads by default"). A PersistentVolume of
  GKE's CSI driver sets them as the mount option `file-cache:enable-parallel-downloads:true`
  (cloud.google.com/kubernetes-engine/docs/how-to/cloud-storage-fuse-csi-driver-perf, "Configure mount
  options").
- A Managed Lustre instance serves its per-unit throughput (MB/s per TiB, the tier) times its capacity
  in all (catalog storage, LUSTRE_TIERS' source), shared by the job's nodes. Filestore and the NFS server
  have no read rate here: a resumed job's restore from them is not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ImageSize:
    """An image's size in bytes, for references that contain `fragment`, and its source."""

    fragment: str
    bytes: float
    source: str


IMAGE_SIZES = (
    ImageSize("nemo:24.12", 29e9, "NVIDIA-NeMo/Speech#11824"),
    ImageSize("nemo24.12", 29e9, "NVIDIA-NeMo/Speech#11824 (built on nvcr.io/nvidia/nemo:24.12)"),
)
COLD_PULL_BYTES_PER_S = 10e9 / 270  # 10 GB in 4-5 min (web.union.ai "cut container cold boot")
STREAMED_FRACTION = 0.064  # of an image's bytes read to start (Slacker, FAST '16)
SECONDARY_BOOT_DISK_MIN_GKE = "1.28.3-gke.1067000"
CONTAINER_FILESYSTEM_API = "containerfilesystem.googleapis.com"
DISK_IMAGE_BUILDER_REPOSITORY = "https://github.com/ai-on-gke/tools"
DISK_IMAGE_BUILDER_COMMIT = "dd191890bc689477123e618ac09f0100527c64f4"
DISK_IMAGE_BUILDER_DIR = "gke-disk-image-builder"
GCSFUSE_READ_BYTES_PER_S = 14.20e9  # gcsfuse@7b39292 docs/benchmarks.md, sequential reads of 1 GiB files
GCSFUSE_PARALLEL_SPEEDUP = 9.0  # "up to 9x faster model load times" (gcsfuse@7b39292 README.md)
GCSFUSE_PARALLEL_DOWNLOADS_OPTION = "file-cache:enable-parallel-downloads"


def image_size(reference: str) -> ImageSize | None:
    """The pinned size of the image `reference`, or None where none is recorded."""
    return next((s for s in IMAGE_SIZES if s.fragment in reference), None)
