"""The command-line interface: D057's ``ic skill`` verbs as ``skillstudio`` commands."""
