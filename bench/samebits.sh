#!/usr/bin/env bash
# samebits.sh OLD NEW [DIR]: whether two builds of cmd/train compute the same numbers, to the
# bit, on every attention path. Each binary trains 16 small variants for 60 steps (RoPE; ALiBi
# in a window; T5; FIRE, a query at a time at 3072; FoX; CoPE; stick-breaking with and without
# a window; Scalable-Softmax; ReRoPE, Self-Extend, LM-Infinite on ALiBi and StreamingLLM on T5;
# KERPLE at randomized ids; a CoPE/T5 mix; gpt-oss's windowed layers with sinks, scored by the
# sinks measure) and scores it at 64, 256 and 3072 (two tiles of keys, the online path), into
# DIR/old and DIR/new (default: a temporary folder). It prints the variants whose training log
# (loss, gradient norm) or perplexity, attention, sinks or loss-by-position files differ, and
# exits 1 if any does. A refactoring of the model should pass it unchanged.
#
#   go build -o /tmp/old ./cmd/train   # on the commit before
#   go build -o /tmp/new ./cmd/train   # on the change
#   bench/samebits.sh /tmp/old /tmp/new
set -uo pipefail
old=$1 new=$2
dir=${3:-$(mktemp -d)}
mkdir -p "$dir/old" "$dir/new"
cd "$(dirname "$0")/.."
common=(-set train.steps=60 -set train.warmup=10 -set train.log_every=20 -set 'eval.lengths=[64,256,3072]'
  -set eval.tokens=6144 -set 'eval.measures=[attention]' -quiet -overwrite)
variants=(
  "rope rope"
  "alibi_window alibi -set position.window=32"
  "t5 t5"
  "fire fire"
  "fox fox"
  "cope cope"
  "stick stickbreaking"
  "stick_window stickbreaking -set position.window=40"
  "ssmax rope -set attention.scale=ssmax"
  "rerope rope -set 'position.distance_map={type: rerope}'"
  "selfext rope -set 'position.distance_map={type: self_extend}'"
  "lminf_alibi alibi -set 'position.distance_map={type: lm_infinite}'"
  "streaming_t5 t5 -set 'position.distance_map={type: streaming}'"
  "kerple_rand kerple -set 'train.positions={type: randomized, noise_max_length: 256}'"
  "cope_t5mix nope -set position.scheme=mix -set 'position.layers=[{scheme: cope}, {scheme: t5}]'"
  "gptoss_sinks rope_gptoss -set 'eval.measures=[sinks]'"
)
bad=0
for v in "${variants[@]}"; do
  eval "set -- $v"
  label=$1 config=$2
  shift 2
  for which in old new; do
    bin=$old
    [ $which = new ] && bin=$new
    if ! "$bin" -config "$config" -out "$dir/$which/$label" "${common[@]}" "$@" > "$dir/$which/$label.log" 2>&1; then
      echo "$label: $which failed: $(tail -1 "$dir/$which/$label.log")"
      bad=1
    fi
  done
  if ! cmp -s <(cut -d, -f1-5 "$dir/old/$label/train_log.csv") <(cut -d, -f1-5 "$dir/new/$label/train_log.csv"); then
    echo "$label: training differs"
    bad=1
  fi
  for f in ppl_vs_len.csv attention.csv sinks.csv loss_by_position.csv; do
    [ -e "$dir/old/$label/$f" ] || [ -e "$dir/new/$label/$f" ] || continue
    if ! cmp -s "$dir/old/$label/$f" "$dir/new/$label/$f"; then
      echo "$label: $f differs"
      bad=1
    fi
  done
done
[ $bad = 0 ] && echo "all ${#variants[@]} variants the same to the bit ($dir)"
exit $bad
