"""The platform of a stack: built from components (config -> GCP layer -> Kubernetes layer, `compose`),
or, for a workload stack, read from a platform stack or an existing cluster (`remote`). The stack file
read into its sections is `stack`; importing this package loads no provider."""
