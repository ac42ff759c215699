"""The simulator's one exception; a leaf module (imports nothing of the package)."""


class SimError(Exception):
    """A simulated node is missing, misconfigured or cannot be changed as asked."""
