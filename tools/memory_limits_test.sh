#!/usr/bin/env bash
# Graphs that ask for tensors of billions of elements end in a Status that
# names the node, never in a signal, when the process's address space is
# limited (ulimit -v: 1 GB here; the session's default budget is half of
# what the process can have); and a legitimate fetch too large to print by
# default is refused by name, or, with --max_output_elements raised, printed
# as a stream within that limit.
#   memory_limits_test.sh <towerflow>
set -uo pipefail
tool="$1"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
failed=0
fail() { echo "FAIL: $*"; failed=1; }

scalar() {  # name dtype value-field value
  echo "node { name: \"$1\" op: \"Const\" attr { key: \"dtype\" value { type: $2 } }" \
       "attr { key: \"value\" value { tensor { dtype: $2 tensor_shape { } $3: $4 } } } }"
}
vector() {  # name dtype dims value-field values
  echo "node { name: \"$1\" op: \"Const\" attr { key: \"dtype\" value { type: $2 } }" \
       "attr { key: \"value\" value { tensor { dtype: $2 tensor_shape { $3 } $4: [$5] } } } }"
}

# A Const splatted from one value to 10^10 elements.
vector big DT_FLOAT "dim { size: 100000 } dim { size: 100000 }" float_val 1 > "$tmp/splat.pbtxt"
# Fill to 10^10.
{ vector dims DT_INT32 "dim { size: 2 }" int_val "100000, 100000"; scalar v DT_FLOAT float_val 1
  echo 'node { name: "fill" op: "Fill" input: "dims" input: "v" attr { key: "T" value { type: DT_FLOAT } } attr { key: "index_type" value { type: DT_INT32 } } }'
} > "$tmp/fill.pbtxt"
# OneHot of depth 10^9.
{ vector i DT_INT32 "dim { size: 4 }" int_val "0, 1, 2, 3"; scalar depth DT_INT32 int_val 1000000000
  scalar on DT_FLOAT float_val 1; scalar off DT_FLOAT float_val 0
  echo 'node { name: "onehot" op: "OneHot" input: "i" input: "depth" input: "on" input: "off" attr { key: "T" value { type: DT_FLOAT } } attr { key: "TI" value { type: DT_INT32 } } attr { key: "axis" value { i: -1 } } }'
} > "$tmp/onehot.pbtxt"
# Tile 10^3 elements 10^7 times; Pad 10 elements by 2 * 10^9.
{ vector x DT_FLOAT "dim { size: 1000 }" float_val 1; vector m DT_INT32 "dim { size: 1 }" int_val 10000000
  echo 'node { name: "tile" op: "Tile" input: "x" input: "m" attr { key: "T" value { type: DT_FLOAT } } attr { key: "Tmultiples" value { type: DT_INT32 } } }'
} > "$tmp/tile.pbtxt"
{ vector x DT_FLOAT "dim { size: 10 }" float_val 1; vector p DT_INT32 "dim { size: 1 } dim { size: 2 }" int_val "0, 2000000000"
  echo 'node { name: "pad" op: "Pad" input: "x" input: "p" attr { key: "T" value { type: DT_FLOAT } } attr { key: "Tpaddings" value { type: DT_INT32 } } }'
} > "$tmp/pad.pbtxt"
# A legitimate 3 * 10^7-element fetch (120 MB; its JSON text took ~40 bytes
# an element in memory before the tool streamed it).
{ vector dims DT_INT32 "dim { size: 1 }" int_val 30000000; scalar v DT_FLOAT float_val 0.5
  echo 'node { name: "big" op: "Fill" input: "dims" input: "v" attr { key: "T" value { type: DT_FLOAT } } attr { key: "index_type" value { type: DT_INT32 } } }'
} > "$tmp/legit.pbtxt"

