"""What the engines run: the Pulumi program, its validation and secrets, the stack files, and the component package's schema."""
