"""tests/image_checks holds scripts that .ci/run runs in their own virtual environments (run.sh),
not tests of the main suite: pytest collects nothing here."""

collect_ignore_glob = ["*.py"]
