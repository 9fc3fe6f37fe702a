#!/usr/bin/env bash
# The towerflow binary end to end: exit codes, convert round trips, dot files.
set -u
tool="$1"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
fail() { echo "FAIL: $*"; exit 1; }

cat > "$tmp/g.pbtxt" <<'PB'
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "tower_1/r" op: "Relu" input: "x" device: "/gpu:1" attr { key: "T" value { type: DT_FLOAT } } }
versions { producer: 27 }
PB

"$tool" inspect "$tmp/g.pbtxt" > "$tmp/inspect.txt" || fail "inspect exited $?"
grep -q "Nodes: 2" "$tmp/inspect.txt" || fail "inspect output: $(cat "$tmp/inspect.txt")"

"$tool" convert "$tmp/g.pbtxt" "$tmp/g.pb" > /dev/null || fail "convert to binary"
"$tool" convert "$tmp/g.pb" "$tmp/back.pbtxt" > /dev/null || fail "convert to text"
"$tool" convert "$tmp/back.pbtxt" "$tmp/again.pb" > /dev/null || fail "convert again"
cmp -s "$tmp/g.pb" "$tmp/again.pb" || fail "binary -> text -> binary is not lossless"

"$tool" dot "$tmp/g.pb" -o "$tmp/g.dot" > /dev/null || fail "dot -o"
grep -q '"\[tower_1\]" \[label="tower_1' "$tmp/g.dot" || fail "dot has no tower box"
"$tool" dot "$tmp/g.pb" | grep -q '^digraph towerflow' || fail "dot to stdout"
"$tool" dot "$tmp/g.pb" --expand tower_1 | grep -q '"tower_1/r" \[label="r' || fail "dot --expand"
"$tool" dot --full "$tmp/g.pb" | grep -q 'subgraph "cluster_tower_1"' || fail "dot --full"
"$tool" dot "$tmp/g.pb" --expand 2> /dev/null; [ $? -eq 2 ] || fail "dot --expand without a scope must exit 2"

"$tool" inspect "$tmp/missing.pb" 2> "$tmp/err.txt" && fail "missing file must fail"
grep -q "NOT_FOUND" "$tmp/err.txt" || fail "missing file error: $(cat "$tmp/err.txt")"
printf 'garbage{' > "$tmp/bad.pbtxt"
"$tool" inspect "$tmp/bad.pbtxt" 2> "$tmp/err.txt"; [ $? -eq 1 ] || fail "bad text must exit 1"
grep -q "INVALID_ARGUMENT" "$tmp/err.txt" || fail "bad text error: $(cat "$tmp/err.txt")"
"$tool" frobnicate 2> /dev/null; [ $? -eq 2 ] || fail "unknown command must exit 2"
"$tool" > /dev/null; [ $? -eq 2 ] || fail "no arguments must exit 2"
"$tool" --help | grep -q "^  inspect GRAPH" || fail "help: $("$tool" --help)"
"$tool" --version | grep -q "^towerflow [0-9]" || fail "version: $("$tool" --version)"
# Each command's --help lists its flags with their defaults; flags are Abseil's.
"$tool" run --help > "$tmp/help.txt" || fail "run --help exited $?"
grep -q "^usage: towerflow run GRAPH" "$tmp/help.txt" || fail "run --help: $(cat "$tmp/help.txt")"
grep -q "^  --feed=VALUE (repeatable)" "$tmp/help.txt" || fail "run --help: $(cat "$tmp/help.txt")"
grep -q "^  --json (default: false)" "$tmp/help.txt" || fail "run --help: $(cat "$tmp/help.txt")"
"$tool" help dot | grep -q "^  --full (default: false)" || fail "help dot"
"$tool" saved_model --help | grep -q "^usage: towerflow saved_model run" || fail "saved_model --help"
"$tool" inspect --help | grep -q "^usage: towerflow inspect GRAPH" || fail "inspect --help"
# Typos are usage errors that name the flag and the nearest one.
"$tool" dot "$tmp/g.pb" --ful 2> "$tmp/err.txt"; [ $? -eq 2 ] || fail "dot --ful must exit 2"
grep -q "unknown flag '--ful' (did you mean --full?)" "$tmp/err.txt" || fail "typo: $(cat "$tmp/err.txt")"
"$tool" dot "$tmp/g.pb" --fetch y 2> /dev/null; [ $? -eq 2 ] || fail "run's flag given to dot must exit 2"
"$tool" inspect "$tmp/g.pb" "$tmp/g.pb" 2> /dev/null; [ $? -eq 2 ] || fail "inspect takes one GRAPH"

