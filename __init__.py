"""trainstack: GPU training recipes on GKE as one typed Pulumi program.

The repository root is this package: every module's import path is its path in the tree
(`trainstack.core.catalog` is core/catalog/).
"""