# A placeholder fed from files: 5 * 10^7 values of JSON (150 MB of text,
# 200 MB as floats: each value was a 16-byte JSON value and more before the
# feed was read as a stream) and a 600 MB .npy (sparse).
echo 'node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "y" op: "Identity" input: "x" attr { key: "T" value { type: DT_FLOAT } } }' > "$tmp/feed.pbtxt"
{ printf '['; yes '0,' | head -n 50000000; printf '0]'; } > "$tmp/feed.json"
header="{'descr': '<f4', 'fortran_order': False, 'shape': (150000000,), }"
while [ $(( (10 + ${#header} + 1) % 64 )) -ne 0 ]; do header="$header "; done
{ printf '\x93NUMPY\x01\x00'; printf "\\x$(printf %02x $(( ${#header} + 1 )))\\x00"; printf '%s\n' "$header"; } > "$tmp/feed.npy"
truncate -s $(( $(wc -c < "$tmp/feed.npy") + 600000000 )) "$tmp/feed.npy"

# run GRAPH FETCH EXPECTED [FLAGS...]: exit 1 (a Status, no signal) with
# EXPECTED (an extended regular expression) on stderr.
refused() {
  local graph="$1" fetch="$2" expected="$3"
  shift 3
  (ulimit -v 1000000; "$tool" run "$tmp/$graph.pbtxt" --fetch "$fetch" "$@" > /dev/null 2> "$tmp/err.txt")
  local status=$?
  if [ "$status" -ne 1 ]; then
    fail "$graph: exit $status (a signal is > 128), not 1: $(head -c 400 "$tmp/err.txt")"
  elif ! grep -qE "$expected" "$tmp/err.txt"; then
    fail "$graph: stderr does not say: $expected; it says: $(head -c 400 "$tmp/err.txt")"
  fi
}
oom="RESOURCE_EXHAUSTED: .*OOM when allocating tensor with shape"
refused splat big "$oom \[100000,100000\] and type float: 40000000000 bytes, past the session's max_tensor_bytes"
grep -q "node big (Const)" "$tmp/err.txt" || fail "splat: the node is not named"
refused fill fill "$oom \[100000,100000\] .*past the session's max_tensor_bytes"
grep -q "node fill (Fill)" "$tmp/err.txt" || fail "fill: the node is not named"
refused onehot onehot "$oom \[4,1000000000\]"
grep -q "node onehot (OneHot)" "$tmp/err.txt" || fail "onehot: the node is not named"
refused tile tile "$oom \[10000000000\]"
grep -q "node tile (Tile)" "$tmp/err.txt" || fail "tile: the node is not named"
refused pad pad "$oom \[2000000010\]"
grep -q "node pad (Pad)" "$tmp/err.txt" || fail "pad: the node is not named"
refused legit big "RESOURCE_EXHAUSTED: fetch 'big' has 30000000 elements \(shape \[30000000\]\), past --max_output_elements=10000000"

refused feed y "RESOURCE_EXHAUSTED: --feed x: .*feed.json: reading [0-9]+ values from 300000006 bytes of JSON: .*past the session's host memory budget" --feed "x=@$tmp/feed.json"
refused feed y "RESOURCE_EXHAUSTED: --feed x: .*feed.npy' has 600000128 bytes, more than the [0-9]+ its reader may hold" --feed "x=@$tmp/feed.npy"

# Raised, the fetch is printed as a stream within the same limit.
(ulimit -v 1000000; "$tool" run "$tmp/legit.pbtxt" --fetch big --max_output_elements 30000000 > "$tmp/big.txt")
status=$?
[ "$status" -eq 0 ] || fail "printing 3 * 10^7 elements under 1 GB exited $status"
[ "$(wc -c < "$tmp/big.txt")" -eq 120000024 ] || fail "printed $(wc -c < "$tmp/big.txt") bytes, not 120000024"
[ "$(head -c 31 "$tmp/big.txt")" = "big: float [30000000] [0.5,0.5," ] || fail "printed: $(head -c 60 "$tmp/big.txt")"

[ "$failed" -eq 0 ] && echo "PASS"
exit "$failed"
