"""The offline plan: the real program under Pulumi's mock engine with a fake GCP."""
