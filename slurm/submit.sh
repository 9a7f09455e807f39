#!/usr/bin/env bash
# Submits a comparison to Slurm as a job array of shards on a shared results folder, and a merge
# job that writes the report once every shard has succeeded:
#
#	slurm/submit.sh CONFIG SHARDS OUT [train flags, e.g. -set train.steps=300]
#
# CONFIG is a comparison config (a bare name is looked up in configs/), SHARDS the number of array
# tasks (at most the comparison's number of runs; both checked before anything is submitted) and
# OUT the results folder, which, like this
# clone and the Go installation (its source is the corpus), every node must see. The trainer is
# built once, here, into OUT/slurm/train; the tasks' logs go beside it. sbatch's own environment
# variables choose the partition, time limit and so on (SBATCH_PARTITION, SBATCH_TIMELIMIT, ...).
set -euo pipefail

if [ $# -lt 3 ]; then
	echo "usage: slurm/submit.sh CONFIG SHARDS OUT [train flags]" >&2
	exit 2
fi
config=$1 shards=$2 out=$3
shift 3
case $shards in
'' | *[!0-9]* | 0*)
	echo "submit: SHARDS: \"$shards\", want a positive number" >&2
	exit 2
	;;
esac
# The jobs run from the clone's root, so paths given from here are made absolute first; a bare
# config name stays bare, to be looked up in configs/.
case $config in
*/*) config=$(realpath -m -- "$config") ;;
esac
out=$(realpath -m -- "$out")
root=$(cd "$(dirname "$0")/.." && pwd)
logs=$out/slurm

# One build for every task, first into a folder of its own: nothing goes into OUT before the
# checks below pass.
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
(cd "$root" && go build -o "$build/train" ./cmd/train)
# What every task would refuse at once is refused here, before anything is submitted: the
# config and train flags, a folder of a run that is not this config's (without -overwrite), and
# more shards than the comparison has runs. train -check writes nothing.
for shard in "" "0/$shards"; do
	if ! msg=$(cd "$root" && "$build/train" -config "$config" -out "$out" -check ${shard:+-shard "$shard"} "$@" 2>&1 >/dev/null); then
		echo "submit: ${msg#train: }" >&2
		exit 2
	fi
done
mkdir -p "$logs"
# Renamed into place, so that a task still running from an earlier submission keeps its binary.
bin=$logs/train
mv -f "$build/train" "$bin.new"
mv -f "$bin.new" "$bin"

array=$(sbatch --parsable --chdir="$root" --array="0-$((shards - 1))" \
	--output="$logs/shard-%A_%a.out" \
	"$root/slurm/shard.sbatch" "$bin" "$config" "$out" "$@")
array=${array%%;*} # --parsable prints id[;cluster]
# --kill-on-invalid-dep: when a shard fails the merge job is cancelled rather than left pending.
report=$(sbatch --parsable --chdir="$root" --dependency="afterok:$array" --kill-on-invalid-dep=yes \
	--output="$logs/report-%j.out" \
	"$root/slurm/report.sbatch" "$bin" "$config" "$out" "$@")
report=${report%%;*}
echo "shards: job $array, array 0-$((shards - 1))"
echo "report: job $report, after every shard succeeds"
echo "logs in $logs, results in $out"
