#!/usr/bin/env bash
# Tests what slurm/local.sh, recheck.sh and submit.sh refuse or clean up, without running a
# comparison (about 30 s, as root, with slurm-wlm and munge installed):
#   - recheck.sh refuses a run name that is not a label (../x), before it removes anything;
#   - recheck.sh refuses a config that did not produce RESULTS, before it starts a cluster, and
#     a grid's folder;
#   - submit.sh refuses a bad config, a shard count that is not a positive number or exceeds the
#     comparison's runs, and an OUT holding another config's runs, before it submits anything;
#   - a signal to a script running the local cluster (Ctrl-C to its process group, or SIGTERM to
#     it alone) stops the whole cluster, a job step that ignores SIGTERM included.
#
#	bash slurm/test_scripts.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work=$(mktemp -d /tmp/slurm-scripts-test.XXXXXX)
holder=
# A holder left by a failed check is stopped as a Ctrl-C would.
trap '[ -z "$holder" ] || kill -INT -- -"$holder" 2>/dev/null; rm -rf "$work"' EXIT

fail() {
	echo "test_scripts: FAIL: $*" >&2
	exit 1
}

# expect CODE TEXT COMMAND...: COMMAND must exit CODE with one line of output containing TEXT.
expect() {
	local code=$1 text=$2 got out
	shift 2
	set +e
	out=$("$@" 2>&1)
	got=$?
	set -e
	[ "$got" -eq "$code" ] || fail "$*: exit $got, want $code: $out"
	[ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || fail "$*: want one line, got: $out"
	grep -qF -- "$text" <<<"$out" || fail "$*: \"$out\" does not say \"$text\""
	echo "ok: $* -> $out"
}

# A tiny finished comparison of two runs, as recheck.sh and submit.sh take it.
cat >"$work/tiny.yaml" <<EOF2
comparison: tiny
seeds: [1, 2]
set: {train.steps: 3, train.warmup: 1, train.seq_len: 16, model.d_model: 16, model.layers: 1, eval.tokens: 256, eval.lengths: [16, 32]}
runs:
  - {config: $root/configs/alibi.yaml}
EOF2
sed 's/train.steps: 3/train.steps: 4/' "$work/tiny.yaml" >"$work/other.yaml"
go build -o "$work/train" ./cmd/train
"$work/train" -config "$work/tiny.yaml" -out "$work/results" -quiet >/dev/null

# recheck.sh: run names are labels, checked before anything is removed.
mkdir -p "$work/keep"
touch "$work/keep/precious"
expect 2 "not a run name" bash slurm/recheck.sh "$work/tiny.yaml" "$work/results" "../../keep"
expect 2 "not a run name" bash slurm/recheck.sh "$work/tiny.yaml" "$work/results" "alibi-s1/../../../keep"
[ -f "$work/keep/precious" ] || fail "recheck.sh removed a folder outside the results"
expect 2 "no such run" bash slurm/recheck.sh "$work/tiny.yaml" "$work/results" "alibi-s9"
# recheck.sh: a grid's folder is not one comparison's.
mkdir -p "$work/grid/d16/runs/alibi-s1"
touch "$work/grid/claims_by_point.json" "$work/grid/REPORT.md"
expect 2 "holds a grid" bash slurm/recheck.sh "$work/tiny.yaml" "$work/grid" "d16/alibi-s1"
# recheck.sh: the config must be the one that produced RESULTS.
expect 2 "did not produce" bash slurm/recheck.sh "$work/other.yaml" "$work/results" alibi-s1
pgrep -x slurmctld >/dev/null && fail "recheck.sh started a cluster for a config that did not produce the results"

# submit.sh: config and shard count checked before anything is submitted or written.
out=$work/submitted
expect 2 "SHARDS" bash slurm/submit.sh "$work/tiny.yaml" 0 "$out"
expect 2 "SHARDS" bash slurm/submit.sh "$work/tiny.yaml" 1.5 "$out"
expect 2 "-shard: 0/3, but the comparison has 2 runs" bash slurm/submit.sh "$work/tiny.yaml" 3 "$out"
expect 2 "nosuch" bash slurm/submit.sh "$work/nosuch.yaml" 1 "$out"
expect 2 "train.stpes" bash slurm/submit.sh "$work/tiny.yaml" 1 "$out" -set train.stpes=3
expect 2 "-overwrite" bash slurm/submit.sh "$work/other.yaml" 2 "$work/results"
[ ! -e "$out" ] || fail "a refused submit.sh wrote $out"
[ ! -e "$work/results/slurm" ] || fail "a refused submit.sh wrote into the results"

# Signals: a script holding the local cluster, with a job step that ignores SIGTERM, is sent a
# signal; once it has exited no process of its cluster may be left.
cat >"$work/hold.sh" <<'EOF2'
source slurm/local.sh
printf '#!/bin/bash\ntrap "" TERM INT HUP\nsleep 600\n' >"$tmp/stubborn.sh"
sbatch --parsable -o /dev/null "$tmp/stubborn.sh" >/dev/null
until_ok 30 "the job to run" pgrep -x slurmstepd
echo "$SLURM_CONF" >"$1"
while :; do sleep 1; done # in steps, so that a signal to this script is handled at once
EOF2
# cluster_processes CONF: the processes started for the cluster whose slurm.conf is CONF: the
# daemons, job steps and jobs all carry it in their environment.
cluster_processes() {
	local p
	for p in /proc/[0-9]*; do
		grep -qzxF "SLURM_CONF=$1" "$p/environ" 2>/dev/null && echo "${p#/proc/}"
	done
	return 0
}
for how in "INT group" "TERM script"; do
	read -r sig target <<<"$how"
	rm -f "$work/conf"
	# env resets SIGINT, which a shell ignores in the commands it starts with &, as a terminal leaves it.
	setsid env --default-signal=INT,TERM,HUP bash "$work/hold.sh" "$work/conf" >"$work/hold.log" 2>&1 &
	holder=$!
	for _ in $(seq 120); do
		[ -s "$work/conf" ] && break
		kill -0 "$holder" 2>/dev/null || fail "the cluster did not start: $(cat "$work/hold.log")"
		sleep 0.5
	done
	[ -s "$work/conf" ] || fail "timed out waiting for the cluster to run a job"
	conf=$(cat "$work/conf")
	if [ "$target" = group ]; then
		kill -"$sig" -- -"$holder" # Ctrl-C: the whole foreground process group
	else
		kill -"$sig" "$holder"
	fi
	for _ in $(seq 120); do
		kill -0 "$holder" 2>/dev/null || break
		sleep 0.5
	done
	kill -0 "$holder" 2>/dev/null && fail "SIG$sig to the $target: the script did not exit within 60 s"
	holder=
	left=$(cluster_processes "$conf")
	if [ -n "$left" ]; then
		ps -o pid,sid,args -p "$(paste -sd, <<<"$left")" >&2 || true
		kill -9 $left 2>/dev/null || true
		fail "SIG$sig to the $target left the cluster's processes above running"
	fi
	echo "ok: SIG$sig to the $target stopped the whole cluster"
done
echo "test_scripts: ok"
