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

a4x-maxgpu-4g-metal (A4X Max) has no row either: no complete listing was found (searched 2026-11-28).
- Google's pages: the stored docs.cloud.google.com/compute/docs/gpus (A4X Max machine types) and
  ai-hypercomputer/docs/create/create-a4xmax-instances-in-bulk (Limitations: "You can only create
  instances in certain regions and zones") point to compute/docs/gpus/gpu-regions-zones, of which no
  stored copy was found (the docs and pages corpora, by URL and by title).
- Cluster Toolkit 1047080 (main) and c765092 (develop): examples/gke-a4x-max-bm leaves `zone:` blank
  (its README: "the zone where machines are available in your reservation"), as does
  examples/machine-learning/a4x-maxgpu-4g-metal ("supply zone with a4x-maxgpu-4g-metal capacity in
  reservation"); tools/cloud-build/daily-tests tests no A4X Max.
- gpu-recipes 2e1fd5e training/a4x-max/* and inference/a4xmax/*: `<CLUSTER_REGION>` placeholders.
- xpk 367c838 (no GB300 system), terraform-provider-google-beta 93c65b2 (no a4x-max or gb300), the
  SkyPilot snapshot above (no a4x series), the code and issues corpora: no zone.
- The one listing: a third party's recorded copy of the GPU regions and zones page,
  sean-reid/cloud-atlas@bec943e8d9074f2ca9a76da848bddc8700c3a136 tests/fixtures/gcp-gpu-zones.html
  (its pipeline/fixtures.ts serves it for that URL), names A4X Max in us-central1-b, us-east4-a and
  us-east4-b (MACHINE_ZONES_NAMED). It is undated and trimmed: it holds eleven regions only
  (asia-east1, asia-northeast1, asia-southeast1, europe-west1, europe-west2, europe-west4,
  southamerica-east1, us-central1, us-east1, us-east4, us-west1), none of us-south1, asia-south1 or
  europe-north1, where the table above has A4 and A3 Ultra zones.
Departure: the issue asks validate to refuse A4X Max outside its allowlisted zones; a partial,
undated third-party copy cannot refuse a zone Google may list (or a reservation may hold), so
validate warns about a zone outside MACHINE_ZONES_NAMED (rules.machine_zone_named) and refuses none;
GKE refuses a pool outside the reservation's zone. A copy of Google's page would turn it into a row of
MACHINE_ZONES.
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

# Zones named by a partial, undated listing (docstring): warned about, never refused.
MACHINE_ZONES_NAMED_AS_OF = "2026-11-28"
MACHINE_ZONES_NAMED_SOURCE = "sean-reid/cloud-atlas@bec943e tests/fixtures/gcp-gpu-zones.html, a partial copy of compute/docs/gpus/gpu-regions-zones"
MACHINE_ZONES_NAMED: dict[str, frozenset[str]] = {
    "a4x-maxgpu-4g-metal": frozenset({"us-central1-b", "us-east4-a", "us-east4-b"}),
}
