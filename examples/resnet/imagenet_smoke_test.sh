#!/usr/bin/env bash
# resnet_train --dataset=imagenet end to end: a small ImageNet-format set
# written by make_imagenet_records (2 training shards and 1 validation shard
# of 500x375-sized JPEGs), ResNet-18 on two towers of virtual CPUs for two
# steps at 224x224 (decoded, cropped and resized by the pipeline's threads),
# evaluated on the validation shard, exported; then the same on synthetic
# data.
#
#   imagenet_smoke_test.sh <resnet_train> <make_imagenet_records>
set -u
train="$1"
make_records="$2"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
fail() { echo "FAIL: $*"; exit 1; }

"$make_records" --output_dir="$tmp/imagenet" --train_shards=2 --validation_shards=1 \
  --images_per_shard=4 --classes=5 > "$tmp/records.txt" 2>&1 || fail "records: $(cat "$tmp/records.txt")"
ls "$tmp/imagenet/train-00001-of-00002" "$tmp/imagenet/validation-00000-of-00001" > /dev/null ||
  fail "shards missing: $(ls "$tmp/imagenet")"

run() {
  "$train" --dataset=imagenet --resnet_size=18 --num_towers=2 --batch_size=1 --max_steps=2 \
    --log_every=1 "$@" > "$tmp/out.txt" 2> "$tmp/err.txt" ||
    fail "exit $?: $(cat "$tmp/out.txt" "$tmp/err.txt")"
  cat "$tmp/out.txt" "$tmp/err.txt"
}
log="$(run --data_dir="$tmp/imagenet" --model_dir="$tmp/model")"
echo "$log"
grep -q "Training on ImageNet TFRecords from $tmp/imagenet with 2 towers (/cpu:0, /cpu:1), 2 examples per step" <<< "$log" || fail "input"
grep -Eq ": step 2, loss = [0-9]+\.[0-9]{2}" <<< "$log" || fail "step line"
grep -Eq "precision @ 1 = [01]\.[0-9]{4} \(test set" <<< "$log" || fail "evaluation"
grep -Eq "^SavedModel check: 2 of 2 test images get the same class" <<< "$log" || fail "SavedModel check"

log="$(run --use_synthetic_data --model_dir="$tmp/synthetic")"
grep -q "Training on synthetic 224x224 images with 2 towers" <<< "$log" || fail "synthetic: $log"
grep -Eq ": step 2, loss = [0-9]+\.[0-9]{2}" <<< "$log" || fail "synthetic step line"

"$train" --dataset=imagenet --data_dir="$tmp/nothing" --model_dir="$tmp/none" > /dev/null 2> "$tmp/err.txt" &&
  fail "no shards was accepted"
grep -q "no train-\*-of-\* shards" "$tmp/err.txt" || fail "no shards: $(cat "$tmp/err.txt")"
echo PASS
