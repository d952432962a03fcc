"""Strict schema validation of rendered Kubernetes objects against Kubernetes 1.32 and upstream CRDs."""
