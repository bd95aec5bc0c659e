#!/usr/bin/env bash
# Run a command (and every process it starts) on a share of this machine's 2 cores, as
# if on a CPU SLOWDOWN times slower: a CPU cgroup with a bandwidth quota (needs root and
# a writable cgroup file system, v1 or v2). For estimates only: the quota slows every
# part alike, a slower CPU does not (docs/MEASUREMENTS.md, twelfth session).
#
#   scripts/run_slower.sh SLOWDOWN COMMAND [ARGS...]
#
# llama.cpp's threads wait for each other at every step, so the run comes out slower than
# SLOWDOWN (measured 2.7x at 2.13): calibrate by the decode step the daemon's weight
# choice times (weights-choice.json in a fresh data directory), not by SLOWDOWN.
set -euo pipefail
slowdown="$1"
shift
cores="${CORES:-2}"
period=5000 # microseconds; short, so that a pause lasts at most a few milliseconds
quota=$(python3 -c "import sys; print(int($cores * $period / float(sys.argv[1])))" "$slowdown")
name="shadowtab-slower-$$"
if [ -d /sys/fs/cgroup/cpu ] && [ -w /sys/fs/cgroup/cpu ]; then # cgroup v1
    parent=/sys/fs/cgroup/cpu
    members=tasks
elif [ -w /sys/fs/cgroup/cgroup.subtree_control ]; then # cgroup v2
    parent=/sys/fs/cgroup
    members=cgroup.procs
    echo +cpu >"$parent/cgroup.subtree_control" # the children get cpu.max
else
    echo "run_slower.sh: no writable CPU cgroup here (needs root)" >&2
    exit 2
fi
group="$parent/$name"
leave() { # back to the parent group, then the (empty) group goes
    echo $$ >"$parent/$members"
    rmdir "$group" 2>/dev/null || true
}
trap leave EXIT
mkdir "$group"
if [ "$members" = tasks ]; then
    echo "$period" >"$group/cpu.cfs_period_us"
    echo "$quota" >"$group/cpu.cfs_quota_us"
else
    echo "$quota $period" >"$group/cpu.max"
fi
echo $$ >"$group/$members"
"$@"
