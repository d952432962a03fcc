"""trainstack: GPU training recipes on GKE as one typed Pulumi program."""
