"""Machine facts, pinned versions and list prices: the one place they are written down.

Every fact that differs by machine lives in a frozen record here, keyed by the name a user writes in a
stack file. Components read these records; no other module hard-codes a machine type, an image tag or a
chart version. One module a fact domain, each citing its public sources in its docstring (the reasoning)
and beside its records (one line):

- gpus: GPU models (memory, peak throughput);
- machines: GPU and CPU machine types;
- gpudirect: the GPU-to-NIC data paths and their images;
- networking: the GPU NIC networks a machine needs, the VPC MTU;
- zones: the zones offering each GPU machine;
- prices: the price sources, storage and cluster prices;
- images: the other pinned images, by role;
- charts: the pinned controllers' charts, APIs and ports;
- scheduling: the Kueue and DRA driver facts jobs are queued and placed by;
- storage: Filestore and Managed Lustre capacities and mounts;
- startup: image sizes, pull rates and the GKE features that cut a job's start-up.

Every public name is imported here: `catalog.X` is the way to read one.
"""

from trainstack.core.catalog.charts import (
    COMPUTE_DOMAIN_API,
    CONTROLLER_WEBHOOK_PORT,
    DRA_API,
    DRA_API_KUBERNETES,
    DRA_BETA_APIS,
    DRA_DRIVER_CHART,
    DRA_DRIVER_CHART_GB300,
    GKE_NETWORKING_API,
    JOBSET_API,
    JOBSET_CHART,
    KUBERNETES_VERSION,
    KUEUE_API,
    KUEUE_CHART,
    KUEUE_CONFIG_API,
    KUEUE_VISIBILITY_PORT,
    HelmChart,
)
from trainstack.core.catalog.gpudirect import (
    DRANET_MIN_GKE,
    DRANET_NODE_LABEL,
    GIB_REPOSITORY,
    GPUDIRECT_IMAGES,
    MRDMA_DEVICE_CLASS,
    ROCE,
    ROCE_METAL,
    Dranet,
    GpuDirect,
    GpuDirectImages,
    RdmaVpcProfile,
)
from trainstack.core.catalog.gpus import GPUS, Gpu
from trainstack.core.catalog.images import IMAGES, NGC_EARLY_ACCESS, NGC_REGISTRY, Image, image
from trainstack.core.catalog.machines import CPU_MACHINES, MACHINES, CpuMachine, Machine, cpu_machine, machine
from trainstack.core.catalog.networking import JUMBO_MTU, NIC_FAMILY_BLOCK, NicNetwork, nic_networks
from trainstack.core.catalog.prices import (
    CALCULATOR_PRICES_SOURCE,
    DWS_MAX_DISCOUNT,
    GKE_CLUSTER_HOURLY_USD,
    HOURS_PER_MONTH,
    PRICES_AS_OF,
    PRICES_SOURCE,
    SNAPSHOT_PRICES_SOURCE,
    STORAGE_GIB_MONTH_USD,
)
from trainstack.core.catalog.scheduling import (
    COMPUTE_DOMAIN_CHANNEL_CLASS,
    COMPUTE_DOMAIN_CHANNEL_RESOURCE,
    MRDMA_RESOURCE,
    NVLINK_DOMAIN_LEVEL,
    PROVISIONING_RETRY_BASE_SECONDS,
    PROVISIONING_RETRY_LIMIT,
    PROVISIONING_RETRY_MAX_SECONDS,
    SCALE_UP_BUDGET_SECONDS,
)
from trainstack.core.catalog.startup import (
    COLD_PULL_BYTES_PER_S,
    CONTAINER_FILESYSTEM_API,
    DISK_IMAGE_BUILDER_COMMIT,
    DISK_IMAGE_BUILDER_DIR,
    DISK_IMAGE_BUILDER_REPOSITORY,
    GCSFUSE_PARALLEL_DOWNLOADS_OPTION,
    GCSFUSE_PARALLEL_SPEEDUP,
    GCSFUSE_READ_BYTES_PER_S,
    SECONDARY_BOOT_DISK_MIN_GKE,
    STREAMED_FRACTION,
    ImageSize,
    image_size,
)
from trainstack.core.catalog.storage import (
    FILESTORE_TIERS,
    LUSTRE_CSI_DRIVER,
    LUSTRE_LNET_PORT,
    LUSTRE_PORT_988_MIN_GKE,
    LUSTRE_PSA_PREFIX,
    LUSTRE_TIERS,
    StorageTier,
)
from trainstack.core.catalog.zones import (
    MACHINE_ZONES,
    MACHINE_ZONES_AS_OF,
    MACHINE_ZONES_NAMED,
    MACHINE_ZONES_NAMED_AS_OF,
    MACHINE_ZONES_NAMED_SOURCE,
    MACHINE_ZONES_SOURCE,
)