# run: feeds as JSON, targets in order before the fetches, text and JSON output.
cat > "$tmp/r.pbtxt" <<'PB'
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape { dim { size: -1 } dim { size: 2 } } } } }
node { name: "two" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 2 } } } }
node { name: "y" op: "Mul" input: "x" input: "two" device: "/cpu:1" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "v" op: "VarHandleOp" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape {} } } }
node { name: "init" op: "AssignVariableOp" input: "v" input: "two" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "read" op: "ReadVariableOp" input: "v" attr { key: "dtype" value { type: DT_FLOAT } } }
PB
"$tool" run "$tmp/r.pbtxt" --feed 'x=[[1,2],[3,4]]' --target init --fetch y --fetch read \
    --device_count CPU=2 --trace "$tmp/trace.json" > "$tmp/run.txt" || fail "run exited $?"
grep -qx 'y: float \[2,2\] \[2.0,4.0,6.0,8.0\]' "$tmp/run.txt" || fail "run output: $(cat "$tmp/run.txt")"
grep -qx 'read: float \[\] \[2.0\]' "$tmp/run.txt" || fail "run output: $(cat "$tmp/run.txt")"
grep -q '"ph":"X"' "$tmp/trace.json" || fail "trace: $(head -c 200 "$tmp/trace.json")"
"$tool" run "$tmp/r.pbtxt" --feed 'x=[[1,2]]' --fetch y --json > "$tmp/run.json" || fail "run --json"
[ "$(cat "$tmp/run.json")" = '{"y":{"dtype":"float","shape":[1,2],"values":[2.0,4.0]}}' ] ||
    fail "run --json output: $(cat "$tmp/run.json")"
# A fetch past --max_output_elements is refused, naming it and the flag.
"$tool" run "$tmp/r.pbtxt" --feed 'x=[[1,2],[3,4]]' --fetch y --max_output_elements 3 2> "$tmp/err.txt"
[ $? -eq 1 ] || fail "a fetch past --max_output_elements must exit 1"
grep -q "fetch 'y' has 4 elements (shape \[2,2\]), past --max_output_elements=3" "$tmp/err.txt" ||
  fail "max_output_elements: $(cat "$tmp/err.txt")"
"$tool" run "$tmp/r.pbtxt" --fetch read 2> "$tmp/err.txt"; [ $? -eq 1 ] || fail "uninitialised read must exit 1"
grep -q "FAILED_PRECONDITION" "$tmp/err.txt" || fail "uninitialised read error: $(cat "$tmp/err.txt")"
"$tool" run "$tmp/r.pbtxt" --feed 'x=[[1,2],[3]]' --fetch y 2> "$tmp/err.txt"; [ $? -eq 1 ] || fail "ragged feed"
grep -q "ragged list at values\[1\]" "$tmp/err.txt" || fail "ragged feed error: $(cat "$tmp/err.txt")"
"$tool" run "$tmp/r.pbtxt" --feed 'x=[[1,2]]:int32' --fetch y 2> "$tmp/err.txt"; [ $? -eq 1 ] || fail "int32 feed"
grep -q "expects float" "$tmp/err.txt" || fail "dtype feed error: $(cat "$tmp/err.txt")"
"$tool" run "$tmp/r.pbtxt" --bogus 2> /dev/null; [ $? -eq 2 ] || fail "bad run flag must exit 2"
"$tool" run "$tmp/r.pbtxt" 2> /dev/null; [ $? -eq 2 ] || fail "run without --fetch or --target must exit 2"
"$tool" run "$tmp/r.pbtxt" --fetch y --device_count CPU 2> "$tmp/err.txt"; [ $? -eq 2 ] ||
    fail "a malformed --device_count must exit 2"
