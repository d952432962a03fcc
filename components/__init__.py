"""Reusable component resources: each a whole capability, knowing no recipe.

GCP (`trainstack:gcp:*`): gcp_services, gcp_network, gke_cluster, node_pools, gcp_storage, image.
Kubernetes (`trainstack:k8s:*`): k8s_provider, kueue, jobset, multinic, gpudirect_installers,
volumes, workload_identity.
"""
