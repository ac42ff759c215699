"""A plain (non-editable) ``pip install`` of the simulator into a fresh venv gives a working node."""

import os
import subprocess

import pytest

import pip_install


@pytest.mark.skipif(not pip_install.possible(),
                    reason="needs pip >= 22.3 (--python) in the interpreter running the tests")
def test_pip_install_into_a_fresh_venv(tmp_path):
    # The install was started in the background when the session began (conftest): pip
    # spends most of its time waiting for the build requirements, the other tests run meanwhile.
    install = pip_install.started() or pip_install.start()
    returncode, output = install.wait()
    if returncode != 0 and "from versions: none" in output:
        pytest.skip("no setuptools for the isolated build (offline, no cache): %s"
                    % output.strip().splitlines()[-1])
    assert returncode == 0, output
    python, site = install.python, install.site

    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "LUSTRE_SIM_ROOT", "VIRTUAL_ENV")}
    root = str(tmp_path / "node")
    lustre_sim = os.path.join(os.path.dirname(python), "lustre-sim")
    init = subprocess.run([lustre_sim, "init", "--root", root, "--osts", "2"], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, cwd=str(tmp_path))
    assert init.returncode == 0, init.stderr
    with open(os.path.join(root, "bin", "lctl")) as handle:
        assert "exec '%s' -m lustre_sim.tools.lctl" % python in handle.read()
    where = subprocess.check_output([python, "-c", "import lustre_sim; print(lustre_sim.__file__)"],
                                    env=env, universal_newlines=True, cwd="/")
    assert where.startswith(site)
    listing = subprocess.run([os.path.join(root, "bin", "lctl"), "dl"], env=env, cwd="/",
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             universal_newlines=True)
    assert listing.returncode == 0, listing.stderr
    assert " obdfilter testfs-OST0001 testfs-OST0001_UUID " in listing.stdout
    for tool, args in (("lsmod", []), ("lfs", ["osts"]), ("lst", ["show_session"]),
                       ("mdtest", ["--help"]), ("mpirun", ["--version"])):
        run = subprocess.run([os.path.join(root, "bin", tool)] + args, env=env, cwd="/",
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             universal_newlines=True)
        assert "Traceback" not in run.stderr and "No module named" not in run.stderr, (tool, run)
    destroy = subprocess.run([lustre_sim, "destroy", "--root", root], env=env)
    assert destroy.returncode == 0 and not os.path.exists(root)
