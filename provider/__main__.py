"""Hosts the public trainstack components as the Pulumi package `trainstack` (see
trainstack.app.package)."""

import sys

from pulumi.provider import main

from trainstack.app.package import provider

if __name__ == "__main__":
    main(provider(), sys.argv[1:])
