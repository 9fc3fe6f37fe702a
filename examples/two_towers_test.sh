#!/usr/bin/env bash
# The README's main job, end to end: build the two-tower graph, then inspect
# and draw it with the towerflow tool.
set -u
example="$1"
tool="$2"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
fail() { echo "FAIL: $*"; exit 1; }

"$example" --help | grep -q "^usage: two_towers \[OUT.pbtxt\]" || fail "two_towers --help"
"$example" "$tmp/two_towers.pbtxt" > "$tmp/run.txt" || fail "example exited $?: $(cat "$tmp/run.txt")"
grep -q "variable hidden/weights \[784,128\] on /device:CPU:0" "$tmp/run.txt" || fail "$(cat "$tmp/run.txt")"
grep -q "tower 1 loss tower_1/loss on /device:CPU:1" "$tmp/run.txt" || fail "$(cat "$tmp/run.txt")"

"$tool" inspect "$tmp/two_towers.pbtxt" > "$tmp/inspect.txt" || fail "inspect"
grep -q "Towerflow import: OK" "$tmp/inspect.txt" || fail "$(cat "$tmp/inspect.txt")"
grep -q "Variables (4):" "$tmp/inspect.txt" || fail "$(cat "$tmp/inspect.txt")"
grep -q "  images  float \[?,784\]" "$tmp/inspect.txt" || fail "$(cat "$tmp/inspect.txt")"

"$tool" dot "$tmp/two_towers.pbtxt" -o "$tmp/two_towers.dot" > /dev/null || fail "dot"
grep -q '"\[tower_1\]" \[label="tower_1' "$tmp/two_towers.dot" || fail "no tower box"
grep -q '"\[split_inputs\]" \[label="split_inputs' "$tmp/two_towers.dot" || fail "no split box"
"$tool" dot --full "$tmp/two_towers.pbtxt" | grep -q 'subgraph "cluster_tower_1"' || fail "no tower cluster"
echo PASS
