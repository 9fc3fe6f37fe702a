#!/usr/bin/env bash
# Builds and tests examples/user_workspace against this checkout, as a user
# of Towerflow would (README: "Using Towerflow in your project"): its own
# Bazel workspace and output base, `bazel test //...` there, then its
# training program, whose accuracy on new points must reach 95%. CI runs it
# (.ci/run); it is not a Bazel test, since it runs Bazel itself.
#
# The workspace's own output base compiles Towerflow once more, under
# external/towerflow: CI builds it unoptimised (-c fastbuild, with
# assertions on; 8 to 9 minutes on CI's two cores) to stay within its time;
# the sources, BUILD files and deps.bzl are the same either way.
# USER_WORKSPACE_COMPILATION_MODE=opt builds it as its .bazelrc says.
set -euo pipefail
cd "$(dirname "$0")/user_workspace"

# The workspace's Bazel server goes when the script ends, so its memory
# does not stay taken from the steps after it.
model_dir="$(mktemp -d)"
trap 'rm -rf "$model_dir"; bazel shutdown' EXIT
mode="${USER_WORKSPACE_COMPILATION_MODE:-fastbuild}"
bazel test -c "$mode" //...
bazel build -c "$mode" //:train_quadrants
bazel-bin/train_quadrants --help | grep -q -- "--model_dir=VALUE (default: \"/tmp/quadrants\")" || {
  echo "user_workspace: train_quadrants --help does not list --model_dir" >&2
  exit 1
}
bazel-bin/train_quadrants --model_dir="$model_dir" | tee "$model_dir/out.txt"
accuracy=$(sed -n 's/.*accuracy \([0-9.e-]*\) on 1000 new points.*/\1/p' "$model_dir/out.txt")
if [ -z "$accuracy" ] || ! awk -v a="$accuracy" 'BEGIN { exit !(a >= 0.95) }'; then
  echo "user_workspace: accuracy '${accuracy}' on new points, expected >= 0.95" >&2
  exit 1
fi
echo "user_workspace: OK (accuracy ${accuracy})"
