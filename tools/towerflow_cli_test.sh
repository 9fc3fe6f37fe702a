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
echo PASS
