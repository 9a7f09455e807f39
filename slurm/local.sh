#!/usr/bin/env bash
# Starts a single-node Slurm cluster on this host from Debian's slurm-wlm and munge, for
# slurm/test.sh and slurm/recheck.sh, which source it (as root). It sets SLURM_CONF, makes a
# private folder $tmp, and on exit, or on any signal, cancels what is left, stops every daemon
# it started, then any process of the cluster still running (SIGTERM, then SIGKILL after 5 s),
# and removes $tmp; when the script fails it first shows the daemons' and jobs' logs. It defines
# fail, until_ok (a bounded wait), submit (slurm/submit.sh, keeping the jobs' ids), state (a
# job's state), report_ended, and numbers and claims (what two runs of a comparison must agree on).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)

fail() {
	echo "${0##*/}: FAIL: $*" >&2
	exit 1
}
for c in munged slurmctld slurmd sbatch squeue scontrol jq go ss pgrep setsid; do
	command -v "$c" >/dev/null || fail "$c not found (apt-get install slurm-wlm munge jq)"
done
[ "$(id -u)" -eq 0 ] || fail "run as root: the test starts slurmd, which runs the jobs, as root"

# munged wants every folder on its socket's path searchable by all, and its key private.
tmp=$(mktemp -d /tmp/slurm-local.XXXXXX)
chmod 711 "$tmp"
mkdir -p "$tmp/run" "$tmp/etc" "$tmp/state" "$tmp/spool/$(hostname -s)"
chmod 755 "$tmp/run"
chmod 700 "$tmp/etc"

