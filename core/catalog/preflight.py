"""The preflight's facts: what it measures, the per-machine pass marks, its images and its cost.

Sources, by record:
- BUS_BANDWIDTH_GBYTES: Google's GKE health checker publishes one NCCL threshold a machine, the
  `BANDWIDTH_THRESHOLD` its NCCL health check compares with nccl-tests' "# Avg bus bandwidth" (GB/s)
  of `all_gather_perf` from 2G to 8G, factor 2, one GPU a process (GoogleCloudPlatform/
  cluster-health-scanner 81c525d deploy/helm/health_checks/nccl_healthcheck/{a3,a3plus,a3ultra,a4,a4x}.yaml
  `health_check.env`; src/nccl_healthcheck/nccl_startup.py parse_nccl_result and process_test_result:
  `avg_bandwidth >= bandwidth_threshold`; run-nccl-combined-plugins.sh: `-b 2G -e 8G -f 2 -g 1`).
  Its A4X figure is measured with NCCL_MNNVL_ENABLE=0 (the RDMA NICs alone); the trainer's all-gather
  within one NVLink domain also rides the multi-node NVLink, so on A4X the figure is a floor.
- The same mark for all-reduce: nccl-tests defines bus bandwidth so that it compares with the hardware's
  peak "independently of the number of ranks" and of the collective (NVIDIA/nccl-tests a0b82b2
  doc/PERFORMANCE.md, "Bus bandwidth"), which is also why a mark measured on two nodes holds for the
  job's N. A departure: the health checker publishes all-gather figures only.
- NIC_GBITS: the line rate of one GPU NIC by GPUDirect stack (cloud.google.com/compute/docs/gpus/
  gpu-network-bandwidth: A3 High and A3 Mega GPU NICs are 200 Gbps each, A3 Ultra's, A4's and A4X's
  ConnectX-7 RDMA NICs 400 Gbps each). A machine's line rate is its GPU NICs times that.
- DERIVED_EFFICIENCY: where no figure is published (a machine added to the catalog later), the mark is
  this share of the line rate: the lowest share among the published figures (A3 High: 60 GB/s of its
  4 x 200 Gbps = 100 GB/s; A3 Mega 150/200, A3 Ultra and A4 250/400, A4X 160/200 are all higher).
- DCGM_LEVEL: `dcgmi diag -r 2`. DCGM documents level 1 as "quick deployment checks, normally lasting
  seconds" (no load on the GPUs: it cannot see a failing HBM stack or PCIe link), level 2 as "medium
  validation, normally lasting approximately two minutes" and level 3 as "approximately 15 minutes"
  (docs.nvidia.com/datacenter/dcgm/latest/reference/command-line-reference/dcgmi/dcgmi-diag.html; the
  same in NVIDIA/DCGM 72fa3fe dcgmi/CommandLineParser.cpp `-r` help). Level 2 runs the memory and PCIe
  tests in about two minutes on every node at once, a few percent of a job's bring-up; level 3 would add a
  quarter of an hour to every start. The health checker runs level 2 as well (cluster-health-scanner
  deploy/helm/health_checks/gpu_healthcheck/values.yaml `R_LEVEL: "2"`).
- NODE_CHECK_IMAGE: the health checker's GPU check image, NVIDIA's DCGM image with Python added
  (cluster-health-scanner 81c525d docker/gpu_healthcheck.Dockerfile: FROM
  nvcr.io/nvidia/cloud-native/dcgm:4.1.1-1-ubuntu22.04), at the tag its chart defaults to
  (deploy/helm/health_checks/gpu_healthcheck/values.yaml). Only amd64 recorded: on Arm nodes the node
  check runs in the machine's nccl-tests image, without the DCGM diagnostic (nvidia-smi alone, from the
  host's driver).
- NCCL_TEST_IMAGES: the health checker's NCCL images, one per machine, built with nccl-tests under
  /third_party/nccl-tests/build, Open MPI, sshd and Python 3.10 (cluster-health-scanner 81c525d
  deploy/helm/health_checks/nccl_healthcheck/<machine>.yaml `image`; docker/nccl_healthcheck.Dockerfile).
  The A4X tag is its arm64 build (a4x.yaml pairs it with the arm64 gIB diagnostic image). No digest is
  published with them.
- NCCL_ITERATIONS, NCCL_WARMUP: fewer than the health checker's 300 iterations averaged over 3 runs
  (nccl_startup.py ITERATIONS, TEST_ITERATIONS), which it runs to label nodes for a day; a gate before one
  job needs the mark, not a day's label. 20 timed and 5 warm-up iterations of each size: nccl-tests'
  own defaults (NVIDIA/nccl-tests a0b82b2 README.md `-n,--iters` 20, `-w,--warmup_iters` 1 raised to 5 as
  the health checker's TCPXO path runs it).
- Durations (`seconds`): launching an MPI job over ssh and bringing NCCL up is taken as
  NCCL_SETUP_SECONDS (60 s) per collective, an estimate: NCCL init is seconds below tens of thousands of
  ranks (NVIDIA/nccl#1789 measures 26 s at 96K ranks), the rest is ssh and CUDA context start.
"""

from __future__ import annotations

from dataclasses import dataclass