grep -q "'CPU' is not TYPE=N" "$tmp/err.txt" || fail "device_count: $(cat "$tmp/err.txt")"
# Flags before the graph, --name=value, and a feed whose JSON has commas.
"$tool" run --json --fetch=y "$tmp/r.pbtxt" --feed='x=[[1,2],[3,4]]' > "$tmp/run.json" || fail "run flags first"
grep -q '"values":\[2.0,4.0,6.0,8.0\]' "$tmp/run.json" || fail "run flags first: $(cat "$tmp/run.json")"
# checkpoint: a SaveV2 run through `run` writes a V2 checkpoint; `checkpoint`
# lists it (by prefix, by .index path, by directory) and prints a tensor.
cat > "$tmp/save.pbtxt" <<PB
node { name: "prefix" op: "Const" attr { key: "dtype" value { type: DT_STRING } } attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape {} string_val: "$tmp/ckpt/model.ckpt-3" } } } }
node { name: "names" op: "Const" attr { key: "dtype" value { type: DT_STRING } } attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape { dim { size: 2 } } string_val: "dense/kernel" string_val: "global_step" } } } }
node { name: "slices" op: "Const" attr { key: "dtype" value { type: DT_STRING } } attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape { dim { size: 2 } } string_val: "" string_val: "" } } } }
node { name: "k" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } dim { size: 2 } } float_val: 1.5 float_val: 2 float_val: 3 float_val: 4 } } } }
node { name: "step" op: "Const" attr { key: "dtype" value { type: DT_INT64 } } attr { key: "value" value { tensor { dtype: DT_INT64 tensor_shape {} int64_val: 3 } } } }
node { name: "save" op: "SaveV2" input: "prefix" input: "names" input: "slices" input: "k" input: "step" attr { key: "dtypes" value { list { type: DT_FLOAT type: DT_INT64 } } } }
PB
"$tool" run "$tmp/save.pbtxt" --target save > /dev/null || fail "SaveV2 run exited $?"
printf 'model_checkpoint_path: "model.ckpt-3"\n' > "$tmp/ckpt/checkpoint"
for arg in "$tmp/ckpt/model.ckpt-3" "$tmp/ckpt/model.ckpt-3.index" "$tmp/ckpt"; do
  "$tool" checkpoint "$arg" > "$tmp/ckpt.txt" || fail "checkpoint $arg exited $?"
  grep -q "2 tensors, 1 shard, 24 bytes of data" "$tmp/ckpt.txt" || fail "checkpoint: $(cat "$tmp/ckpt.txt")"
  grep -Eq '^  dense/kernel +float +\[2,2\] +16$' "$tmp/ckpt.txt" || fail "checkpoint: $(cat "$tmp/ckpt.txt")"
  grep -Eq '^  global_step +int64 +\[\] +8$' "$tmp/ckpt.txt" || fail "checkpoint: $(cat "$tmp/ckpt.txt")"
done
"$tool" checkpoint "$tmp/ckpt" --tensor dense/kernel > "$tmp/t.txt" || fail "checkpoint --tensor"
[ "$(head -1 "$tmp/t.txt")" = "dense/kernel: float [2,2]" ] || fail "checkpoint --tensor: $(cat "$tmp/t.txt")"
grep -q "1.5 2 3 4" "$tmp/t.txt" || fail "checkpoint --tensor values: $(cat "$tmp/t.txt")"
"$tool" checkpoint "$tmp/ckpt" --tensor nope 2> "$tmp/err.txt"; [ $? -eq 1 ] || fail "missing tensor must exit 1"
grep -q "Key nope not found in checkpoint" "$tmp/err.txt" || fail "missing tensor: $(cat "$tmp/err.txt")"
head -c 40 "$tmp/ckpt/model.ckpt-3.index" > "$tmp/ckpt/cut.index"
"$tool" checkpoint "$tmp/ckpt/cut" 2> "$tmp/err.txt"; [ $? -eq 1 ] || fail "truncated index must exit 1"
grep -q "DATA_LOSS.*cut.index" "$tmp/err.txt" || fail "truncated index: $(cat "$tmp/err.txt")"
# saved_model: TF Serving's half_plus_two (../shared/reference, when present).
hp2=""
for root in "${TEST_SRCDIR:-}/towerflow_tf_reference" "${TEST_SRCDIR:-}/towerflow/external/towerflow_tf_reference"; do
  if [ -f "$root/tf/saved_models/half_plus_two_cpu/00000123/saved_model.pb" ]; then
    hp2="$root/tf/saved_models/half_plus_two_cpu/00000123"
  fi
