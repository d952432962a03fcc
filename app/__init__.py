"""The application: the Pulumi program, stack discovery, validation, the offline plan engine,
operations (Automation API, diff, bench, reap), reports and the CLI. It imports the foundation,
infra and workloads; nothing below imports it."""
