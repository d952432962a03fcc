"""The zones offering each GPU machine type, as Compute Engine listed them.

Source: skypilot-org/skypilot-catalog@2c3d7ea7d76bf84cf80d382e946c1609571485fd catalogs/v9/gcp/vms.csv (the
AvailabilityZone of each row of the machine type; the snapshot SNAPSHOT_PRICES_SOURCE reads prices from),
read 2026-11-25. SkyPilot builds it from the Compute Engine API: zones().list, then machineTypes().list in
each zone, keeping the series it prices and dropping a row whose price it cannot find
(skypilot-org/skypilot@a2f08cf sky/catalog/data_fetchers/fetch_gcp.py). So it is one project's view on one
date that may miss a zone but names none that lacks the machine, and it is not Google's "GPU regions and
zones" page (no stored copy of that page held these rows): validate refuses only what it is sure of
(rules.machine_zone).

a4x-highgpu-4g (GB200) has no row: the fetcher keeps no a4x series, and the zones found for it are single
sightings, not a listing (Cluster Toolkit 1047080 tools/cloud-build/daily-tests/tests/gke-a4x.yml tests in
us-central1-b; xpk's gb200-4 recipe uses us-central1-a as a golden fixture). A partial row would refuse
every zone it misses, so any zone of the region passes.

a4x-maxgpu-4g-metal (A4X Max) has no row either, for want of any listing (read 2026-11-28): the AI
Hypercomputer pages say only that instances can be made "in certain regions and zones"
(docs.cloud.google.com/ai-hypercomputer/docs/create/create-a4xmax-instances-in-bulk, Limitations) and
point to the GPU regions and zones page, of which no stored copy was found; Cluster Toolkit's blueprints
name no zone (c765092 examples/gke-a4x-max-bm/gke-a4x-max-bm.yaml `zone:` blank, its README: "the zone
where machines are available in your reservation"; examples/machine-learning/a4x-maxgpu-4g-metal alike);
the SkyPilot snapshot has no a4x series. The reservation fixes the zone (that README); validate refuses none.
"""

from __future__ import annotations

MACHINE_ZONES_AS_OF = "2026-11-25"
MACHINE_ZONES_SOURCE = "skypilot-org/skypilot-catalog@2c3d7ea catalogs/v9/gcp/vms.csv"
MACHINE_ZONES: dict[str, frozenset[str]] = {
    machine: frozenset(zones.split())
    for machine, zones in {
        "a4-highgpu-8g": "asia-northeast1-b asia-southeast1-b europe-north1-b europe-north1-c europe-west4-b "
        "us-central1-b us-east1-b us-east4-b us-south1-b us-west2-c us-west3-b us-west3-c",
        "a3-ultragpu-8g": "asia-south1-b asia-south2-c europe-west1-b europe-west4-a us-central1-b us-east4-b us-east5-a us-south1-b us-west1-c",
        "a3-megagpu-8g": "asia-east1-c asia-northeast1-b asia-southeast1-b asia-southeast1-c australia-southeast1-c "
        "europe-north1-c europe-west1-b europe-west1-c europe-west3-c europe-west4-b europe-west4-c us-central1-a "
        "us-central1-b us-central1-c us-east4-a us-east4-b us-east4-c us-east5-a us-west1-a us-west1-b us-west4-a",
        "a3-highgpu-8g": "asia-east1-c asia-northeast1-b asia-south1-c asia-south2-b asia-southeast1-b asia-southeast1-c "
        "australia-southeast1-c europe-north1-c europe-west1-b europe-west1-c europe-west3-c europe-west4-b "
        "europe-west4-c europe-west9-c us-central1-a us-central1-b us-central1-c us-east4-a us-east4-b us-east4-c "
        "us-east5-a us-west1-a us-west1-b us-west4-a",
        "a2-ultragpu-8g": "asia-southeast1-c europe-west4-a us-central1-a us-central1-c us-east4-c us-east5-a us-east5-b",
        "a2-highgpu-8g": "asia-northeast1-a asia-northeast1-c asia-northeast3-a asia-northeast3-b asia-southeast1-a "
        "asia-southeast1-b asia-southeast1-c europe-west4-a europe-west4-b me-west1-a me-west1-c us-central1-a "
        "us-central1-b us-central1-c us-central1-f us-east1-b us-west1-b us-west3-b us-west4-b",
    }.items()
}
