"""Every image a job runs on its GPU nodes is published for their CPU architecture: checked
against the platforms the catalog records for each image (`Image.platforms`, each with its
source), never assumed. An image with none recorded is unknown: accepted on amd64 nodes, as every
image has always run there, and refused on any other (Arm), where an amd64-only image fails to
start with `exec format error` after the nodes are paid for.

The images that run on the job's nodes: the training image, the GPUDirect stack's images (its
NCCL plugin, sidecars and node installers), the DRA driver's kubelet plugin (IMEX), the dataset
downloader, the resiliency supervisor's host monitor (a DaemonSet on the GPU nodes) and a driver
installer DaemonSet. TensorBoard and the
supervisor's controller run on the controller pool (x86-64 CPU machines), so they are not checked
here.
"""

from __future__ import annotations

from trainstack.components.image import ImageSpec
from trainstack.core import catalog
from trainstack.core.errors import Problem
from trainstack.workloads.spec import WorkloadSpec

# A Cloud Build runs on the worker machine the build names, E2 or N1 (core/rules.py
# CLOUD_BUILD_MACHINES), x86-64 machines (cloud.google.com/compute/docs/general-purpose-machines),
# and trainstack's builds do not cross-build: their image is linux/amd64 only.
CLOUD_BUILD_PLATFORMS = ("linux/amd64",)
IMAGE = "trainstack:image"
WORKLOAD = "trainstack:workload"
Key = tuple[str | int, ...]


def training_image(image: ImageSpec) -> tuple[Key, str, catalog.Image]:
    """The training image as the config names it (key, value) and its catalog record: a pinned
    image matched by reference, a Cloud Build's output, or an image the catalog does not know."""
    if image.build is not None:
        ref = f"{image.build.image_name}:{image.build.tag}"
        return (IMAGE, "build"), ref, catalog.Image(image.build.image_name, image.build.tag, platforms=CLOUD_BUILD_PLATFORMS)
    ref = image.prebuilt or ""
    known = next((i for i in catalog.IMAGES.values() if i.ref == ref), None)
    return (IMAGE, "prebuilt"), ref, known or catalog.Image(ref)


def node_images(
    workload: WorkloadSpec, machine: catalog.Machine, image: ImageSpec, machine_key: Key, driver_key: Key | None
) -> list[tuple[Key, object, catalog.Image]]:
    """(key, value, image) of every image the job runs on `machine`'s nodes, keyed by what in the
    config makes it run: `machine_key` names the machine, `driver_key` the pool's request for the
    driver installer DaemonSet (None: none)."""
    found: list[tuple[Key, object, catalog.Image]] = [training_image(image)]
    stack = machine.gpudirect_images
    for role in ("nccl_plugin", "rxdm", "nri_device_injector"):
        if stack is not None and (pinned := getattr(stack, role)) is not None:
            found.append((machine_key, machine.name, pinned))
    if machine.gpudirect in (catalog.GpuDirect.TCPX, catalog.GpuDirect.TCPXO):
        found += [(machine_key, machine.name, catalog.image("pause"))]
    if machine.gpudirect is catalog.GpuDirect.TCPXO:
        found += [(machine_key, machine.name, catalog.image("node-setup"))]
    if machine.accelerator_topology is not None:  # the DRA driver's kubelet plugin, for IMEX
        found.append((machine_key, machine.name, catalog.image(machine.dra_driver_image or "nvidia-dra-driver")))
    if workload.dataset is not None:
        found.append(((WORKLOAD, "dataset", "source"), workload.dataset.source, catalog.image("cloud-sdk")))
    if workload.resiliency.enabled:
        found.append(((WORKLOAD, "resiliency", "enabled"), True, catalog.image("resiliency")))
    if driver_key is not None:
        found.append((driver_key, "daemonset", catalog.image("nvidia-driver-installer-cos")))
    return found


def problems(workload: WorkloadSpec, machine: catalog.Machine, image: ImageSpec, machine_key: Key, driver_key: Key | None = None) -> list[Problem]:
    """Each image on the job's nodes that is not published for their architecture (unknown is
    refused except on amd64)."""
    arch = machine.architecture
    found: list[Problem] = []
    for key, value, pinned in node_images(workload, machine, image, machine_key, driver_key):
        runs = pinned.runs_on(arch)
        if runs or (runs is None and arch == "amd64"):
            continue
        why = (
            f"published for {', '.join(pinned.platforms)} only"
            if pinned.platforms is not None
            else "with no platforms recorded in the catalog (core/catalog/images.py), so unknown, and unknown is refused on Arm"
        )
        found.append(Problem(key, value, f"runs {pinned.ref} on {machine.name}'s linux/{arch} nodes, an image {why}; use one published for linux/{arch}"))
    return found
