"""Hosts the public trainstack components as the Pulumi package `trainstack` (see
trainstack.app.deploy.package)."""

import sys

from pulumi.provider import main

from trainstack.app.deploy.package import provider

if __name__ == "__main__":
    main(provider(), sys.argv[1:])
