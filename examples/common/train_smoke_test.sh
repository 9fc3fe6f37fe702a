#!/usr/bin/env bash
# An example training program end to end on a tiny CIFAR-10 directory the
# test writes (random pixels, labels 0..9): two towers on two virtual CPUs
# train two steps, evaluate, export a SavedModel (which the program checks
# against the model in process), write the graph and the towers' picture; a
# second run resumes and skips training. Step 2 is traced (--profile_every).
#
#   train_smoke_test.sh <program> [extra flags...]
set -u
program="$1"
shift
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
data="$tmp/cifar"
model="$tmp/model"
fail() { echo "FAIL: $*"; exit 1; }

mkdir -p "$data"
record() { printf "\\x0$1"; head -c 3072 /dev/urandom; }
for file in data_batch_1 data_batch_2 data_batch_3 data_batch_4 data_batch_5 test_batch; do
  for label in 0 1 2 3 4 5 6 7 8 9; do record "$label"; done > "$data/$file.bin"
done

run() {
  "$program" --data_dir="$data" --model_dir="$model" --num_towers=2 --batch_size=4 \
    --max_steps=2 --log_every=1 --profile_every=2 "$@" > "$tmp/out.txt" 2> "$tmp/err.txt" \
    || fail "exit $?: $(cat "$tmp/out.txt" "$tmp/err.txt")"
}
# Abseil flags: --help lists them with their defaults, --version, typos fail.
"$program" --help > "$tmp/help.txt" || fail "--help exited $?"
grep -q "^  --batch_size=INT (default: 128)$" "$tmp/help.txt" || fail "--help: $(cat "$tmp/help.txt")"
grep -q "^  --eval (default: true)$" "$tmp/help.txt" || fail "--help: $(cat "$tmp/help.txt")"
grep -q "^  --aggregation=VALUE (default: \"parameter_server\")$" "$tmp/help.txt" ||
  fail "--help: $(cat "$tmp/help.txt")"
"$program" --version | grep -q "^towerflow [0-9]" || fail "--version"
"$program" --max_stesp=2 > /dev/null 2> "$tmp/err.txt" && fail "a misspelt flag was accepted"
grep -q "Unknown command line flag 'max_stesp'" "$tmp/err.txt" || fail "typo: $(cat "$tmp/err.txt")"
"$program" --batch_size=four > /dev/null 2> "$tmp/err.txt" && fail "a bad value was accepted"
grep -q "batch_size" "$tmp/err.txt" || fail "bad value: $(cat "$tmp/err.txt")"

run "$@"
log="$(cat "$tmp/out.txt" "$tmp/err.txt")"
echo "$log"
grep -q "Training on CIFAR-10 from $data with 2 towers (/cpu:0, /cpu:1), 8 examples per step" <<< "$log" || fail "towers"
aggregation=parameter_server
for flag in "$@"; do [[ "$flag" == --aggregation=* ]] && aggregation="${flag#--aggregation=}"; done
grep -q "examples per step, $aggregation aggregation" <<< "$log" || fail "aggregation"
grep -Eq ": step 2, loss = [0-9]+\.[0-9]{2} \([0-9]+\.[0-9] examples/sec; [0-9]+\.[0-9]{3} sec/batch\)" <<< "$log" || fail "step line"
grep -Eq "precision @ 1 = [01]\.[0-9]{4} \(test set" <<< "$log" || fail "evaluation"
grep -q "Saving checkpoints for 2 into $model/model.ckpt-2" <<< "$log" || fail "checkpoint"
for f in checkpoint model.ckpt-2.index model.ckpt-2.data-00000-of-00001 graph.pbtxt towers.dot; do
  [ -s "$model/$f" ] || fail "$model/$f is missing"
done
grep -q '"\[tower_1\]" \[label="tower_1' "$model/towers.dot" || fail "no tower box in the picture"
# --profile_every=2: step 2's Chrome trace, and the time per op type.
[ -s "$model/timeline-2.json" ] || fail "no trace of step 2"
grep -q "Time per op type over 1 traced step(s)" <<< "$log" || fail "no op time table in the log"
grep -Eq "^(_Fused)?Conv2D +[0-9]+ " "$model/op_times.txt" || fail "op_times.txt: $(cat "$model/op_times.txt")"
ls "$model"/events.out.tfevents.* > /dev/null 2>&1 || fail "no TensorBoard events"
grep -Eq "^SavedModel check: 8 of 8 test images get the same class" <<< "$log" || fail "SavedModel check"
exported="$(ls -d "$model"/export/[0-9]*)"
for f in saved_model.pb variables/variables.index variables/variables.data-00000-of-00001; do
  [ -s "$exported/$f" ] || fail "$exported/$f is missing"
done
grep -q "serving_default" "$exported/saved_model.pb" || fail "no serving signature"

# Again: the checkpoint is at max_steps already.
run "$@"
grep -q "Skipping training since max_steps has already saved." "$tmp/err.txt" || fail "no resume: $(cat "$tmp/err.txt")"
echo PASS
