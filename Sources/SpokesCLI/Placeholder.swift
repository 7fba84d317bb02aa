enum _CLIPlaceholder {}