# The daemons run each in a session of its own (setsid), so that a Ctrl-C, which goes to the
# terminal's foreground process group, reaches this script alone and its cleanup can stop the
# cluster in order. Job steps (slurmstepd) leave the daemons' sessions, and may ignore SIGTERM;
# every process of the cluster, steps and jobs included, carries its SLURM_CONF in its
# environment, which is how the cleanup finds what is left.
pids=()
# cluster_processes: the processes of this cluster still running, but this script.
cluster_processes() {
	local p
	for p in /proc/[0-9]*; do
		[ "${p#/proc/}" != $$ ] || continue
		grep -qzxF "SLURM_CONF=$tmp/etc/slurm.conf" "$p/environ" 2>/dev/null && echo "${p#/proc/}"
	done
	return 0
}
# stop SIGNAL PID...: sends SIGNAL to each PID's process group, or to the PID when it leads none.
stop() {
	local sig=$1 p
	shift
	for p in "$@"; do
		kill -"$sig" -- -"$p" 2>/dev/null || kill -"$sig" "$p" 2>/dev/null
	done
	return 0
}
# alive PID...: whether any of them is still running.
alive() {
	local p
	for p in "$@"; do
		kill -0 "$p" 2>/dev/null && return 0
	done
	return 1
}
cleanup() {
	status=$?
	set +e
	# Whatever signal comes next, the cluster is stopped whole before this script exits.
	trap '' INT TERM HUP QUIT
	# Cancel what is left first, so that slurmd ends the jobs' processes before it stops.
	if [ -n "${SLURM_CONF:-}" ] && [ -n "$(squeue -h -o %i 2>/dev/null)" ]; then
		scancel --full $(squeue -h -o %i) 2>/dev/null
		for _ in $(seq 30); do
			[ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
			sleep 1
		done
	fi
	# The daemons, last started first, each with its session's group; SIGKILL after 5 s.
	for ((k = ${#pids[@]} - 1; k >= 0; k--)); do
		stop TERM "${pids[k]}"
	done
	for _ in $(seq 50); do
		alive "${pids[@]}" || break
		sleep 0.1
	done
	stop KILL "${pids[@]}"
	# A job step or job left behind: stopped too, with SIGKILL after 5 s, and, when nothing
	# else went wrong, reported as a failure, since the cancel above should have ended it.
	left=$(cluster_processes; pgrep -f "$tmp" | grep -vx $$ || true)
	left=$(sort -un <<<"$left" | paste -sd' ')
	if [ -n "$left" ]; then
		echo "${0##*/}: processes left running, stopped: $left" >&2
		kill -TERM $left 2>/dev/null
		for _ in $(seq 50); do
			alive $left || break
			sleep 0.1
		done
		kill -KILL $left 2>/dev/null
		[ "$status" -ne 0 ] || status=1
	fi
	if [ "$status" -ne 0 ]; then
		for f in "$tmp"/*.log "$tmp"/*/slurm/*.out; do
			[ -f "$f" ] && { echo "== $f"; tail -n 20 "$f"; } >&2
		done
	fi
	rm -rf "$tmp"
	exit "$status"
}
trap cleanup EXIT
# A signal ends the script through cleanup, with the shell's usual status for it.
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 131' QUIT
trap 'exit 143' TERM

# until SECONDS WHAT COMMAND...: runs COMMAND every half second until it succeeds, failing after
# SECONDS with WHAT.
until_ok() {
	local limit=$1 what=$2
	shift 2
	local end=$((SECONDS + limit))
	until "$@" >/dev/null 2>&1; do
		[ "$SECONDS" -lt "$end" ] || fail "timed out after ${limit}s waiting for $what"
		sleep 0.5
	done
}

# Ports not in use, so that the test neither meets nor disturbs another Slurm on this host.
free_port() {
	local p
	for _ in $(seq 100); do
		p=$((20000 + RANDOM % 30000))
		ss -Htln "sport = :$p" | grep -q . || { echo "$p"; return; }
	done
	fail "no free TCP port found"
}
ctld_port=$(free_port)
d_port=$(free_port)
[ "$ctld_port" != "$d_port" ] || d_port=$((ctld_port + 1))

host=$(hostname -s)
cpus=$(nproc)
dd if=/dev/urandom of="$tmp/etc/munge.key" bs=1024 count=1 status=none
chmod 400 "$tmp/etc/munge.key"
setsid munged -F --key-file="$tmp/etc/munge.key" --socket="$tmp/run/munge.sock" \
	--pid-file="$tmp/run/munged.pid" --seed-file="$tmp/etc/munge.seed" 2>"$tmp/munged.log" &
pids+=($!)
until_ok 10 "munged" munge -S "$tmp/run/munge.sock" -n

# The smallest slurm.conf for this host: one node with its real name and CPU count, addressed on
# the loopback; no cgroups, no accounting.
export SLURM_CONF=$tmp/etc/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=extrapolate-local
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/run/munge.sock
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool/%n
SlurmctldPidFile=$tmp/run/slurmctld.pid
SlurmdPidFile=$tmp/run/slurmd.pid
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MinJobAge=600
# A cancelled job that ignores SIGTERM gets SIGKILL after 2 s, not 30: the cleanup waits for it.
KillWait=2
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
# In the foreground (-D) they log to stderr, kept in a file to show when the test fails.
setsid slurmctld -D -i -f "$SLURM_CONF" 2>"$tmp/slurmctld.log" &
pids+=($!)
until_ok 20 "slurmctld to answer" scontrol ping
setsid slurmd -D -f "$SLURM_CONF" 2>"$tmp/slurmd.log" &
pids+=($!)
node_idle() { [ "$(sinfo -h -n "$host" -o %T)" = idle ]; }
until_ok 30 "node $host to be idle" node_idle


# A job's state, as scontrol keeps it for MinJobAge after it ends: COMPLETED, FAILED, ...
state() { scontrol -o show job "$1" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | sort -u | paste -sd,; }
# report_ended: whether the job $report has ended, one way or another.
report_ended() { case $(state "$report") in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY) true ;; *) false ;; esac; }

# submit CONFIG SHARDS OUT: submits the comparison with slurm/submit.sh, setting array and
# report to the two jobs' ids.
submit() {
	local sub
	sub=$(slurm/submit.sh "$1" "$2" "$3")
	echo "$sub"
	array=$(sed -n 's/^shards: job \([0-9]*\),.*/\1/p' <<<"$sub")
	report=$(sed -n 's/^report: job \([0-9]*\),.*/\1/p' <<<"$sub")
	[ -n "$array" ] && [ -n "$report" ] || fail "submit.sh printed no job ids"
}

# numbers DIR: every run's numbers and the claims of the comparison in DIR, without what
# differs between two honest runs (when and how it was run, how long it took).
numbers() {
	jq -S 'del(.command, .generated) | .runs |= map(.result |= del(.train_seconds, .eval_seconds))' "$1/ppl_by_run.json"
}
# claims DIR: the claims section of DIR's REPORT.md.
claims() { sed -n '/^## Claims/,/^## Runs/p' "$1/REPORT.md"; }