done
if [ -n "$hp2" ]; then
  "$tool" saved_model show "$hp2" > "$tmp/sm.txt" || fail "saved_model show exited $?"
  grep -qx "'serve'" "$tmp/sm.txt" || fail "saved_model show: $(cat "$tmp/sm.txt")"
  "$tool" saved_model show "$hp2" --tag_set serve > "$tmp/sm.txt" || fail "show --tag_set"
  grep -q 'SignatureDef key: "regress_x_to_y"' "$tmp/sm.txt" || fail "show --tag_set: $(cat "$tmp/sm.txt")"
  "$tool" saved_model show "$hp2" --tag_set serve --signature_def serving_default > "$tmp/sm.txt" ||
      fail "show --signature_def"
  grep -q "inputs\['x'\] tensor_info:" "$tmp/sm.txt" || fail "show signature: $(cat "$tmp/sm.txt")"
  grep -q "shape: (-1, 1)" "$tmp/sm.txt" || fail "show signature: $(cat "$tmp/sm.txt")"
  grep -q "Method name is: tensorflow/serving/predict" "$tmp/sm.txt" || fail "show signature: $(cat "$tmp/sm.txt")"
  "$tool" saved_model run "$hp2" --signature_def serving_default --input 'x=[[1],[2],[5]]' --json \
      > "$tmp/sm.json" || fail "saved_model run exited $?"
  [ "$(cat "$tmp/sm.json")" = '{"y":{"dtype":"float","shape":[3,1],"values":[2.5,3.0,4.5]}}' ] ||
      fail "saved_model run: $(cat "$tmp/sm.json")"
  echo '[[1],[2],[5]]' > "$tmp/x.json"
  "$tool" saved_model run "$hp2" --signature_def serving_default --input "x=@$tmp/x.json" --json \
      > "$tmp/sm.json" || fail "saved_model run @file exited $?"
  grep -q '"values":\[2.5,3.0,4.5\]' "$tmp/sm.json" || fail "saved_model run @file: $(cat "$tmp/sm.json")"
  # A NumPy file: float32 [[1], [2], [5]], header padded to 64 bytes as numpy writes it.
  hdr="{'descr': '<f4', 'fortran_order': False, 'shape': (3, 1), }"
  { printf '\x93NUMPY\x01\x00\x76\x00'; printf '%s' "$hdr"; printf '%*s' $((117 - ${#hdr})) ''; printf '\n'
    printf '\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\xa0\x40'; } > "$tmp/x.npy"
  "$tool" saved_model run "$hp2" --signature_def serving_default --input "x=@$tmp/x.npy" --json \
      > "$tmp/sm.json" || fail "saved_model run .npy exited $?"
  grep -q '"shape":\[3,1\],"values":\[2.5,3.0,4.5\]' "$tmp/sm.json" || fail "saved_model run .npy: $(cat "$tmp/sm.json")"
  # Serialized tf.Examples for the regress and classify signatures (TF's --input_examples).
  "$tool" saved_model run "$hp2" --signature_def regress_x_to_y \
      --input_examples 'inputs=[{"x": [1.0]}, {"x": [5.0]}]' --json > "$tmp/sm.json" ||
      fail "saved_model run --input_examples exited $?"
  [ "$(cat "$tmp/sm.json")" = '{"outputs":{"dtype":"float","shape":[2,1],"values":[2.5,4.5]}}' ] ||
      fail "saved_model run --input_examples: $(cat "$tmp/sm.json")"
  echo '[{"x": [2.0]}]' > "$tmp/ex.json"
  "$tool" saved_model run "$hp2" --signature_def classify_x_to_y --input_examples "inputs=@$tmp/ex.json" \
      > "$tmp/sm.txt" || fail "saved_model run --input_examples @file exited $?"
  grep -q "Result for output key scores: float \[1,1\] 3" "$tmp/sm.txt" ||
      fail "classify: $(cat "$tmp/sm.txt")"
  "$tool" saved_model run "$hp2" --signature_def regress_x_to_y --input_examples 'inputs=[{"x": [1]}]' \
      2> "$tmp/err.txt"
  [ $? -eq 1 ] || fail "an int64 feature where x is float must fail"
  grep -q "x" "$tmp/err.txt" || fail "int64 x: $(cat "$tmp/err.txt")"
  "$tool" saved_model run "$hp2" --signature_def serving_default --input "x=@$tmp/none.json" 2> "$tmp/err.txt"
  [ $? -eq 1 ] || fail "a missing input file must exit 1"
  grep -q "none.json" "$tmp/err.txt" || fail "missing input file: $(cat "$tmp/err.txt")"
  "$tool" saved_model run "$hp2" 2> /dev/null; [ $? -eq 2 ] || fail "run without --signature_def must exit 2"
  "$tool" checkpoint "$hp2/variables/variables" > "$tmp/ckpt.txt" || fail "checkpoint of a TF model"
  grep -q "5 tensors, 1 shard, 20 bytes of data" "$tmp/ckpt.txt" || fail "TF checkpoint: $(cat "$tmp/ckpt.txt")"
else
  echo "skipping the SavedModel checks: ../shared/reference is not on this machine"
fi
echo PASS
