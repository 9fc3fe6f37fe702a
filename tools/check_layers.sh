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
distribute:     ops graph runtime framework/gpu framework core proto
training:       distribute train ops graph runtime framework core proto
estimator:      training distribute saved_model train data ops graph runtime framework core proto
keras:          estimator training distribute saved_model layers train data ops graph runtime framework core proto
testing:        keras estimator training distribute saved_model layers train data ops graph runtime kernels framework core proto tests
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
done < <(find "${folders[@]}" \
           -type f \( -name "*.h" -o -name "*.cc" \) 2>/dev/null | sort -u)

# No include cycles between the files of a folder either: a unit (foo.h
# with foo.cc) may not include, through others, a unit that includes it. A
# header private to a library (foo_internal.h, foo_impl.h) is part of the
# units that include it, so it may include their public headers.
cycles="$(python3 - "${folders[@]}" <<'PY'
import collections, os, re, sys
inc_re = re.compile(r'^#include "([^"]+)"', re.M)
files = set()
for top in sys.argv[1:]:
    for root, _, names in os.walk(top):
        # Test helpers (a testing/ folder inside a layer) may reach anywhere.
        if "testing" in root.split("/")[1:]:
            continue
        for n in names:
            if n.endswith((".h", ".cc")) and not n.endswith("_test.cc"):
                files.add(os.path.join(root, n))
unit = lambda path: re.sub(r"\.(h|cc)$", "", path)
private = lambda path: re.search(r"_(internal|impl)\.h$", path) is not None
edges = collections.defaultdict(set)
for f in sorted(files):
    edges[unit(f)]
    if private(f):
        continue
    with open(f, errors="replace") as text:
        for inc in inc_re.findall(text.read()):
            if inc in files and unit(inc) != unit(f) and not private(inc):
                edges[unit(f)].add(unit(inc))
# Tarjan's strongly connected components, iteratively.
index, low, on, stack, found = {}, {}, set(), [], []
for start in sorted(edges):
    if start in index:
        continue
    work = [(start, iter(sorted(edges[start])))]
    index[start] = low[start] = len(index)
    stack.append(start)
    on.add(start)
    while work:
        v, it = work[-1]
        w = next(it, None)
        if w is not None:
            if w not in index:
                index[w] = low[w] = len(index)
                stack.append(w)
                on.add(w)
                work.append((w, iter(sorted(edges[w]))))
            elif w in on:
                low[v] = min(low[v], index[w])
            continue
        work.pop()
        if work:
            low[work[-1][0]] = min(low[work[-1][0]], low[v])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(" <-> ".join(sorted(comp)))
for c in found:
    print(c)
PY
)"
if [ -n "$cycles" ]; then
  while IFS= read -r cycle; do
    echo "include cycle: $cycle"
    violations=$((violations + 1))
  done <<<"$cycles"
fi

# Every folder holding sources has a row of the table, or is one of the
# folders that may include anything: a new folder cannot escape the check.
ANYWHERE="tools examples bench tests fuzz third_party"
while IFS= read -r top; do
  known=0
  for f in "${folders[@]}" $ANYWHERE; do
    if [ "$top" = "$f" ]; then known=1; break; fi
  done
  if [ "$known" -eq 0 ]; then
    echo "$top/: a folder of sources without a row in the layering (tools/check_layers.sh, docs/ARCHITECTURE.md)"
    violations=$((violations + 1))
  fi
done < <(find . -path './.*' -prune -o -mindepth 2 -type f \( -name '*.h' -o -name '*.cc' -o -name '*.cu' \) \
           -print | cut -d/ -f2 | sort -u)

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
