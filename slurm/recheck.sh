#!/usr/bin/env bash
# Re-runs some runs of a finished comparison as a Slurm job array, on a single-node cluster
# started here (as root, like slurm/test.sh), and checks that the results and the report's
# claims the merge job writes equal the finished ones to the last bit:
#
#	bash slurm/recheck.sh CONFIG RESULTS RUN...
#	bash slurm/recheck.sh compare_large results/compare_large alibi-s1 alibi-s2 alibi-s3
#
# It copies RESULTS/runs without the named runs, and submits the whole comparison with slurm/
# submit.sh, one array task per run: the tasks whose runs are there find them done, the others
# train theirs, and the last of them (or the merge job) writes ppl_by_run.json and REPORT.md
# afresh. When a claim the comparison checks is not reproduced, the shards exit 1 and the merge
# job is cancelled, as they should; that passes if RESULTS says the same of that claim. Waits at
# most RECHECK_LIMIT seconds (default 3600) for the merge job.
set -euo pipefail
if [ $# -lt 3 ]; then
	echo "usage: slurm/recheck.sh CONFIG RESULTS RUN..." >&2
	exit 2
fi
config=$1
results=$(realpath -e -- "$2" 2>/dev/null) || { echo "recheck: $2: not found (want a finished comparison's folder)" >&2; exit 2; }
shift 2
# A config path is taken from here; the scripts below run from the clone's root.
case $config in
*/*) config=$(realpath -m -- "$config") ;;
esac
root=$(cd "$(dirname "$0")/.." && pwd)
# A grid's folder holds one comparison folder per point; recheck takes one comparison's.
[ ! -f "$results/claims_by_point.json" ] ||
	{ echo "recheck: $results holds a grid (claims_by_point.json), not one comparison: recheck takes a comparison's folder and its config" >&2; exit 2; }
for f in "$results/ppl_by_run.json" "$results/REPORT.md"; do
	[ -f "$f" ] || { echo "recheck: $f: not found (want a finished comparison's folder)" >&2; exit 2; }
done
# A run name becomes a path that is removed below: it must be a label, as train requires of the
# names it makes folders of (experiments.checkName), so that it can never leave RESULTS.
for r in "$@"; do
	[[ $r =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ ]] ||
		{ echo "recheck: RUN \"$r\": not a run name (want letters, digits, '.', '_' or '-', the first a letter or digit)" >&2; exit 2; }
	[ -d "$results/runs/$r" ] || { echo "recheck: $results/runs/$r: no such run" >&2; exit 2; }
done
# CONFIG must be the comparison that produced RESULTS: every run it plans has results there of
# exactly its config, and RESULTS holds no other run. Checked before a cluster starts; train
# -check writes nothing.
build=$(mktemp -d)
(cd "$root" && go build -o "$build/train" ./cmd/train)
if ! check=$(cd "$root" && "$build/train" -config "$config" -out "$results" -report -check 2>&1); then
	rm -rf "$build"
	echo "recheck: $config did not produce $results: ${check#train: }" >&2
	exit 2
fi
rm -rf "$build"
runs=$(sed -n 's/^check: comparison .*: \([0-9]*\) runs, .*/\1/p' <<<"$check")
folders=$(find "$results/runs" -mindepth 1 -maxdepth 1 -type d | wc -l)
[ "$folders" -eq "$runs" ] ||
	{ echo "recheck: $results/runs holds $folders runs, but $config has $runs: $config did not produce $results" >&2; exit 2; }
source "$(dirname "$0")/local.sh"

out=$tmp/out
mkdir -p "$out"
cp -r "$results/runs" "$out/"
for r in "$@"; do
	rm -rf "${out:?}/runs/$r"
done

start=$SECONDS
submit "$config" "$runs" "$out"
until_ok "${RECHECK_LIMIT:-3600}" "the merge job $report (array $array: $(state "$array"))" report_ended
case $(state "$array") in
COMPLETED)
	[ "$(state "$report")" = COMPLETED ] || fail "merge job ended $(state "$report"), want COMPLETED"
	;;
*FAILED*)
	# A shard that finds every run done writes the report, and exits 1 when a claim the
	# comparison checks is not reproduced, as one process does; the merge job is then
	# cancelled. That is the expected end only if every error the tasks logged is such a claim,
	# and RESULTS does not reproduce it either.
	errors=$(cat "$out"/slurm/shard-*.out | grep '^train: ' | sort -u)
	[ -n "$errors" ] || fail "shards ended $(state "$array") without an error in their logs"
	while read -r line; do
		id=$(sed -n 's/^train: claim \([a-z0-9_]*\) not reproduced$/\1/p' <<<"$line")
		[ -n "$id" ] || fail "a shard failed: $line"
		verdict=$(jq -r --arg id "$id" '.claims[] | select(.id == $id) | .verdict' "$results/ppl_by_run.json")
		[ "$verdict" = "not reproduced" ] || fail "claim $id is not reproduced here, but $verdict in $results"
		echo "recheck: claim $id not reproduced, as in $results: the shards exit 1 and the merge job is cancelled"
	done <<<"$errors"
	;;
*) fail "shards ended $(state "$array"), want COMPLETED" ;;
esac
echo "recheck: $runs array tasks done in $((SECONDS - start)) s"
for r in "$@"; do
	[ -f "$out/runs/$r/ppl_vs_len.json" ] || fail "$r was not run again"
done

numbers "$results" >"$tmp/finished.json"
numbers "$out" >"$tmp/slurm.json"
diff -u "$tmp/finished.json" "$tmp/slurm.json" >&2 || fail "ppl_by_run.json of the Slurm run differs from $results's (above)"
diff -u <(claims "$results") <(claims "$out") >&2 || fail "REPORT.md's claims differ from $results's (above)"
echo "recheck: ok: $* re-run as Slurm array tasks; the merged results equal $results's ($(jq '[.runs[].result.lengths[] | select(.applicable)] | length' "$tmp/slurm.json") perplexities, $(jq '.claims | length' "$tmp/slurm.json") claims)"
