#!/usr/bin/env bash
# playbooks/survey-sgpdd.yml end to end on two loop devices of localhost (group oss), then a rerun with the same
# run id (skipped: already ok), then an interrupted survey (ansible-playbook killed with SIGKILL mid-sweep)
# followed by playbooks/cleanup.yml.  After each: results stored, no sgp_dd on our devices, no scratch left.
# Destructive (writes to loop devices it creates), as root; every file lives in a temporary directory.
set -eu -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
# The checkout's playbooks when run from it, else those of the collection ansible-test installed.
playbooks=
for candidate in "$here/../../../../playbooks" $(echo "${ANSIBLE_COLLECTIONS_PATH:-}" | tr ':' ' ' | sed 's|\([^ ]*\)|\1/ansible_collections/lustre/iokit/playbooks|g'); do
    if [ -f "$candidate/survey-sgpdd.yml" ]; then playbooks=$(cd "$candidate" && pwd); break; fi
done
[ -n "$playbooks" ] || { echo "FAIL: cannot find the collection's playbooks" >&2; exit 1; }
work=$(mktemp -d /tmp/lustre-iokit-sgpdd-test.XXXXXX)
# The modules (local connection) unpack their payloads under TMPDIR, and the cleanup removes the payloads it finds
# there whose module is gone: a temporary directory of this target's own keeps other tests' modules, running or
# killed beside it on the machine, out of what its cleanups find and change.
export TMPDIR=$work/tmp
mkdir -p "$TMPDIR"
loops=()
slow_device=$here/../setup_slow_device/files/slow_device.py
slow_group=
finish() {
    [ -z "$slow_group" ] || python "$slow_device" release "$slow_group" || true
    for loop in "${loops[@]}"; do
        pkill -TERM -f "of=$loop( |$)" || true
        losetup --detach "$loop" || true
    done
    rm -rf "$work"
}
trap finish EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

for i in 0 1; do
    truncate --size 160M "$work/disk$i.img"
    loops+=("$(losetup --find --show --direct-io=on "$work/disk$i.img")")
done
mkdir -p "$work/inventory/host_vars"
cat > "$work/inventory/hosts.yml" <<INVENTORY
all:
  children:
    oss:
      hosts:
        localhost:
          ansible_connection: local
          ansible_python_interpreter: $(command -v python)
INVENTORY
cat > "$work/inventory/host_vars/localhost.yml" <<VARS
sgpdd_devices: [${loops[0]}, ${loops[1]}]
sgpdd_destroy_data: true
sgpdd_size_mib: 64
sgpdd_crghi: 2
sgpdd_thrhi: 4
sgpdd_poll_interval_s: 1
iokit_results_dir: $work/results
iokit_workdir: $work/node
VARS

our_sgp_dd() { pgrep -a -x sgp_dd | grep -E "(if|of)=(${loops[0]}|${loops[1]})( |$)" || true; }
# Wait up to $1 seconds for the command "${@:2}" to succeed (a condition with a deadline, never a fixed sleep).
wait_until() {
    local deadline=$((SECONDS + $1))
    shift
    until "$@"; do
        [ "$SECONDS" -lt "$deadline" ] || return 1
        sleep 0.2
    done
}
sgp_dd_running() { [ -n "$(our_sgp_dd)" ]; }
no_sgp_dd_running() { [ -z "$(our_sgp_dd)" ]; }
left_on_node() {
    [ -z "$(our_sgp_dd)" ] || fail "sgp_dd left running: $(our_sgp_dd)"
    [ ! -e "$work/node" ] || fail "scratch left on the node: $(find "$work/node")"
}

ansible-playbook -i "$work/inventory" "$playbooks/survey-sgpdd.yml" -e iokit_run_id=it-1 | tee "$work/out"
run_dir=$work/results/it-1
for file in localhost/sgpdd.json localhost/sgpdd_survey.summary localhost/sgpdd_survey.detail summary-sgpdd.md; do
    [ -s "$run_dir/$file" ] || fail "missing $run_dir/$file"
done
python - "$run_dir/localhost/sgpdd.json" "${loops[@]}" <<'PYTHON'
import json
import sys

envelope = json.load(open(sys.argv[1]))
keys = ('schema', 'run_id', 'host', 'survey', 'engine', 'status', 'parameters', 'started', 'finished',
        'duration_s', 'records', 'errors', 'environment', 'raw_output')
