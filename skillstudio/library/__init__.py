"""Which library to open: the user's default library, the bundled sample, paths given by the user."""
