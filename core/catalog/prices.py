"""Where the prices come from, and the prices that are not a machine's.

Machine prices sit in their records (`Machine.hourly_usd`, `spot_hourly_usd`, `CpuMachine.hourly_usd`),
each naming one of these sources. All are estimates (no discounts, no taxes) and are reported as such.

Sources:
- PRICES_SOURCE: list on-demand prices in us-central1, read on PRICES_AS_OF from the Compute Engine
  pricing pages.
- SNAPSHOT_PRICES_SOURCE (spot and A4 prices): a snapshot of Google's Cloud Billing Catalog as SkyPilot's
  catalog records it (skypilot-org/skypilot-catalog 2c3d7ea catalogs/v9/gcp/vms.csv, us-central1, VM row
  plus GPU row; its date is not recorded in the copy read). Spot prices "can change up to once every day"
  (cloud.google.com/spot-vms/pricing), so these are estimates of a moving price.
- CALCULATOR_PRICES_SOURCE: a dated copy of the same catalog, per machine type:
  Cyclenerd/google-cloud-pricing-cost-calculator dac3128 pricing.yml (generated 2026-08-20). Its
  us-central1 on-demand prices equal the list prices for a2-highgpu-8g, a2-ultragpu-8g and a3-highgpu-8g;
  it has no a3-ultragpu-8g or a4 rows and no us-central1 a3-megagpu-8g row, which take
  SNAPSHOT_PRICES_SOURCE's.
- DWS_MAX_DISCOUNT: DWS (flex-start and queued provisioning) is billed at a discount on vCPUs, GPUs and
  TPUs of "up to 53%" (cloud.google.com/kubernetes-engine/docs/concepts/dws); no per-machine price was
  found, so a DWS pool is reported between on-demand and on-demand less that discount.
- STORAGE_GIB_MONTH_USD (per GiB-month): Filestore tiers (cloud.google.com/filestore/pricing), PD-SSD
  (cloud.google.com/compute/disks-image-pricing), GCS Standard (cloud.google.com/storage/pricing; billed
  on use, so an empty bucket costs 0).
- GKE_CLUSTER_HOURLY_USD: the GKE Standard cluster management fee per cluster-hour
  (cloud.google.com/kubernetes-engine/pricing).
"""

from __future__ import annotations

PRICES_AS_OF = "2025-06-01"
PRICES_SOURCE = "cloud.google.com/compute/vm-instance-pricing and /compute/gpus-pricing, us-central1"
SNAPSHOT_PRICES_SOURCE = "Cloud Billing Catalog snapshot: skypilot-org/skypilot-catalog 2c3d7ea catalogs/v9/gcp/vms.csv, us-central1"
CALCULATOR_PRICES_SOURCE = (
    "Cloud Billing Catalog as Cyclenerd/google-cloud-pricing-cost-calculator dac3128 pricing.yml (generated 2026-08-20) records it, us-central1"
)
DWS_MAX_DISCOUNT = 0.53  # cloud.google.com/kubernetes-engine/docs/concepts/dws

STORAGE_GIB_MONTH_USD: dict[str, float] = {
    "filestore-BASIC_HDD": 0.16,
    "filestore-BASIC_SSD": 0.30,
    "filestore-ZONAL": 0.25,
    "filestore-REGIONAL": 0.45,
    "filestore-ENTERPRISE": 0.45,
    "pd-ssd": 0.17,
    "pd-balanced": 0.10,
    "gcs-standard": 0.020,
}
HOURS_PER_MONTH = 730
GKE_CLUSTER_HOURLY_USD = 0.10  # cloud.google.com/kubernetes-engine/pricing
