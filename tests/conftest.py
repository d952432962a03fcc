"""Every test runs offline: no network, no cloud, no Pulumi CLI."""

import os

os.environ.setdefault("PULUMI_SKIP_UPDATE_CHECK", "true")
