"""Fixtures: a fresh simulated node per test and a runner for its shims."""

import importlib
import os
import subprocess
import sys
import time

import pytest

SIM_SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
if SIM_SRC not in sys.path:
    sys.path.insert(0, SIM_SRC)

from lustre_sim.lifecycle import create_node  # noqa: E402


# The simulator's tests are a project of their own (run from simulator/, importing only lustre_sim), so they keep
# this one copy of the wait the collection's tests share (tests/unit/waiting.py, importable only through the
# ansible_collections namespace the collection is installed in) rather than reach into the collection's tree.
def wait_for(what, condition, deadline_s=30, process=None):
    """``condition()``'s first true value, polled until ``deadline_s`` seconds have passed, else an AssertionError
    naming ``what`` and the deadline: never wait for a fixed time. With ``process`` (a Popen), its ending before the
    condition holds fails at once, with its exit status and the end of its output."""
    deadline = time.monotonic() + deadline_s
    while True:
        value = condition()
        if value:
            return value
        if process is not None and process.poll() is not None:
            value = condition()  # it may have come true just before the process ended
            if value:
                return value
            output = process.stdout.read() if process.stdout is not None else ""
            if isinstance(output, bytes):
                output = output.decode("utf-8", "replace")
            raise AssertionError("%s: the command ended first (rc %s)%s"
                                 % (what, process.returncode, ":\n" + output[-6000:] if output else ""))
        if time.monotonic() >= deadline:
            raise AssertionError("timed out after %d s waiting for %s" % (deadline_s, what))
        time.sleep(0.05)


class SimNode:
    """A node under a temporary root plus helpers to run its shims like a shell would."""

    def __init__(self, root, node):
        self.root = str(root)
        self.node = node

    def env(self, **extra):
        env = dict(os.environ)
        env["PATH"] = os.path.join(self.root, "bin") + os.pathsep + env.get("PATH", "")
        env["LUSTRE_SIM_ROOT"] = self.root
        env["PYTHONPATH"] = SIM_SRC + os.pathsep + env.get("PYTHONPATH", "")
        env.update(extra)
        return env

    def run(self, *argv, stdin=None, timeout=60):
        return subprocess.run(list(argv), input=stdin, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True,
                              env=self.env(), timeout=timeout)

    def lctl(self, *argv, stdin=None, timeout=60):
        return self.run(os.path.join(self.root, "bin", "lctl"), *argv, stdin=stdin,
                        timeout=timeout)

    def devno(self, name):
        for line in self.lctl("dl").stdout.splitlines():
            fields = line.split()
            if fields[3] == name:
                return fields[0]
        return None

    def wait_for_hang(self, process, deadline_s=30):
        """Wait until ``process`` hangs on a fault (it may be slow to get there), or fail at the deadline."""
        wait_for("the command to hang on its fault",
                 lambda: any(h["pid"] == process.pid for h in self.node.hung_commands()), deadline_s, process)

    def echo_client(self, target, layer="", name=None):
        # A client's osc names are too long for "<osc>_ecc_UUID" (a UUID holds under 40 bytes): pass a name.
        name = name or target + "_ecc"
        self.run(os.path.join(self.root, "bin", "modprobe"), "obdecho")
        result = self.lctl(stdin="attach echo_client %s %s_UUID\nsetup %s %s\n"
                           % (name, name, target, layer))
        assert result.returncode == 0, result.stderr
        return self.devno(name)


def make_node(path, **settings):
    settings.setdefault("osts", 2)
    settings.setdefault("ost_size_mib", 16)
    settings.setdefault("mdt_size_mib", 16)
    return SimNode(path, create_node(str(path), settings, python=sys.executable))


def node_from_config(path, config_text):
    """A node made the documented way: ``lustre-sim init --config FILE`` (client left unmounted)."""
    from lustre_sim.cli import main
    from lustre_sim.node import Node

    config_file = str(path) + ".yaml"
    with open(config_file, "w") as handle:
        handle.write(config_text)
    assert main(["init", "--root", str(path), "--config", config_file, "--no-mount"]) == 0
    return SimNode(path, Node(str(path)))


CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PARSERS = os.path.join(CHECKOUT, "plugins", "module_utils", "parsers")


@pytest.fixture(scope="session")
def parse(tmp_path_factory):
    """parse(format, text) with the collection's ``parse_<format>``; they import themselves
    as ``ansible_collections.lustre.iokit...``, so a temporary directory with that path
    (a symlink to the checkout) goes on sys.path."""
    if not (os.path.isfile(os.path.join(PARSERS, "lctl_dl.py"))
            and os.path.isfile(os.path.join(CHECKOUT, "galaxy.yml"))):
        pytest.skip("the lustre.iokit checkout is not beside the simulator (%s)" % PARSERS)
    base = tmp_path_factory.mktemp("collections")
    os.makedirs(str(base / "ansible_collections" / "lustre"))
    os.symlink(CHECKOUT, str(base / "ansible_collections" / "lustre" / "iokit"))
    sys.path.insert(0, str(base))
    try:
        def parse_as(output_format, text):
            module = importlib.import_module(
                "ansible_collections.lustre.iokit.plugins.module_utils.parsers." + output_format)
            return getattr(module, "parse_" + output_format)(text)
        yield parse_as
    finally:
        sys.path.remove(str(base))


@pytest.fixture
def sim(tmp_path):
    return make_node(tmp_path / "node", client_mount="/mnt/testfs")


class StepClock:
    """Stands in for time.time and time.sleep in lustre_sim.node: sleeping moves the clock."""

    def __init__(self, now):
        self.now = now

    def time(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


@pytest.fixture
def step_clock(monkeypatch):
    """lustre_sim.node's clock, replaced by one that moves only when the node sleeps: what a test books on a
    target's time line is then exact, whatever the machine's speed."""
    clock = StepClock(1000.0)
    monkeypatch.setattr("lustre_sim.node.time", clock)
    return clock


@pytest.fixture
def node_factory(tmp_path):
    def factory(name="node", **settings):
        return make_node(tmp_path / name, **settings)
    return factory


def pytest_collection_modifyitems(session, config, items):
    import pip_install

    if not config.option.collectonly and pip_install.possible() \
            and any(os.path.basename(str(item.fspath)) == "test_install.py" for item in items):
        pip_install.start()


def pytest_sessionfinish(session, exitstatus):
    import pip_install

    pip_install.finish()
