"""A non-editable ``pip install`` of the simulator into a fresh venv, run in the background.

Started by conftest when test_install.py is selected, so that pip's wait for
its build requirements overlaps the other tests; ``finish`` removes it all.
"""

import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import venv

SIMULATOR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_current = []


def possible():
    try:
        import pip
    except ImportError:
        return False
    return tuple(int(p) for p in pip.__version__.split(".")[:2]) >= (22, 3)


class Install:
    def __init__(self):
        self.work = tempfile.mkdtemp(prefix="lustre-sim-pip-")
        # Build from a copy: a build writes build/ and *.egg-info next to the sources.
        source = os.path.join(self.work, "source")
        shutil.copytree(SIMULATOR, source, ignore=shutil.ignore_patterns(
            "tests", "build", "*.egg-info", "__pycache__"))
        target = os.path.join(self.work, "venv")
        venv.EnvBuilder(with_pip=False).create(target)
        self.python = os.path.join(target, "bin", "python")
        self.site = subprocess.check_output(
            [self.python, "-c", "import site; print(site.getsitepackages()[0])"],
            universal_newlines=True).strip()
        # PyYAML comes from the running interpreter (offline); nothing else of it is visible.
        deps = os.path.join(self.work, "deps")
        os.mkdir(deps)
        import yaml
        os.symlink(os.path.dirname(yaml.__file__), os.path.join(deps, "yaml"))
        with open(os.path.join(self.site, "test-deps.pth"), "w") as handle:
            handle.write(deps + "\n")
        command = [sys.executable, "-m", "pip", "--python", self.python, "install", "--quiet",
                   "--no-deps", source]
        setuptools = importlib.util.find_spec("setuptools")
        if setuptools is not None:
            os.symlink(os.path.dirname(setuptools.origin), os.path.join(deps, "setuptools"))
            # setuptools imports its top-level helper package first thing, and finds its own
            # commands (dist_info among them) through the entry points of its dist-info.
            distutils_hack = importlib.util.find_spec("_distutils_hack")
            if distutils_hack is not None:
                os.symlink(os.path.dirname(distutils_hack.origin), os.path.join(deps, "_distutils_hack"))
            metadata = importlib.metadata.distribution("setuptools")
            dist_info = getattr(metadata, "_path", None)
            if dist_info is not None:
                os.symlink(str(dist_info), os.path.join(deps, os.path.basename(str(dist_info))))
            command.insert(-1, "--no-build-isolation")
        self.log = open(os.path.join(self.work, "pip.log"), "w+")
        self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL)

    def wait(self, timeout=300):
        returncode = self.process.wait(timeout=timeout)
        self.log.seek(0)
        return returncode, self.log.read()

    def remove(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.log.close()
        shutil.rmtree(self.work, ignore_errors=True)


def start():
    _current.append(Install())
    return _current[-1]


def started():
    return _current[-1] if _current else None


def finish():
    while _current:
        _current.pop().remove()
