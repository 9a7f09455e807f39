#!/usr/bin/env bash
# Tests slurm/submit.sh on a real single-node Slurm cluster started here from Debian's slurm-wlm
# and munge (as root). A tiny comparison of 3 runs goes in twice: as 4 shards, which every task
# refuses, so the merge job must be cancelled; then as an array of 3 shards and a merge job, whose
# results must equal those of one process running the same comparison — the runs are
# deterministic, so every perplexity and every claim's verdict and numbers must be the same.
# Every daemon it starts is stopped on exit. Waits are bounded: it fails, saying what it waited
# for, rather than hang. About 35 s on 2 cores.
#
#	bash slurm/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

fail() {
	echo "slurm test: FAIL: $*" >&2
	exit 1
}
for c in munged slurmctld slurmd sbatch squeue scontrol jq go ss pgrep; do
	command -v "$c" >/dev/null || fail "$c not found (apt-get install slurm-wlm munge jq)"
done
[ "$(id -u)" -eq 0 ] || fail "run as root: the test starts slurmd, which runs the jobs, as root"

# munged wants every folder on its socket's path searchable by all, and its key private.
tmp=$(mktemp -d /tmp/slurm-test.XXXXXX)
chmod 711 "$tmp"
mkdir -p "$tmp/run" "$tmp/etc" "$tmp/state" "$tmp/spool/$(hostname -s)"
chmod 755 "$tmp/run"
chmod 700 "$tmp/etc"

