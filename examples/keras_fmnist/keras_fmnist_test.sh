#!/usr/bin/env bash
# keras_fmnist end to end on a tiny Fashion-MNIST directory the test writes
# (12 random images per split, gzip'd IDX files): the summary, one epoch on
# two replicas, validation, and the final evaluation line; then the same
# under mpirun with two processes.
set -u
program="$1"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
fail() { echo "FAIL: $*"; exit 1; }

idx() {  # idx FILE COUNT IMAGES(0/1)
  if [ "$3" = 1 ]; then
    { printf "\\x00\\x00\\x08\\x03\\x00\\x00\\x00\\x$(printf %02x "$2")\\x00\\x00\\x00\\x1c\\x00\\x00\\x00\\x1c"
      head -c $(($2 * 784)) /dev/urandom; } | gzip > "$1"
  else
    { printf "\\x00\\x00\\x08\\x01\\x00\\x00\\x00\\x$(printf %02x "$2")"
      for i in $(seq 1 "$2"); do printf "\\x0$((i % 10))"; done; } | gzip > "$1"
  fi
}
for split in train t10k; do
  idx "$tmp/$split-images-idx3-ubyte.gz" 12 1
  idx "$tmp/$split-labels-idx1-ubyte.gz" 12 0
done

"$program" --data_dir="$tmp" --epochs=1 --replicas=2 > "$tmp/out.txt" 2>&1 \
  || fail "exit $?: $(cat "$tmp/out.txt")"
out="$(cat "$tmp/out.txt")"
echo "$out"
grep -q '^conv2d (Conv2D)              (None, 26, 26, 32)        320 ' <<< "$out" || fail "summary"
grep -q '^Total params: 225,034$' <<< "$out" || fail "total params"
grep -q '^Epoch 1/1$' <<< "$out" || fail "epoch line"
grep -q '^1/1 \[==============================\] - .* - loss: .* - accuracy: .* - val_loss: .* - val_accuracy: ' <<< "$out" || fail "progress line"
grep -q '^test loss .*, test accuracy .* (2 replicas)$' <<< "$out" || fail "result"
"$program" --bogus=1 > /dev/null 2>&1 && fail "a bad flag was accepted"
"$program" --help > "$tmp/help.txt" || fail "--help exited $?"
grep -q "^  --replicas=INT (default: 2)$" "$tmp/help.txt" || fail "--help: $(cat "$tmp/help.txt")"

# Under mpirun: two processes of two replicas, rank 0 alone prints.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
mpirun -np 2 --oversubscribe "$program" --data_dir="$tmp" --epochs=1 --replicas=2 \
  > "$tmp/mpi.txt" 2>&1 || fail "mpirun exit $?: $(cat "$tmp/mpi.txt")"
out="$(cat "$tmp/mpi.txt")"
echo "$out"
[ "$(grep -c '^Total params: 225,034$' <<< "$out")" -eq 1 ] || fail "rank 1 was not quiet"
grep -q '^test loss .*, test accuracy .* (2 processes of 2 replicas)$' <<< "$out" || fail "mpi result"
echo PASS
