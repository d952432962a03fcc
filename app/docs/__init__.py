"""Generated documentation: the config reference, read from the models and their rules."""
