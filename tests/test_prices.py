"""List and spot prices per machine, each with its source (us-central1, per node-hour).

CALCULATOR: Cyclenerd/google-cloud-pricing-cost-calculator dac3128 pricing.yml (generated
2026-08-20): a2-highgpu-8g 29.38708 / spot 16.96648, a2-ultragpu-8g 40.55038 / 23.42302,
a3-highgpu-8g 88.49 / 53.09362. SNAPSHOT: skypilot-org/skypilot-catalog 2c3d7ea catalogs/v9/gcp/
vms.csv, VM row plus GPU row: a3-megagpu-8g spot 5.15632 + 8 x 5.6299, a3-ultragpu-8g spot
6.68552 + 8 x 5.1215, a4-highgpu-8g 8 x 11.277 / spot 8 x 4.7183 (one SKU for the whole node).
"""

from __future__ import annotations

import pytest

from trainstack.core import catalog

CALCULATOR, SNAPSHOT, LIST = catalog.CALCULATOR_PRICES_SOURCE, catalog.SNAPSHOT_PRICES_SOURCE, catalog.PRICES_SOURCE


@pytest.mark.parametrize(
    ("machine", "hourly", "hourly_source", "spot", "spot_source"),
    [
        ("a2-highgpu-8g", 29.39, LIST, 16.97, CALCULATOR),
        ("a2-ultragpu-8g", 40.55, LIST, 23.42, CALCULATOR),
        ("a3-highgpu-8g", 88.49, LIST, 53.09, CALCULATOR),
        ("a3-megagpu-8g", 92.15, LIST, 50.2, SNAPSHOT),
        ("a3-ultragpu-8g", 84.81, LIST, 47.66, SNAPSHOT),
        ("a4-highgpu-8g", 90.22, SNAPSHOT, 37.75, SNAPSHOT),
    ],
)
def test_price_and_spot_price_with_their_sources(machine: str, hourly: float, hourly_source: str, spot: float, spot_source: str) -> None:
    m = catalog.machine(machine)
    assert (m.hourly_usd, m.price_source, m.spot_hourly_usd, m.spot_price_source) == (hourly, hourly_source, spot, spot_source)


def test_the_calculators_on_demand_prices_confirm_the_list_prices() -> None:
    """pricing.yml's us-central1 `hour` (CALCULATOR) rounds to the catalog's list price."""
    for name, hour in (("a2-highgpu-8g", 29.38708), ("a2-ultragpu-8g", 40.5503831232877), ("a3-highgpu-8g", 88.4899999025753)):
        assert round(hour, 2) == catalog.machine(name).hourly_usd, name