pids=()
cleanup() {
	status=$?
	set +e
	# Cancel what is left first, so that slurmd ends the jobs' processes before it stops.
	if [ -n "${SLURM_CONF:-}" ] && [ -n "$(squeue -h -o %i 2>/dev/null)" ]; then
		scancel --full $(squeue -h -o %i) 2>/dev/null
		for _ in $(seq 30); do
			[ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
			sleep 1
		done
	fi
	for ((k = ${#pids[@]} - 1; k >= 0; k--)); do
		kill "${pids[k]}" 2>/dev/null
	done
	for p in "${pids[@]}"; do
		for _ in $(seq 50); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$p" 2>/dev/null
	done
	# A job step left behind would still name this test's folder on its command line.
	left=$(pgrep -f "$tmp" || true)
	if [ -n "$left" ]; then
		echo "slurm test: processes left running, stopped: $left" >&2
		kill -9 $left 2>/dev/null
		status=1
	fi
	if [ "$status" -ne 0 ]; then
		for f in "$tmp"/*.log "$tmp"/out/slurm/*.out; do
			[ -f "$f" ] && { echo "== $f"; tail -n 20 "$f"; } >&2
		done
	fi
	rm -rf "$tmp"
	exit "$status"
}
trap cleanup EXIT

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
munged -F --key-file="$tmp/etc/munge.key" --socket="$tmp/run/munge.sock" \
	--pid-file="$tmp/run/munged.pid" --seed-file="$tmp/etc/munge.seed" 2>"$tmp/munged.log" &
pids+=($!)
until_ok 10 "munged" munge -S "$tmp/run/munge.sock" -n

# The smallest slurm.conf for this host: one node with its real name and CPU count, addressed on
# the loopback; no cgroups, no accounting.
export SLURM_CONF=$tmp/etc/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=extrapolate-test
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
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
# In the foreground (-D) they log to stderr, kept in a file to show when the test fails.
slurmctld -D -i -f "$SLURM_CONF" 2>"$tmp/slurmctld.log" &
pids+=($!)
until_ok 20 "slurmctld to answer" scontrol ping
slurmd -D -f "$SLURM_CONF" 2>"$tmp/slurmd.log" &
pids+=($!)
node_idle() { [ "$(sinfo -h -n "$host" -o %T)" = idle ]; }
until_ok 30 "node $host to be idle" node_idle

# The comparison: 3 runs of 1 seed, a few dozen steps, a small evaluation; lengths reaching 16x
# so that the ALiBi claim is judged too.
cat >"$tmp/tiny.yaml" <<EOF
comparison: slurm_tiny
seeds: [1]
set:
  train.steps: 60
  train.warmup: 10
  eval.tokens: 4096
  eval.lengths: [64, 256, 1024]
runs:
  - {config: $root/configs/learned.yaml}
  - {config: $root/configs/rope_ntk.yaml}
  - {config: $root/configs/alibi.yaml}
EOF

# submit OUT SHARDS: submits the comparison, setting array and report to the two jobs' ids.
submit() {
	local sub
	sub=$(slurm/submit.sh "$tmp/tiny.yaml" "$2" "$1")
	echo "$sub"
	array=$(sed -n 's/^shards: job \([0-9]*\),.*/\1/p' <<<"$sub")
	report=$(sed -n 's/^report: job \([0-9]*\),.*/\1/p' <<<"$sub")
	[ -n "$array" ] && [ -n "$report" ] || fail "submit.sh printed no job ids"
}
# A job's state, as scontrol keeps it for MinJobAge after it ends: COMPLETED, FAILED, ...
state() { scontrol -o show job "$1" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | sort -u | paste -sd,; }
report_ended() { case $(state "$report") in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY) true ;; *) false ;; esac; }

# Failing shards: 4 shards of 3 runs, which every task refuses at once. The merge job must not
# run, and nothing be reported.
submit "$tmp/bad" 4
until_ok 120 "the merge job $report to be cancelled (array $array: $(state "$array"))" report_ended
[ "$(state "$array")" = FAILED ] || fail "4 shards of 3 runs ended $(state "$array"), want FAILED"
[ "$(state "$report")" = CANCELLED ] || fail "the merge job after failed shards ended $(state "$report"), want CANCELLED"
grep -q -- '-shard: 3/4, but the comparison has 3 runs' "$tmp"/bad/slurm/shard-*_3.out ||
	fail "the fourth task's log does not give train's -shard error"
[ ! -e "$tmp/bad/REPORT.md" ] || fail "failed shards wrote a report"

start=$SECONDS
submit "$tmp/out" 3
until_ok 300 "the merge job $report (array $array: $(state "$array"))" report_ended
[ "$(state "$array")" = COMPLETED ] || fail "shards ended $(state "$array"), want COMPLETED"
[ "$(state "$report")" = COMPLETED ] || fail "merge job ended $(state "$report"), want COMPLETED"
echo "slurm: shards and merge done in $((SECONDS - start)) s"
# Each task ran its own shard: the tasks' logs name shards 0/3, 1/3 and 2/3 once each.
shards=$(cat "$tmp"/out/slurm/shard-*.out | sed -n 's/^shard \([0-9]*\/[0-9]*\) .*/\1/p' | sort | paste -sd' ')
[ "$shards" = "0/3 1/3 2/3" ] || fail "the array's tasks ran shards \"$shards\", want \"0/3 1/3 2/3\""

# The same comparison in one process.
nice -n 10 "$tmp/out/slurm/train" -config "$tmp/tiny.yaml" -out "$tmp/single" -quiet >/dev/null

# The numbers of every run and the claims, without what differs between two honest runs (when
# and how it was run, how long it took).
numbers() {
	jq -S 'del(.command, .generated) | .runs |= map(.result |= del(.train_seconds, .eval_seconds))' "$1/ppl_by_run.json"
}
numbers "$tmp/out" >"$tmp/slurm.json"
numbers "$tmp/single" >"$tmp/single.json"
[ "$(jq '.runs | length' "$tmp/slurm.json")" -eq 3 ] || fail "the merged results hold $(jq '.runs | length' "$tmp/slurm.json") runs, want 3"
jq -e '[.runs[].result.lengths[] | select(.applicable) | .perplexity] | length > 0 and all(. > 1)' "$tmp/slurm.json" >/dev/null ||
	fail "the merged results hold no perplexities"
diff -u "$tmp/single.json" "$tmp/slurm.json" >&2 || fail "ppl_by_run.json of the Slurm run differs from one process's (above)"
claims() { sed -n '/^## Claims/,/^## Runs/p' "$1/REPORT.md"; }
grep -q '^| 1 | .*reproduced' <(claims "$tmp/out") || fail "the Slurm run's REPORT.md has no claims table"
diff -u <(claims "$tmp/single") <(claims "$tmp/out") >&2 || fail "REPORT.md's claims differ from one process's (above)"
echo "slurm test: ok: the merged comparison equals one process's ($(jq '[.runs[].result.lengths[] | select(.applicable)] | length' "$tmp/slurm.json") perplexities, $(jq '.claims | length' "$tmp/slurm.json") claims)"
