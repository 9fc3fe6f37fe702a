#!/usr/bin/env bash
# An example training program under mpirun: two processes of one tower each
# train two steps on a tiny CIFAR-10 directory the test writes, each reading
# its half of the data; rank 0 alone logs, writes the checkpoints and the
# events, evaluates and exports.
#
#   train_mpirun_test.sh <program>
set -u
program="$1"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
data="$tmp/cifar"
model="$tmp/model"
fail() { echo "FAIL: $*"; exit 1; }

mkdir -p "$data"
record() { printf "\\x0$1"; head -c 3072 /dev/urandom; }
for file in data_batch_1 data_batch_2 data_batch_3 data_batch_4 data_batch_5 test_batch; do
  for label in 0 1 2 3 4 5 6 7 8 9; do record "$label"; done > "$data/$file.bin"
done

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
mpirun -np 2 --oversubscribe "$program" --data_dir="$data" --model_dir="$model" \
  --devices=/cpu:0 --batch_size=4 --max_steps=2 --log_every=1 > "$tmp/out.txt" 2> "$tmp/err.txt" \
  || fail "exit $?: $(cat "$tmp/out.txt" "$tmp/err.txt")"
log="$(cat "$tmp/out.txt" "$tmp/err.txt")"
echo "$log"
[ "$(grep -c "^Training on" <<< "$log")" -eq 1 ] || fail "rank 1 was not quiet"
grep -q "Training on CIFAR-10 from $data with 2 processes of 1 towers (/cpu:0), 8 examples per step" \
  <<< "$log" || fail "processes"
grep -Eq ": step 2, loss = [0-9]+\.[0-9]{2}" <<< "$log" || fail "step line"
[ "$(grep -c "Saving checkpoints for 2 into $model/model.ckpt-2" <<< "$log")" -eq 1 ] \
  || fail "checkpoint written once"
[ "$(ls "$model"/events.out.tfevents.* | wc -l)" -eq 1 ] || fail "one events file"
grep -Eq "precision @ 1 = [01]\.[0-9]{4} \(test set" <<< "$log" || fail "evaluation"
grep -Eq "^SavedModel check: ([0-9]+) of \1 test images get the same class" <<< "$log" || fail "export"
echo "PASS"
