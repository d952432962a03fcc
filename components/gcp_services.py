"""The Google Cloud APIs a stack calls, enabled once and never disabled on destroy."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from trainstack.components.args import Args, Each, not_empty
from trainstack.components.options import Children
from trainstack.core import rules

# Service names, so callers say `ProjectServices.need(CONTAINER)` rather than spell hosts.
CONTAINER = "container.googleapis.com"
COMPUTE = "compute.googleapis.com"
SERVICE_NETWORKING = "servicenetworking.googleapis.com"  # private services access (Managed Lustre peers through it)
ARTIFACT_REGISTRY = "artifactregistry.googleapis.com"
CLOUD_BUILD = "cloudbuild.googleapis.com"
STORAGE = "storage.googleapis.com"
IAM = "iam.googleapis.com"
LOGGING = "logging.googleapis.com"
MONITORING = "monitoring.googleapis.com"
CLOUD_RESOURCE_MANAGER = "cloudresourcemanager.googleapis.com"  # project IAM, project lookups
SECRET_MANAGER = "secretmanager.googleapis.com"  # a registry login's secret, read by an image build


@dataclass(frozen=True)
class ProjectServicesArgs(Args):
    """Arguments of ProjectServices."""

    project: str
    """The project the APIs are enabled in."""
    services: list[str]
    """API service names (`container.googleapis.com`); order does not matter."""

    # Service names are DNS names (serviceusage.googleapis.com/v1 services.enable).
    _checks = {
        "project": rules.PROJECT_ID,
        "services": (not_empty, Each(rules.Pattern(r"[a-z0-9-]+(\.[a-z0-9-]+)+", "must be an API service name such as container.googleapis.com"))),
    }


class ProjectServices(pulumi.ComponentResource):
    """Enables APIs in a project. Destroying the stack leaves them enabled: other workloads in
    the project may use them, and disabling an API can delete that API's resources."""

    services: dict[str, gcp.projects.Service]
    """The enabled services by name."""

    def __init__(self, name: str, args: ProjectServicesArgs, opts: pulumi.ResourceOptions | None = None):
        args = ProjectServicesArgs.checked(args, type(self), name)
        super().__init__("trainstack:gcp:ProjectServices", name, None, opts)
        kids = Children(self, name, opts)
        self.services = {
            service: gcp.projects.Service(
                **kids(service.split(".", 1)[0]),
                project=args.project,
                service=service,
                disable_on_destroy=False,
                disable_dependent_services=False,
            )
            for service in sorted(set(args.services))
        }
        self.register_outputs({"services": sorted(self.services)})

    def need(self, *services: str) -> list[pulumi.Resource]:
        """The Service resources a resource calling `services` must wait for.

        Raises KeyError naming the service if it was not enabled here: a resource that calls an
        API this stack never enables is a wiring bug, caught before anything registers.
        """
        missing = sorted(set(services) - set(self.services))
        if missing:
            raise KeyError(f"APIs not enabled by this stack: {', '.join(missing)}")
        return [self.services[s] for s in services]
