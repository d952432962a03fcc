"""Filestore and Managed Lustre: the capacities each tier takes, and how GKE mounts Managed Lustre.

Sources, by record:
- FILESTORE_TIERS: cloud.google.com/filestore/docs/service-tiers (basic: 1 TiB (HDD) or 2.5 TiB (SSD) to
  63.9 TiB in GiB steps; the minimums as hashicorp/terraform-provider-google@e03b762
  website/docs/r/filestore_instance.html.markdown `capacity_gb` gives them), .../service-tiers-zonal (1 TiB
  to 9.75 TiB in 256 GiB steps; 10 TiB to 100 TiB in 2.5 TiB steps) and .../service-tiers-regional (higher
  range as zonal), read 2026-11-25. REGIONAL's lower range is 100 GiB to 10,239 GiB
  (docs.cloud.google.com/filestore/docs/service-tiers-regional.md.txt, read 2026-11-25); the stored copy
  breaks off at its minimum scaling size, and 10,239 - 100 = 10,139 is prime: no step above 1 GiB reaches
  that maximum (an earlier copy of .../service-tiers gave REGIONAL 1 TiB to 9.75 TiB in 256 GiB units; the
  tier page has since widened it). ENTERPRISE: 1 TiB to 10 TiB, up or down in 256 GiB units (the
  comparison table of cloud.google.com/filestore/docs/service-tiers#enterprise_tier, a stored copy read
  2026-11-25; the retired "enterprise-limited" page's 512 GiB to 20 TiB no longer applies).
- LUSTRE_TIERS, by per-unit throughput (MB/s per TiB; the instance's perUnitStorageThroughput): Managed
  Lustre docs "Performance tiers" and "Increase capacity"
  (docs.cloud.google.com/managed-lustre/docs/performance-tiers), read 2026-11-25 from stored copies:
  minimum, maximum, and the step, which grows past a threshold (1000: 9,000 GiB up to 1,530,000, then
  72,000). The larger step's range starts at its first multiple above the threshold, as each maximum is a
  multiple of it. The Dynamic tier is not offered here.
- LUSTRE_PSA_PREFIX: private services access for Managed Lustre, a VPC_PEERING range on the cluster's VPC
  (the driver's e2e test and Cluster Toolkit's examples reserve /20 and /16; the docs ask /23 or larger).
- LUSTRE_CSI_DRIVER: the CSI driver of GKE's Managed Lustre addon (GoogleCloudPlatform/lustre-csi-driver
  89f1eb7 pkg/csi_driver/lustre_driver.go); its static volumeHandle is `<project>/<zone>/<instance>`
  (pkg/util/util.go ParseVolumeID), its volumeAttributes `ip` and `filesystem` (controller.go).
- LUSTRE_LNET_PORT: LNet's port on the instance, which the VPC admits from the private services access
  range (lustre-csi-driver kmod_installer.go: 988; 6988 only for gke-support-enabled instances, not made
  here).
- LUSTRE_PORT_988_MIN_GKE: the oldest GKE node version whose Lustre CSI driver takes port 988 without the
  legacy LNet port 6988 (the workaround for the gke-metadata-server's own port 988, which every trainstack
  node runs under GKE_METADATA): GKE API LustreCsiDriverConfig.enable_legacy_lustre_port, "required ONLY
  ... [when] the GKE node version is older than 1.33.2-gke.4655000 [or] connecting to a Lustre instance that
  has the 'gke-support-enabled' flag" (google.container.v1, docs.cloud.google.com/python/docs/reference/
  container/latest/google.cloud.container_v1.types.LustreCsiDriverConfig, read 2026-11-25). trainstack
  takes the first branch: port 988, no legacy port, an instance without gke-support-enabled, on nodes of
  that version or newer (rules.lustre_gke_version). lustre-csi-driver 89f1eb7
  test/k8s-integration/cluster.go gives 1.33.2-gke.1072000 as the managed driver's oldest node version,
  the floor of the driver alone, below the port's.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StorageTier:
    """The capacities a storage tier (Filestore, Managed Lustre) takes, in GiB: (minimum, maximum,
    step) ranges; a capacity is the minimum of its range plus a whole number of steps."""

    ranges: tuple[tuple[int, int, int], ...]


# cloud.google.com/filestore/docs/service-tiers, -zonal, -regional (module docstring)
FILESTORE_TIERS: dict[str, StorageTier] = {
    "BASIC_HDD": StorageTier(((1024, 65434, 1),)),
    "BASIC_SSD": StorageTier(((2560, 65434, 1),)),
    "ZONAL": StorageTier(((1024, 9984, 256), (10240, 102400, 2560))),
    "REGIONAL": StorageTier(((100, 10239, 1), (10240, 102400, 2560))),
    "ENTERPRISE": StorageTier(((1024, 10240, 256),)),
}

# docs.cloud.google.com/managed-lustre/docs/performance-tiers (module docstring)
LUSTRE_TIERS: dict[int, StorageTier] = {
    1000: StorageTier(((9000, 1530000, 9000), (1584000, 10008000, 72000))),
    500: StorageTier(((18000, 3060000, 18000), (3168000, 20016000, 144000))),
    250: StorageTier(((36000, 6120000, 36000), (6336000, 40032000, 288000))),
    125: StorageTier(((72000, 12240000, 72000),)),
}
LUSTRE_PSA_PREFIX = 20
LUSTRE_CSI_DRIVER = "lustre.csi.storage.gke.io"  # GoogleCloudPlatform/lustre-csi-driver 89f1eb7
LUSTRE_LNET_PORT = 988  # lustre-csi-driver 89f1eb7 kmod_installer.go
LUSTRE_PORT_988_MIN_GKE = "1.33.2-gke.4655000"  # GKE API LustreCsiDriverConfig.enable_legacy_lustre_port
