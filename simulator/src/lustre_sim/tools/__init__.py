"""Command implementations behind the shims in ``ROOT/bin`` (one module per tool)."""