missing = [key for key in keys if key not in envelope]
assert not missing, 'missing keys %s' % missing
assert envelope['schema'] == 'lustre.iokit/result/v1', envelope['schema']
assert (envelope['run_id'], envelope['host'], envelope['survey']) == ('it-1', 'localhost', 'sgpdd'), envelope
assert envelope['status'] == 'ok', (envelope['status'], envelope['errors'])
assert envelope['parameters']['devices'] == sys.argv[2:], envelope['parameters']['devices']
# crg 1..2, thr 1..4, thr >= crg: (1,1) (1,2) (1,4) (2,2) (2,4)
points = [(record['crg_per_dev'], record['thr_per_dev']) for record in envelope['records']]
assert points == [(1, 1), (1, 2), (1, 4), (2, 2), (2, 4)], points
for record in envelope['records']:
    assert record['dev'] == 2, record
    for action in ('write', 'read'):
        assert record['tests'][action]['status'] == 'ok' and record['tests'][action]['mib_s'] > 0, record
PYTHON
grep -q '^## localhost — ok' "$run_dir/summary-sgpdd.md" || fail "summary has no section for localhost"
grep -q '^## Fleet total per sweep point' "$run_dir/summary-sgpdd.md" || fail "summary has no fleet total"
grep -qF "| \`${loops[1]}\` |" "$run_dir/summary-sgpdd.md" || fail "summary has no row for ${loops[1]}"
left_on_node

# Same run id: the host is already ok, nothing runs and the stored files stay as they are.
stamp=$(stat -c %Y.%s "$run_dir/localhost/sgpdd.json")
ansible-playbook -i "$work/inventory" "$playbooks/survey-sgpdd.yml" -e iokit_run_id=it-1 | tee "$work/out"
grep -q 'already ok in run it-1' "$work/out" || fail "the rerun did not skip the host"
[ "$(stat -c %Y.%s "$run_dir/localhost/sgpdd.json")" = "$stamp" ] || fail "the rerun rewrote the envelope"
left_on_node

# A wrong value fails before the node is touched, naming the variable.
if ansible-playbook -i "$work/inventory" "$playbooks/survey-sgpdd.yml" -e iokit_run_id=it-2 \
        -e sgpdd_destroy_data=false > "$work/out"; then
    fail "write without sgpdd_destroy_data was accepted"
fi
grep -q 'sgpdd_destroy_data' "$work/out" || fail "the failure does not name sgpdd_destroy_data"
[ ! -e "$run_dir/../it-2" ] || fail "a rejected run stored something"
left_on_node

# Interrupted: a long survey, ansible-playbook killed with SIGKILL (no always section runs), then cleanup.yml.
# Long by construction: the module runs under an interpreter whose cgroup throttles both loop devices to
# 1/8 MiB/s, so the first point alone (150 MiB written) lasts about 20 minutes however fast the machine. The kill
# and cleanup.yml's stop must come before that point ends: a finished point is kept for a rerun (by design), and
# the checks below expect nothing kept. The cleanup stops the point long before, so the length costs nothing; a
# 150 s point was outlasted by cleanup.yml's start-up on a machine loaded by the whole suite.
slow_group=$(python "$slow_device" throttle 0.125 "$work/slow-python" "$(command -v python)" "${loops[@]}")
ansible-playbook -i "$work/inventory" "$playbooks/survey-sgpdd.yml" -e iokit_run_id=it-3 \
    -e ansible_python_interpreter="$work/slow-python" \
    -e sgpdd_size_mib=150 -e sgpdd_crghi=8 -e sgpdd_thrhi=16 -e sgpdd_rszlo=4 -e sgpdd_rszhi=4 \
    > "$work/out-killed" 2>&1 &
playbook=$!
wait_until 600 sgp_dd_running || fail "the long survey never started sgp_dd: $(tail -c 4000 "$work/out-killed")"
kill -KILL "$playbook"
wait "$playbook" || true
[ -e "$work/node/node-state.json" ] || fail "no node state recorded for cleanup"
# The async wrapper outlives ansible-playbook: the survey is still measuring, with nobody left to stop it.
[ -n "$(our_sgp_dd)" ] || fail "the survey stopped by itself: cleanup.yml would have nothing to stop"
ansible-playbook -i "$work/inventory" "$playbooks/cleanup.yml" -e iokit_workdir="$work/node" | tee "$work/out"
# The cleanup signalled the sgp_dd processes and waited for the module; sgp_dd's threads may still be on their way out.
wait_until 60 no_sgp_dd_running || fail "sgp_dd still running 60 s after cleanup.yml: $(our_sgp_dd)"
left_on_node
# -v: should it change something, the log shows what.
ansible-playbook -v -i "$work/inventory" "$playbooks/cleanup.yml" -e iokit_workdir="$work/node" | tee "$work/out"
grep -q 'localhost *: .*changed=0' "$work/out" || fail "a second cleanup changed something"
echo "survey-sgpdd playbook: all checks passed"