from trainstack.core.catalog.gpudirect import GpuDirect
from trainstack.core.catalog.images import Image
from trainstack.core.catalog.machines import Machine

# Published NCCL bus-bandwidth marks (GB/s), by machine: cluster-health-scanner 81c525d nccl_healthcheck/*.yaml.
BUS_BANDWIDTH_GBYTES: dict[str, float] = {
    "a3-highgpu-8g": 60.0,  # a3.yaml
    "a3-megagpu-8g": 150.0,  # a3plus.yaml
    "a3-ultragpu-8g": 250.0,  # a3ultra.yaml
    "a4-highgpu-8g": 250.0,  # a4.yaml
    "a4x-highgpu-4g": 160.0,  # a4x.yaml (NCCL_MNNVL_ENABLE=0)
}
BUS_BANDWIDTH_SOURCE = "GoogleCloudPlatform/cluster-health-scanner@81c525d deploy/helm/health_checks/nccl_healthcheck BANDWIDTH_THRESHOLD"

# Line rate of one GPU NIC, Gbit/s, by GPUDirect stack (cloud.google.com/compute/docs/gpus/gpu-network-bandwidth).
NIC_GBITS: dict[GpuDirect, int] = {GpuDirect.TCPX: 200, GpuDirect.TCPXO: 200, GpuDirect.RDMA: 400}
DERIVED_EFFICIENCY = 0.6  # the lowest published share of line rate (A3 High: 60 of 100 GB/s)

COLLECTIVES = ("all_gather", "all_reduce")
MIN_BYTES = "2G"
MAX_BYTES = "8G"
SIZES_BYTES = (2 << 30, 4 << 30, 8 << 30)  # MIN_BYTES to MAX_BYTES, factor 2
NCCL_ITERATIONS = 20
NCCL_WARMUP = 5
NCCL_SETUP_SECONDS = 60
NCCL_TESTS_DIR = "/third_party/nccl-tests/build"

DCGM_LEVEL = 2
DCGM_LEVEL_SECONDS = {1: 30, 2: 120, 3: 900}  # "seconds", "approximately two minutes", "approximately 15 minutes"
NODE_CHECK_SECONDS = 30  # nvidia-smi queries and starting the DCGM host engine

NODE_CHECK_IMAGE = Image("us-docker.pkg.dev/gce-ai-infra/health-check/gpu-healthcheck", "a3-megagpu-8g_4.4.0", platforms=("linux/amd64",))
_HEALTHCHECK = "us-docker.pkg.dev/gce-ai-infra/health-check/nccl-healthcheck"
NCCL_TEST_IMAGES: dict[str, Image] = {
    "a3-highgpu-8g": Image(_HEALTHCHECK, "a3-highgpu-8g_4.4.0", platforms=("linux/amd64",)),
    "a3-megagpu-8g": Image(_HEALTHCHECK, "a3-megagpu-8g_4.4.0", platforms=("linux/amd64",)),
    "a3-ultragpu-8g": Image(_HEALTHCHECK, "a3-ultragpu-8g_4.4.0", platforms=("linux/amd64",)),
    "a4-highgpu-8g": Image(_HEALTHCHECK, "a4-highgpu-8g_4.4.0", platforms=("linux/amd64",)),
    "a4x-highgpu-4g": Image(_HEALTHCHECK, "a4x-highgpu-4g_4.7.0", platforms=("linux/arm64",)),
}
# The warden (which taints a failed node) runs on the CPU pool: the amd64 image, for its kubectl and Python.
WARDEN_IMAGE = NCCL_TEST_IMAGES["a3-ultragpu-8g"]

TAINT_KEY = "trainstack.dev/preflight"  # value: the failed check; effect NoSchedule
FAILED_EXIT_CODE = 3  # a preflight container's exit code when a check failed (anything else: it broke)


def line_rate_gbytes(machine: Machine) -> float | None:
    """The GPU NICs' line rate of one node in GB/s (NIC count x NIC_GBITS / 8); None on a machine
    whose GPUs talk over the primary NIC alone (no GPUDirect stack)."""
    gbits = NIC_GBITS.get(machine.gpudirect)
    if gbits is None:
        return None
    nics = machine.rdma_subnets if machine.gpudirect is GpuDirect.RDMA else machine.gvnic_networks
    return nics * gbits / 8


@dataclass(frozen=True)
class Threshold:
    """A bus-bandwidth mark (GB/s) and where it comes from."""

    gbytes: float
    source: str


def threshold(machine: Machine) -> Threshold | None:
    """The machine's published mark, else DERIVED_EFFICIENCY of its line rate, else None (no GPUDirect
    stack: nothing to derive a mark from; the fabric test then reports, and gates on errors only)."""
    if (published := BUS_BANDWIDTH_GBYTES.get(machine.name)) is not None:
        return Threshold(published, BUS_BANDWIDTH_SOURCE)
    if (rate := line_rate_gbytes(machine)) is None:
        return None
    return Threshold(round(rate * DERIVED_EFFICIENCY, 1), f"derived: {DERIVED_EFFICIENCY:.0%} of the {rate:g} GB/s line rate")


def nccl_test_image(machine: Machine) -> Image | None:
    """The nccl-tests image built for the machine's NCCL plugin, or None where none is published."""
    return NCCL_TEST_IMAGES.get(machine.name)
