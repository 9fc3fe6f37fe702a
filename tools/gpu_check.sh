#!/usr/bin/env bash
# On a GPU machine, with the bundle from tools/gpu_bundle.sh in gpu_bundle/:
#
#   tools/gpu_check.sh [replay] [mixed] [checks] [tests] [replaycheck]
#                      [sanitize] [bench] [profile] [trace]
#                      (default: tests sanitize bench)
#
#   replay    replayed steps (runtime/step_replay.h): the examples' steps
#             eager and replayed from the same initial values with
#             deterministic algorithms (variables compared bit for bit);
#             then their timings beside PyTorch eager and PyTorch's whole
#             step in torch.cuda.graph, TF32 as each framework's default
#   replaycheck  every conformance case recorded and replayed on new inputs
#             against eager, under compute-sanitizer memcheck
#   checks    replaycheck and tests at once (neither is timed): the end of
#             a short lease, after the timed phases
#   tests     every test binary of the bundle (bin/*_test), one log each,
#             all at once (the GPU allocator grows, so processes share the
#             GPU), in full float32 (NVIDIA_TF32_OVERRIDE=0): their
#             tolerances are the CPU kernels' rounding
#   sanitize  compute-sanitizer memcheck and racecheck over the GPU tests,
#             all at once
#   bench     bench/README.md's GPU figures: MatMul against cublasSgemm,
#             the examples' training step on one GPU (ResNet-20 also with
#             TF_CUDNN_USE_AUTOTUNE=0), and PyTorch's
#   profile   ResNet-20's step: GPU time per kernel (ncu), then trace's work
#   trace     ResNet-20's step: host CPU time beside wall time, a Chrome trace
#             of one step
#   mixed     mixed precision (estimator/mixed_precision.h): ResNet-56
#             steps in mixed_bfloat16 and mixed_float16, eager and
#             replayed (their variables compared after 30 steps); then
#             PyTorch's torch.autocast (bfloat16 eager and in
#             torch.cuda.graph, float16 with a GradScaler) in the same run;
#             ImageNet's ResNet-50 at batch 128 in float32 and
#             mixed_bfloat16 against torchvision's resnet50
#
# Logs go to $GPU_LOGS (default gpu_logs/; one per program run, and
# summary.txt, which ends with what passed and the figures; each run of
# this script appends to it). On the device tool, GPU_LOGS=$OUT/gpu_logs
# brings back what was written even when the command runs out of time.
# A lease of 15 minutes (start-up included): `replay mixed checks`, timed
# phases first.
# TEST_TIMEOUT (240 s), SANITIZE_TIMEOUT (400 s) and ROUNDS (2) bound the
# phases, for a device lease of a few minutes.
set -uo pipefail
cd "$(dirname "$0")/.."
logs="${GPU_LOGS:-gpu_logs}"
mkdir -p "$logs"
tw=/tmp/tw
# Unpacked once per bundle.
stamp="$(md5sum < gpu_bundle/bundle.tar.xz)"
if [ "$(cat "$tw/.bundle" 2> /dev/null)" != "$stamp" ]; then
  rm -rf "$tw" && mkdir -p "$tw" && tar -xJf gpu_bundle/bundle.tar.xz -C "$tw" || exit 1
  echo "$stamp" > "$tw/.bundle"
