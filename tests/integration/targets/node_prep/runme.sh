#!/usr/bin/env bash
# node_prep on a loop device: check mode changes nothing, present applies and persists the queue settings,
# a second run changes nothing, absent restores the values found before, a second absent changes nothing.
# Destructive (changes a loop device's queue settings, as root); every file lives in a temporary directory.
set -eu -o pipefail

work=$(mktemp -d /tmp/lustre-iokit-node-prep-test.XXXXXX)
loop=
finish() {
    if [ -n "$loop" ]; then losetup --detach "$loop" || true; fi
    rm -rf "$work"
}
trap finish EXIT

truncate --size 64M "$work/disk.img"
loop=$(losetup --find --show --direct-io=on "$work/disk.img")
queue=/sys/class/block/$(basename "$loop")/queue

settings() { echo "$(cat "$queue/scheduler") | $(cat "$queue/nr_requests") | $(cat "$queue/max_sectors_kb") | $(cat "$queue/read_ahead_kb")"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
# The play recap's changed= count of one ansible-playbook run (its output in $1).
changed_count() { sed -n 's/^localhost *: .*changed=\([0-9]*\).*/\1/p' "$1"; }

before=$(settings)
max_hw=$(cat "$queue/max_hw_sectors_kb")
run() {
    ansible-playbook -i localhost, -c local -e ansible_python_interpreter="$(command -v python)" \
        -e "{\"node_prep_devices\": [\"$loop\"]}" -e node_prep_install_packages=false \
        -e node_prep_nr_requests=64 -e node_prep_read_ahead_kb=128 -e node_prep_max_sectors_kb=$((max_hw * 4)) \
        -e node_prep_udev_rule_file="$work/etc/99-lustre-iokit.rules" \
        -e node_prep_modprobe_file="$work/etc/lustre-iokit.conf" \
        -e node_prep_modules_load_file="$work/etc/modules-lustre-iokit.conf" \
        -e node_prep_saved_state_file="$work/var/node_prep.json" \
        "$@" prepare.yml | tee "$work/out"
}

run --check
[ "$(changed_count "$work/out")" -gt 0 ] || fail "check mode shows no change"
[ "$(settings)" = "$before" ] || fail "check mode changed the device: $before -> $(settings)"
[ ! -e "$work/var/node_prep.json" ] || fail "check mode saved a state file"

run
grep -q '\[mq-deadline\]' "$queue/scheduler" || fail "scheduler not mq-deadline: $(cat "$queue/scheduler")"
[ "$(cat "$queue/nr_requests")" = 64 ] || fail "nr_requests $(cat "$queue/nr_requests"), wanted 64 (set after the scheduler)"
[ "$(cat "$queue/read_ahead_kb")" = 128 ] || fail "read_ahead_kb $(cat "$queue/read_ahead_kb")"
[ "$(cat "$queue/max_sectors_kb")" = "$max_hw" ] || fail "max_sectors_kb $(cat "$queue/max_sectors_kb") not capped at max_hw_sectors_kb $max_hw"
rule="ACTION==\"add|change\", SUBSYSTEM==\"block\", KERNEL==\"$(basename "$loop")\", ATTR{queue/scheduler}=\"mq-deadline\", ATTR{queue/nr_requests}=\"64\", ATTR{queue/max_sectors_kb}=\"$max_hw\", ATTR{queue/read_ahead_kb}=\"128\""
grep -qxF "$rule" "$work/etc/99-lustre-iokit.rules" || fail "udev rule missing or different: $(cat "$work/etc/99-lustre-iokit.rules")"
[ -s "$work/var/node_prep.json" ] || fail "no saved state"

run
[ "$(changed_count "$work/out")" = 0 ] || fail "second run changed something"

run -e node_prep_state=absent --check
[ "$(changed_count "$work/out")" -gt 0 ] || fail "check mode of absent shows no change"
grep -q '\[mq-deadline\]' "$queue/scheduler" || fail "check mode of absent changed the scheduler"

run -e node_prep_state=absent
[ "$(settings)" = "$before" ] || fail "absent did not restore: $before -> $(settings)"
[ ! -e "$work/etc/99-lustre-iokit.rules" ] || fail "absent left the udev rule"
[ ! -e "$work/var/node_prep.json" ] || fail "absent left the saved state"

run -e node_prep_state=absent
[ "$(changed_count "$work/out")" = 0 ] || fail "second absent changed something"

# A wrong value fails before the node is touched, naming the variable.
if run -e node_prep_max_sectors_kb=lots; then fail "node_prep_max_sectors_kb=lots was accepted"; fi
grep -q node_prep_max_sectors_kb "$work/out" || fail "the failure does not name node_prep_max_sectors_kb"
[ "$(settings)" = "$before" ] || fail "a rejected run changed the device"
echo "node_prep: all checks passed"
