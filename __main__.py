"""The Pulumi program: `pulumi up --stack <name>` runs this with the stack's config."""

from trainstack.app.deploy.program import main

main()
