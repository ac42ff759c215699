"""lustre-sim: a simulated Lustre node for tests, molecule hosts and the demo.

Targets are backed by real directories and files; the shims in ``ROOT/bin``
imitate Lustre's command-line tools closely enough for the unmodified
lustre-iokit scripts to run.
"""

__version__ = "0.1.0"
