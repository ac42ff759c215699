# lustre.iokit developer entry point.
#   make demo   - the acceptance of a simulated fleet with three planted faults (inventories/demo), as root
#   make test   - every quality gate (what .ci/run runs), the older ansible-core lines included; not the QEMU guest (make test-guest)
#   make check  - before every commit: lint, sanity of the changed files, the unit and simulator tests (a few minutes)
#   make setup  - only prepare .venv (pinned toolchain, collections, apt packages); quick when nothing changed
#   make docs   - the collection's documentation site in .build/docsite/build/html
#   make ee-context - the execution environment's build context in .build/ee/context (no container engine)
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV        := .venv
STAMPS      := $(VENV)/.stamps
COLLECTIONS := $(VENV)/collections
# The all-in-one `ansible` package on PyPI carries the community collections (Galaxy is unreachable here).
ANSIBLE_BUNDLE_VERSION := 14.5.0
DEPENDENCY_COLLECTIONS := community.general ansible.posix containers.podman
# awx.awx left that package after Ansible 5; its last copy there lints and syntax-checks playbooks/awx-configure.yml.
AWX_COLLECTION_BUNDLE_VERSION := 5.10.0
# ansible-core 2.21 needs Python >= 3.12 on the controller.
CONTROLLER_PYTHON ?= $(shell ls -d $$HOME/.pyenv/versions/3.12.*/bin/python 2>/dev/null | sort -V | tail -n 1 || true)
ifeq ($(CONTROLLER_PYTHON),)
CONTROLLER_PYTHON := $(shell command -v python3.12 || true)
endif

.PHONY: help setup setup-core-matrix demo test check test-guest test-core-matrix lint sanity units docs ee-context clean distclean

help:
	@sed -n '2,7p' Makefile | sed 's/^# //'

# The older ansible-core lines of the test matrix (stage core-matrix), one venv each in .venv/core/<line>.
CORE_MATRIX_LINES := $(patsubst tests/tools/core_matrix/requirements-%.txt,%,$(wildcard tests/tools/core_matrix/requirements-*.txt))

setup: $(STAMPS)/python $(STAMPS)/collections $(STAMPS)/awx-collection $(STAMPS)/ansible-test-offline $(STAMPS)/apt $(STAMPS)/simulator

# Only the matrix needs them: built by `make test` and `make test-core-matrix`, not by `make setup` (nor the demo).
setup-core-matrix: setup $(CORE_MATRIX_LINES:%=$(STAMPS)/core-%)

$(STAMPS)/python: requirements-dev.txt
	@test -n "$(CONTROLLER_PYTHON)" || { echo "make: no Python 3.12 found (pyenv install 3.12, or set CONTROLLER_PYTHON=/path/to/python3.12)"; exit 1; }
	@test -x $(VENV)/bin/python || $(CONTROLLER_PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	@mkdir -p $(STAMPS) && touch $@

$(STAMPS)/collections: $(STAMPS)/python Makefile
	$(VENV)/bin/python tests/tools/install_collections.py --ansible-version $(ANSIBLE_BUNDLE_VERSION) \
	    --dest $(COLLECTIONS) --cache $(VENV)/cache --checkout . $(DEPENDENCY_COLLECTIONS)
	@touch $@

$(STAMPS)/awx-collection: $(STAMPS)/collections
	$(VENV)/bin/python tests/awx/install_awx_collection.py --ansible-version $(AWX_COLLECTION_BUNDLE_VERSION) \
	    --dest $(COLLECTIONS) --cache $(VENV)/cache
	@touch $@

$(STAMPS)/ansible-test-offline: $(STAMPS)/python
	$(VENV)/bin/python tests/tools/ansible_test_offline.py
	@touch $@

$(STAMPS)/core-%: tests/tools/core_matrix/requirements-%.txt $(STAMPS)/python
	$(VENV)/bin/python tests/tools/core_matrix.py setup $*
	@touch $@

$(STAMPS)/apt: requirements-apt.txt
	@need=$$(for p in $$(grep -v '^#' requirements-apt.txt); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$need" ]; then \
	    echo "apt: installing $$need"; \
	    SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	    $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$need; \
	fi
	@mkdir -p $(STAMPS) && touch $@

$(STAMPS)/simulator: $(STAMPS)/python $(wildcard simulator/pyproject.toml)
	@if [ -f simulator/pyproject.toml ]; then $(VENV)/bin/python -m pip install --quiet --disable-pip-version-check -e ./simulator; fi
	@touch $@

# The demo's acceptance run includes sgpdd (on loop devices), switched on where acceptance.yml can read it. When the
# demo fails or is interrupted (Ctrl-C, once or twice: the shell traps it, ansible-playbook does not inherit that),
# its teardown runs once more: nothing of the fleet stays on the machine.
# DEMO_ARGS: more ansible-playbook options, e.g. DEMO_ARGS='-e demo_dir=/var/tmp/demo'.
DEMO_PLAYBOOK := $(VENV)/bin/ansible-playbook -i inventories/demo -e acceptance_run_sgpdd=true $(DEMO_ARGS)

demo: setup
	@trap : INT; $(DEMO_PLAYBOOK) playbooks/demo.yml || { rc=$$?; \
	    echo "make demo: the demo failed or was interrupted (rc $$rc); removing its fleet"; \
	    $(DEMO_PLAYBOOK) playbooks/demo/teardown.yml; exit $$rc; }

test: setup-core-matrix
	$(VENV)/bin/python tests/tools/run_test_suite.py

# The inner loop (docs/testing.md): lint and sanity of the changed files and the unit tests, beside the simulator's
# tests and, when a changed file is the history's, the history's on SQLite and PostgreSQL.
check: setup
	$(VENV)/bin/python tests/tools/run_test_suite.py --only lint-changed sanity-changed units-quick simulator history-changed

# The QEMU guest with real SCSI disks (sg, /dev/sg*, MD members): slow under emulation, so not part of `make test`.
test-guest: setup
	$(VENV)/bin/python tests/tools/run_test_suite.py --only guest

# The older ansible-core lines alone (stage core-matrix of `make test`; docs/testing.md).
test-core-matrix: setup-core-matrix
	$(VENV)/bin/python tests/tools/run_test_suite.py --only core-matrix

lint sanity units: setup
	$(VENV)/bin/python tests/tools/run_test_suite.py --only $@

docs: setup
	$(VENV)/bin/python tests/tools/run_test_suite.py --only docsite

ee-context: setup
	rm -rf .build/ee
	$(VENV)/bin/ansible-galaxy collection build --output-path .build/ee/dist
	$(VENV)/bin/ansible-builder create -f execution-environment.yml --context .build/ee/context

clean:
	rm -rf .build tests/output iokit-results

distclean: clean
	rm -rf $(VENV)