__all__ = [
    "CALCULATOR_PRICES_SOURCE",
    "COLD_PULL_BYTES_PER_S",
    "COMPUTE_DOMAIN_API",
    "COMPUTE_DOMAIN_CHANNEL_CLASS",
    "COMPUTE_DOMAIN_CHANNEL_RESOURCE",
    "CONTAINER_FILESYSTEM_API",
    "CONTROLLER_WEBHOOK_PORT",
    "CPU_MACHINES",
    "DISK_IMAGE_BUILDER_COMMIT",
    "DISK_IMAGE_BUILDER_DIR",
    "DISK_IMAGE_BUILDER_REPOSITORY",
    "DRANET_MIN_GKE",
    "DRANET_NODE_LABEL",
    "DRA_API",
    "DRA_API_KUBERNETES",
    "DRA_BETA_APIS",
    "DRA_DRIVER_CHART",
    "DRA_DRIVER_CHART_GB300",
    "DWS_MAX_DISCOUNT",
    "FILESTORE_TIERS",
    "GCSFUSE_PARALLEL_DOWNLOADS_OPTION",
    "GCSFUSE_PARALLEL_SPEEDUP",
    "GCSFUSE_READ_BYTES_PER_S",
    "GIB_REPOSITORY",
    "GKE_CLUSTER_HOURLY_USD",
    "GKE_NETWORKING_API",
    "GPUDIRECT_IMAGES",
    "GPUS",
    "HOURS_PER_MONTH",
    "IMAGES",
    "JOBSET_API",
    "JOBSET_CHART",
    "JUMBO_MTU",
    "KUBERNETES_VERSION",
    "KUEUE_API",
    "KUEUE_CHART",
    "KUEUE_CONFIG_API",
    "KUEUE_VISIBILITY_PORT",
    "LUSTRE_CSI_DRIVER",
    "LUSTRE_LNET_PORT",
    "LUSTRE_PORT_988_MIN_GKE",
    "LUSTRE_PSA_PREFIX",
    "LUSTRE_TIERS",
    "MACHINES",
    "MACHINE_ZONES",
    "MACHINE_ZONES_AS_OF",
    "MACHINE_ZONES_NAMED",
    "MACHINE_ZONES_NAMED_AS_OF",
    "MACHINE_ZONES_NAMED_SOURCE",
    "MACHINE_ZONES_SOURCE",
    "MRDMA_DEVICE_CLASS",
    "MRDMA_RESOURCE",
    "NGC_EARLY_ACCESS",
    "NGC_REGISTRY",
    "NIC_FAMILY_BLOCK",
    "NVLINK_DOMAIN_LEVEL",
    "PRICES_AS_OF",
    "PRICES_SOURCE",
    "PROVISIONING_RETRY_BASE_SECONDS",
    "PROVISIONING_RETRY_LIMIT",
    "PROVISIONING_RETRY_MAX_SECONDS",
    "ROCE",
    "ROCE_METAL",
    "SCALE_UP_BUDGET_SECONDS",
    "SECONDARY_BOOT_DISK_MIN_GKE",
    "SNAPSHOT_PRICES_SOURCE",
    "STORAGE_GIB_MONTH_USD",
    "STREAMED_FRACTION",
    "CpuMachine",
    "Dranet",
    "Gpu",
    "GpuDirect",
    "GpuDirectImages",
    "HelmChart",
    "Image",
    "ImageSize",
    "Machine",
    "NicNetwork",
    "RdmaVpcProfile",
    "StorageTier",
    "cpu_machine",
    "image",
    "image_size",
    "machine",
    "nic_networks",
]
