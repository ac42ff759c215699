"""A node's mutable state: ``state/<name>.json`` files read and changed under ``flock``.

A leaf module: it imports nothing of the package but ``errors``, so that any module may import it.
"""

import contextlib
import fcntl
import json
import os
import re
import tempfile

from .errors import SimError


def state_paths(state_dir, name):
    """``(json_path, lock_path)`` of the state ``name``; a SimError for a name that is not a plain file name."""
    if not re.match(r"^[A-Za-z0-9_.-]+$", name):
        raise SimError("bad state name %r" % name)
    return (os.path.join(state_dir, name + ".json"),
            os.path.join(state_dir, name + ".lock"))


@contextlib.contextmanager
def locked(state_dir, name, mode):
    """Hold ``state/<name>.lock`` with ``mode`` (``fcntl.LOCK_EX`` or ``LOCK_SH``) for the block."""
    _, lock_path = state_paths(state_dir, name)
    os.makedirs(state_dir, exist_ok=True)
    handle = open(lock_path, "a")
    try:
        fcntl.flock(handle, mode)
        yield
    finally:
        fcntl.flock(handle, fcntl.LOCK_UN)
        handle.close()


def load(state_dir, name):
    json_path, _ = state_paths(state_dir, name)
    try:
        with open(json_path) as handle:
            return json.load(handle)
    except FileNotFoundError:
        return {}


def save(state_dir, name, data):
    """Replace ``state/<name>.json`` atomically (a reader never sees half a file)."""
    json_path, _ = state_paths(state_dir, name)
    descriptor, temp_path = tempfile.mkstemp(prefix="." + name, dir=state_dir)
    try:
        with os.fdopen(descriptor, "w") as handle:
            json.dump(data, handle, indent=1, sort_keys=True)
            handle.write("\n")
        os.replace(temp_path, json_path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp_path)
        raise


@contextlib.contextmanager
def changed(state_dir, name):
    """Read-modify-write ``state/<name>.json`` under an exclusive lock."""
    with locked(state_dir, name, fcntl.LOCK_EX):
        data = load(state_dir, name)
        yield data
        save(state_dir, name, data)


def read(state_dir, name):
    """``state/<name>.json`` read under a shared lock (``{}`` when it does not exist yet)."""
    with locked(state_dir, name, fcntl.LOCK_SH):
        return load(state_dir, name)
