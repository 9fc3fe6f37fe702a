#!/usr/bin/env bash
# The TensorFlow interop check (tools/tf_interop/check.py): real TensorFlow
# and TensorBoard read what Towerflow writes and write what Towerflow reads;
# then tools/tf_interop/op_cases.py runs every registered op through
# Towerflow and through TensorFlow's kernel, case by case.
#
#   tools/tf_interop/run.sh        (from anywhere; .ci/run runs it)
#
# Installs the pinned packages of requirements.txt into a virtual
# environment kept between runs ($TOWERFLOW_CACHE, else ~/.cache/towerflow;
# pip keeps its own download cache) and Debian's chromium and
# chromium-driver, builds the Towerflow programs the check drives, and runs
# it; headless Chromium's pictures of TensorBoard are left in
# $TOWERFLOW_CACHE/tf_interop_screenshots. When PyPI cannot be reached the
# check is skipped with a message (exit 0), as is the browser without
# Chromium; a failed install from a reachable PyPI, a failed build or a
# failed check exit 1. About 45 s on the project's two-core machine with
# everything installed, 3 min without.
set -uo pipefail
cd "$(dirname "$0")/../.."

cache="${TOWERFLOW_CACHE:-$HOME/.cache/towerflow}"
venv="$cache/tf_interop_venv"
requirements=tools/tf_interop/requirements.txt

if ! cmp -s "$requirements" "$venv/requirements.txt"; then
  rm -rf "$venv"
  mkdir -p "$cache"
  if ! python3 -m venv "$venv"; then
    echo "tf_interop: FAILED: python3 -m venv $venv (Debian: apt-get install python3-venv)"
    exit 1
  fi
  # The index pip is configured with, asked for the one package that matters.
  if ! "$venv/bin/pip" index versions tensorflow-cpu > /dev/null 2>&1; then
    echo "tf_interop: SKIPPED: PyPI cannot be reached (pip index versions tensorflow-cpu failed);" \
      "TensorFlow's and TensorBoard's reading of Towerflow's files was not checked"
    rm -rf "$venv"
    exit 0
  fi
  if ! "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements"; then
    echo "tf_interop: FAILED: pip install -r $requirements"
    rm -rf "$venv"
    exit 1
  fi
  cp "$requirements" "$venv/requirements.txt"
fi

# Debian's headless Chromium and its WebDriver look at TensorBoard; when
# they cannot be installed the browser is left out with a message.
screenshots=()
if ! command -v chromium > /dev/null || ! command -v chromedriver > /dev/null; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "tf_interop: installing chromium chromium-driver"
  { $sudo apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium chromium-driver; } \
    > /dev/null 2>&1
fi
if command -v chromium > /dev/null && command -v chromedriver > /dev/null; then
  shots="$cache/tf_interop_screenshots"
  rm -rf "$shots"
  screenshots=(--screenshots="$shots")
else
  echo "tf_interop: SKIPPED the browser: chromium and chromium-driver could not be installed"
fi

bazel build //tools:towerflow //tools/tf_interop:tf_interop_driver \
  //examples/cifar10:cifar10_train || exit 1
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
TF_CPP_MIN_LOG_LEVEL=2 "$venv/bin/python" tools/tf_interop/check.py \
  --towerflow=bazel-bin/tools/towerflow \
  --driver=bazel-bin/tools/tf_interop/tf_interop_driver \
  --cifar10=bazel-bin/examples/cifar10/cifar10_train --work="$work" "${screenshots[@]}"
check_status=$?
# Every registered op against TensorFlow's kernel, case by case (about 10 s).
TF_CPP_MIN_LOG_LEVEL=2 "$venv/bin/python" tools/tf_interop/op_cases.py \
  --driver=bazel-bin/tools/tf_interop/tf_interop_driver --work="$work/op_cases"
op_status=$?
[ "$check_status" -eq 0 ] && [ "$op_status" -eq 0 ]
