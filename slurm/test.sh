#!/usr/bin/env bash
# Tests slurm/submit.sh on a real single-node Slurm cluster started here from Debian's slurm-wlm
# and munge (as root). A tiny comparison of 3 runs goes in three times: as 4 shards, which
# submit.sh refuses; as 3 shards whose config is gone when they start, so that every task fails and
# the merge job must be cancelled; then as an array of 3 shards and a merge job, whose
# results must equal those of one process running the same comparison — the runs are
# deterministic, so every perplexity and every claim's verdict and numbers must be the same.
# Every daemon it starts is stopped on exit. Waits are bounded: it fails, saying what it waited
# for, rather than hang. About 35 s on 2 cores.
#
#	bash slurm/test.sh
set -euo pipefail
source "$(dirname "$0")/local.sh"

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

# More shards than runs: submit.sh refuses it before submitting anything.
if msg=$(slurm/submit.sh "$tmp/tiny.yaml" 4 "$tmp/bad" 2>&1); then
	fail "submit.sh accepted 4 shards of 3 runs: $msg"
fi
grep -q -- '-shard: 0/4, but the comparison has 3 runs' <<<"$msg" || fail "submit.sh's refusal of 4 shards does not give train's -shard error: $msg"
[ ! -e "$tmp/bad" ] || fail "a refused submission wrote $tmp/bad"

# Failing shards: submitted on hold, then their config is removed, so that every task fails at
# once. The merge job must not run, and nothing be reported.
cp "$tmp/tiny.yaml" "$tmp/gone.yaml"
SBATCH_HOLD=1 submit "$tmp/gone.yaml" 3 "$tmp/bad"
rm "$tmp/gone.yaml"
scontrol release "$array" "$report"
until_ok 120 "the merge job $report to be cancelled (array $array: $(state "$array"))" report_ended
[ "$(state "$array")" = FAILED ] || fail "shards without their config ended $(state "$array"), want FAILED"
[ "$(state "$report")" = CANCELLED ] || fail "the merge job after failed shards ended $(state "$report"), want CANCELLED"
grep -q 'gone.yaml' "$tmp"/bad/slurm/shard-*_2.out || fail "the third task's log does not name the missing config"
[ ! -e "$tmp/bad/REPORT.md" ] || fail "failed shards wrote a report"

start=$SECONDS
submit "$tmp/tiny.yaml" 3 "$tmp/out"
until_ok 300 "the merge job $report (array $array: $(state "$array"))" report_ended
[ "$(state "$array")" = COMPLETED ] || fail "shards ended $(state "$array"), want COMPLETED"
[ "$(state "$report")" = COMPLETED ] || fail "merge job ended $(state "$report"), want COMPLETED"
echo "slurm: shards and merge done in $((SECONDS - start)) s"
# Each task ran its own shard: the tasks' logs name shards 0/3, 1/3 and 2/3 once each.
shards=$(cat "$tmp"/out/slurm/shard-*.out | sed -n 's/^shard \([0-9]*\/[0-9]*\) .*/\1/p' | sort | paste -sd' ')
[ "$shards" = "0/3 1/3 2/3" ] || fail "the array's tasks ran shards \"$shards\", want \"0/3 1/3 2/3\""

# The same comparison in one process.
nice -n 10 "$tmp/out/slurm/train" -config "$tmp/tiny.yaml" -out "$tmp/single" -quiet >/dev/null

numbers "$tmp/out" >"$tmp/slurm.json"
numbers "$tmp/single" >"$tmp/single.json"
[ "$(jq '.runs | length' "$tmp/slurm.json")" -eq 3 ] || fail "the merged results hold $(jq '.runs | length' "$tmp/slurm.json") runs, want 3"
jq -e '[.runs[].result.lengths[] | select(.applicable) | .perplexity] | length > 0 and all(. > 1)' "$tmp/slurm.json" >/dev/null ||
	fail "the merged results hold no perplexities"
diff -u "$tmp/single.json" "$tmp/slurm.json" >&2 || fail "ppl_by_run.json of the Slurm run differs from one process's (above)"
grep -q '^| 1 | .*reproduced' <(claims "$tmp/out") || fail "the Slurm run's REPORT.md has no claims table"
diff -u <(claims "$tmp/single") <(claims "$tmp/out") >&2 || fail "REPORT.md's claims differ from one process's (above)"
echo "slurm test: ok: the merged comparison equals one process's ($(jq '[.runs[].result.lengths[] | select(.applicable)] | length' "$tmp/slurm.json") perplexities, $(jq '.claims | length' "$tmp/slurm.json") claims)"
