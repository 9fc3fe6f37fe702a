#!/usr/bin/env bash
# Fails when a file includes a header of a higher layer (docs/ARCHITECTURE.md
# has the table and the reasons), or a Bazel package outside third_party/
# makes its targets public by default. Run by `bazel test //tools:layering_test`,
# or by hand from anywhere in the tree:
#
#   tools/check_layers.sh [TREE]
#
# Production sources only: tests beside their code (*_test.cc) and test
# helpers (a testing/ folder inside a layer, testonly in Bazel) may reach up
# to build and run what they test. Prints each offending include and exits 1
# when there is one.
set -euo pipefail

# The layers, lowest first: a folder, then the folders its files may include
# (besides itself, absl, Eigen, protobuf and the system's headers). The
# longest folder that prefixes a path names its layer.
read -r -d '' LAYERS <<'EOF' || true
proto:
core:           proto
framework:      core proto
framework/gpu:  framework core proto
graph:          framework core proto
ops:            graph framework core proto
kernels:        framework core proto
kernels/gpu:    kernels framework/gpu framework core proto
runtime:        graph framework core proto
saved_model:    runtime graph framework core proto
data:           framework core proto
train:          ops graph runtime framework core proto
layers:         ops graph framework core proto
distribute:     ops graph runtime framework core proto
estimator:      distribute saved_model train data ops graph runtime framework core proto
keras:          estimator distribute saved_model layers train data ops graph runtime framework core proto
testing:        keras estimator distribute saved_model layers train data ops graph runtime kernels framework core proto tests
EOF

tree="${1:-}"
if [ -z "$tree" ]; then
  # Under `bazel test`, this script is a symlink into the source tree.
  tree="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
fi
cd "$tree"

declare -A allowed
folders=()
while read -r line; do
  [ -n "$line" ] || continue
  folder="${line%%:*}"
  read -r -a deps <<<"${line#*:}"
  allowed["$folder"]="$folder ${deps[*]}"
  folders+=("$folder")
done <<<"$LAYERS"

# The layer of a path: the longest listed folder that prefixes it.
layer_of() {
  local path="$1" best="" f
  for f in "${folders[@]}"; do
    if [[ "$path" == "$f/"* && ${#f} -gt ${#best} ]]; then best="$f"; fi
  done
  printf '%s' "$best"
}

violations=0
checked=0
while IFS= read -r file; do
  case "$file" in
    *_test.cc | */testing/*) continue ;;
  esac
  from="$(layer_of "$file")"
  [ -n "$from" ] || continue
  checked=$((checked + 1))
  while IFS= read -r inc; do
    to="$(layer_of "$inc")"
    top="${inc%%/*}"
    # Project headers only: a first component that is a folder of the tree.
    [ -d "$top" ] || continue
    [ "$top" != "third_party" ] || continue
    if [ -z "$to" ]; then to="$top"; fi
    ok=0
    for a in ${allowed[$from]}; do
      if [ "$to" = "$a" ]; then ok=1; break; fi
    done
    if [ "$ok" -eq 0 ]; then
      echo "$file includes \"$inc\": $from/ may include only ${allowed[$from]}"
      violations=$((violations + 1))
    fi
  done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$file")
done < <(find proto core framework graph ops kernels runtime data train estimator testing \
           -type f \( -name '*.h' -o -name '*.cc' \) 2>/dev/null | sort)

# Bazel packages are private by default; only third_party/ (glue for
# system libraries) exports everything.
while IFS= read -r build; do
  if grep -q 'default_visibility = \["//visibility:public"\]' "$build"; then
    echo "$build: packages are private by default; give public API targets visibility"
    violations=$((violations + 1))
  fi
done < <(find . -path ./third_party -prune -o -path './bazel-*' -prune -o \
           \( -name BUILD -o -name BUILD.bazel \) -type f -print | sort)

if [ "$checked" -eq 0 ]; then
  echo "check_layers: no sources found under $tree" >&2
  exit 1
fi
if [ "$violations" -gt 0 ]; then
  echo "check_layers: $violations violation(s) of the layering ($checked source files)"
  exit 1
fi
echo "check_layers: $checked files, every include points down the layers"