fi
phases=("$@")
[ ${#phases[@]} -eq 0 ] && phases=(tests sanitize bench)
summary="$logs/summary.txt"
echo "== $(date -u '+%F %T') gpu_check.sh ${phases[*]}" >> "$summary"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >> "$summary"

run_tests() {
  # Every test in the bundle (tools/gpu_bundle.sh chooses which).
  for path in "$tw"/bin/*_test; do
    (
      t="$(basename "$path")"
      if NVIDIA_TF32_OVERRIDE=0 timeout "${TEST_TIMEOUT:-240}" "$tw/run.sh" "$t" \
          > "$logs/$t.log" 2>&1; then
        echo "PASSED $t" >> "$summary"
      else
        echo "FAILED $t (exit $?)" >> "$summary"
      fi
    ) &
  done
  wait
}

run_sanitize() {
  for tool in memcheck racecheck; do
    for t in gpu_device_test gpu_conformance_test collective_ops_test; do
      [ -x "$tw/bin/$t" ] || continue  # a bundle of other tests
      (
        log="$logs/$tool.$t.log"
        timeout "${SANITIZE_TIMEOUT:-400}" "$tw/run.sh" \
          --wrap "compute-sanitizer --tool $tool --error-exitcode 1" "$t" > "$log" 2>&1
        rc=$?
        # memcheck counts failed CUDA calls as errors too: the allocator's
        # deliberate out-of-memory request and NCCL's own probing are among
        # them. Memory errors and races are counted apart.
        api=$(grep -c "Program hit" "$log")
        memory=$(grep -cE "Invalid (__global__|__shared__|__local__)|Race reported|Uninitialized" "$log")
        echo "$tool $t: exit $rc, memory errors or races: $memory, failed CUDA calls: $api" >> "$summary"
      ) &
    done
  done
  wait
}

run_replaycheck() {
  # Capture conformance under memcheck: each case's kernels recorded, its
  # inputs rewritten in the slots, replayed, compared with eager.
  local log="$logs/replay.conformance.log"
  NVIDIA_TF32_OVERRIDE=0 timeout "${SANITIZE_TIMEOUT:-400}" "$tw/run.sh" \
    --wrap "compute-sanitizer --tool memcheck --error-exitcode 1" gpu_replay_test > "$log" 2>&1
  local rc=$?
  echo "replay conformance under memcheck: exit $rc, memory errors: $(grep -cE "Invalid (__global__|__shared__|__local__)|Uninitialized" "$log"), $(grep -E '^\[  (PASSED|FAILED)  \]' "$log" | tr '\n' ' ')" >> "$summary"
}

run_replay() {
  # Eager against replayed from the same initial values and the same fed
  # batches (float images, int32 labels), deterministic algorithms and full
  # float32: the variables after 30 steps.
  TF_CUDNN_USE_AUTOTUNE=0 TF_CUDNN_DETERMINISTIC=1 NVIDIA_TF32_OVERRIDE=0 timeout 240 \
    "$tw/run.sh" gpu_replay --models=cifar10,resnet20 --check_steps=30 --steps=20 --feed \
    > "$logs/replay.agreement.log" 2>&1
  echo "replay agreement (exit $?): $(grep -E 'agreement|NOT REPLAYED' "$logs/replay.agreement.log" | tr '\n' ' ')" >> "$summary"
  # Timings, each framework's defaults (TF32 convolutions in both).
  timeout 300 "$tw/run.sh" gpu_replay --models=cifar10,resnet20,resnet56 --check_steps=10 \
    --steps=200 > "$logs/replay.timing.log" 2>&1
  echo "replay timing (exit $?):" >> "$summary"
  grep -E '^towerflow' "$logs/replay.timing.log" >> "$summary"
  # The same with each step's batch fed, as the Estimator feeds it.
  timeout 120 "$tw/run.sh" gpu_replay --models=resnet20 --check_steps=10 --steps=200 --feed \
    > "$logs/replay.timing.fed.log" 2>&1
  grep -E '^towerflow' "$logs/replay.timing.fed.log" >> "$summary"
  # The Estimator's own loop (resnet_train, fed batches) with replay on:
  # whether its step records, and its step time.
  cifar_data
  rm -rf /tmp/model_replay
  timeout 120 "$tw/run.sh" resnet_train --data_dir=/tmp/cifar --model_dir=/tmp/model_replay \
    --num_towers=1 --batch_size=128 --max_steps=300 --log_every=50 --eval=false \
    --resnet_size=20 --replay_steps > "$logs/replay.resnet_train.log" 2>&1
  echo "resnet_train --replay_steps (exit $?): $(grep -E 'Towerflow: step|sec/batch' "$logs/replay.resnet_train.log" | tail -n 4 | tr '\n' ' ')" >> "$summary"
  for model in cifar10 resnet20 resnet56; do
    for graph in "" --cuda_graph; do
      timeout 120 python3 bench/models_torch.py --model "$model" --device cuda --steps 200 \
        $graph >> "$summary" 2>&1
    done
  done
}

run_mixed() {
  for precision in mixed_bfloat16 mixed_float16; do
    timeout 240 "$tw/run.sh" gpu_replay --models=resnet56 --check_steps=30 \
      --steps=200 --precision=$precision > "$logs/mixed.$precision.log" 2>&1
    echo "gpu_replay --precision=$precision (exit $?):" >> "$summary"
    grep -E '^towerflow|agreement' "$logs/mixed.$precision.log" >> "$summary"
  done
  # A ResNet-50 step (224x224, batch 128; ImageNet's model in NCHW), in
  # float32 (TF32) and mixed_bfloat16, replayed and eager.
  for precision in float32 mixed_bfloat16; do
    timeout 240 "$tw/run.sh" gpu_replay --models=resnet50 --batch=128 --check_steps=5 \
      --steps=30 --precision=$precision > "$logs/mixed.resnet50.$precision.log" 2>&1
    echo "gpu_replay resnet50 --precision=$precision (exit $?):" >> "$summary"
    grep -E '^towerflow|agreement' "$logs/mixed.resnet50.$precision.log" >> "$summary"
  done
  # The issue's targets: ResNet-56 and ResNet-50 against autocast(bfloat16).
  for model in resnet56 resnet50; do
    for args in "" "--autocast bfloat16" "--autocast bfloat16 --cuda_graph" "--autocast float16"; do
      [ "$model" != resnet50 ] && [ -z "$args" ] && continue  # float32 is the replay phase's
      [ "$model" = resnet50 ] && [ "$args" = "--autocast float16" ] && continue
      timeout 120 python3 bench/models_torch.py --model "$model" --device cuda --steps 50 \
        $args >> "$summary" 2>&1
    done
  done
}

# Random CIFAR-10 records (the layout of the real binaries; the numbers do
# not change the work of a step).
cifar_data() {
  [ -f /tmp/cifar/test_batch.bin ] && return
  mkdir -p /tmp/cifar
  python3 - << 'EOF'
import numpy as np
rng = np.random.default_rng(0)
for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
    records = rng.integers(0, 256, size=(10000, 3073), dtype=np.uint8)
    records[:, 0] %= 10
    records.tofile(f"/tmp/cifar/{name}.bin")
EOF
}

run_bench() {
  timeout 120 "$tw/run.sh" gpu_bench 1024 4096 > "$logs/gpu_bench.log" 2>&1
  cifar_data
  for round in $(seq "${ROUNDS:-2}"); do
    for model in cifar10 resnet20 resnet56; do
      case "$model" in
        cifar10) program=cifar10_train flags=() ;;
        resnet20) program=resnet_train flags=(--resnet_size=20) ;;
        resnet56) program=resnet_train flags=(--resnet_size=56) ;;
      esac
      rm -rf "/tmp/model_$model"
      timeout 120 "$tw/run.sh" "$program" --data_dir=/tmp/cifar --model_dir="/tmp/model_$model" \
        --num_towers=1 --batch_size=128 --max_steps=300 --log_every=50 --eval=false \
        "${flags[@]}" > "$logs/step.$model.$round.log" 2>&1
      echo "towerflow $model round $round: $(grep 'sec/batch' "$logs/step.$model.$round.log" | tail -n 3 | tr '\n' ' ')" >> "$summary"
      if [ "$model" = resnet20 ]; then
        # The same with cuDNN's heuristic algorithms instead of measured ones.
        rm -rf "/tmp/model_$model"
        TF_CUDNN_USE_AUTOTUNE=0 timeout 120 "$tw/run.sh" "$program" --data_dir=/tmp/cifar \
          --model_dir="/tmp/model_$model" --num_towers=1 --batch_size=128 --max_steps=300 \
          --log_every=50 --eval=false "${flags[@]}" > "$logs/step.$model.heuristic.$round.log" 2>&1
        echo "towerflow $model, no autotuning, round $round: $(grep 'sec/batch' "$logs/step.$model.heuristic.$round.log" | tail -n 3 | tr '\n' ' ')" >> "$summary"
      fi
      for tf32 in "" --no_tf32; do
        python3 bench/models_torch.py --model "$model" --device cuda --steps 100 $tf32 >> "$summary" 2>&1
      done
    done
  done
}

# GPU time per kernel of ResNet-20's training steps (Nsight Compute, one
# row per kernel launch, after the first steps), then run_trace.
run_profile() {
  cifar_data
  local flags=(--data_dir=/tmp/cifar --num_towers=1 --batch_size=128 --eval=false --resnet_size=20)
  rm -rf /tmp/model_profile
  timeout 300 "$tw/run.sh" --wrap "ncu --csv --print-units base --metrics gpu__time_duration.sum --launch-skip 30000 --launch-count 1500" \
    resnet_train "${flags[@]}" --model_dir=/tmp/model_profile --max_steps=60 --log_every=10 \
    > "$logs/ncu.resnet20.csv" 2>&1
  # GPU time by kernel over those launches, largest first.
  python3 - "$logs/ncu.resnet20.csv" > "$logs/ncu.resnet20.top.txt" << 'EOF'
import collections, csv, sys
total, count, header = collections.Counter(), collections.Counter(), None
for row in csv.reader(open(sys.argv[1])):
    if row[:1] == ["ID"]:
        header = row
    elif header and len(row) == len(header) and row[header.index("Metric Name")] == "gpu__time_duration.sum":
        name = row[header.index("Kernel Name")][:100]
        total[name] += float(row[header.index("Metric Value")].replace(",", "")) / 1e6
        count[name] += 1
print(f"{sum(total.values()):.2f} ms GPU time over {sum(count.values())} launches")
for name, ms in total.most_common(25):
    print(f"{ms:8.2f} ms {count[name]:5d}  {name}")
EOF
  run_trace
}

# The host's CPU time beside the wall time of 200 steps of ResNet-20, and
# the Chrome trace of step 150 (host side: when each kernel was launched,
# and what waited).
run_trace() {
  cifar_data
  local flags=(--data_dir=/tmp/cifar --num_towers=1 --batch_size=128 --eval=false --resnet_size=20)
  rm -rf /tmp/model_profile
  { time timeout 300 "$tw/run.sh" resnet_train "${flags[@]}" --model_dir=/tmp/model_profile \
      --max_steps=200 --log_every=100 --profile_every=150; } > "$logs/time.resnet20.log" 2>&1
  cp /tmp/model_profile/timeline-150.json "$logs/timeline.resnet20.json"
  echo "resnet20, 200 steps: $(grep -E '^(real|user|sys)' "$logs/time.resnet20.log" | tr '\n\t' '  ')" >> "$summary"
}

for phase in "${phases[@]}"; do
  echo "-- $(date -u +%T) $phase" >> "$summary"
  case "$phase" in
    replay) run_replay ;;
    replaycheck) run_replaycheck ;;
    checks) run_replaycheck & run_tests; wait ;;
    tests) run_tests ;;
    sanitize) run_sanitize ;;
    bench) run_bench ;;
    profile) run_profile ;;
    trace) run_trace ;;
    mixed) run_mixed ;;
    *) echo "unknown phase $phase" >&2; exit 2 ;;
  esac
done
cat "$summary"
