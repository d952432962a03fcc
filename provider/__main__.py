"""Hosts the public trainstack components as the Pulumi package `trainstack` (see
trainstack.app.package)."""

from pulumi.provider.experimental import component_provider_host

from trainstack.app.package import NAME, package_version, prepared

if __name__ == "__main__":
    component_provider_host(prepared(), NAME, version=package_version())
