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
grep -q 'subgraph "cluster_tower_1"' "$tmp/g.dot" || fail "dot has no tower cluster"
"$tool" dot "$tmp/g.pb" | grep -q '^digraph towerflow' || fail "dot to stdout"

"$tool" inspect "$tmp/missing.pb" 2> "$tmp/err.txt" && fail "missing file must fail"
grep -q "NOT_FOUND" "$tmp/err.txt" || fail "missing file error: $(cat "$tmp/err.txt")"
printf 'garbage{' > "$tmp/bad.pbtxt"
"$tool" inspect "$tmp/bad.pbtxt" 2> "$tmp/err.txt"; [ $? -eq 1 ] || fail "bad text must exit 1"
grep -q "INVALID_ARGUMENT" "$tmp/err.txt" || fail "bad text error: $(cat "$tmp/err.txt")"
"$tool" frobnicate 2> /dev/null; [ $? -eq 2 ] || fail "unknown command must exit 2"
"$tool" > /dev/null; [ $? -eq 2 ] || fail "no arguments must exit 2"
"$tool" --help | grep -q "towerflow inspect" || fail "help"

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
"$tool" run "$tmp/r.pbtxt" --fetch read 2> "$tmp/err.txt"; [ $? -eq 1 ] || fail "uninitialised read must exit 1"
grep -q "FAILED_PRECONDITION" "$tmp/err.txt" || fail "uninitialised read error: $(cat "$tmp/err.txt")"
"$tool" run "$tmp/r.pbtxt" --feed 'x=[[1,2],[3]]' --fetch y 2> "$tmp/err.txt"; [ $? -eq 1 ] || fail "ragged feed"
grep -q "ragged list at values\[1\]" "$tmp/err.txt" || fail "ragged feed error: $(cat "$tmp/err.txt")"
"$tool" run "$tmp/r.pbtxt" --feed 'x=[[1,2]]:int32' --fetch y 2> "$tmp/err.txt"; [ $? -eq 1 ] || fail "int32 feed"
grep -q "expects float" "$tmp/err.txt" || fail "dtype feed error: $(cat "$tmp/err.txt")"
"$tool" run "$tmp/r.pbtxt" --bogus 2> /dev/null; [ $? -eq 2 ] || fail "bad run flag must exit 2"
echo PASS
