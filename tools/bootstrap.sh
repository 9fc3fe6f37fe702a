#!/usr/bin/env bash
# Installs what Towerflow needs to build and test, from Debian's archive.
# Idempotent: when every package is present it installs nothing.
#
#   tools/bootstrap.sh
set -euo pipefail

packages=(
  bazel-bootstrap     # Bazel 4.2.3 (pulls in a JDK)
  g++
  libprotobuf-dev     # Protocol Buffers 3.21
  protobuf-compiler   # protoc
  libabsl-dev         # Abseil 20220623
  libeigen3-dev       # Eigen 3.4
  libopenblas-dev     # OpenBLAS: sgemm for MatMul (and double convolutions)
  libdnnl-dev         # oneDNN: float convolutions
  zlib1g-dev          # zlib: gzip-compressed IDX files
  libjpeg62-turbo-dev # libjpeg-turbo: DecodeJpeg/EncodeJpeg, the ImageNet pipeline
  libpng-dev          # libpng: DecodePng/EncodePng
  libleveldb-dev      # LevelDB tables: TensorFlow's checkpoint index format
  libsnappy-dev       # Snappy: the index blocks' compression (tests decode it)
  libre2-dev          # RE2: TensorFlow's regular expressions (StaticRegexFullMatch, RegexReplace)
  libicu-dev          # ICU: the Unicode ops (UnicodeDecode, UnicodeEncode, UnicodeScript)
  libfarmhash-dev     # FarmHash: TF's Fingerprint64 (StringToHashBucketFast, vocabulary OOV buckets)
  dataset-fashion-mnist  # Fashion-MNIST (IDX, gzip): the examples train on it
  libgtest-dev        # GoogleTest
  libgmock-dev        # GoogleMock
  libbenchmark-dev    # Google Benchmark
  nlohmann-json3-dev  # JSON for the command-line tool's feeds and output
  graphviz            # dot: draws the towers of the main job
  libopenmpi-dev      # Open MPI 4.1: multi-process training (distribute/)
  openmpi-bin         # mpirun: starts the processes (and the multi-process tests)
  iproute2            # ip, tc: the simulated hosts of //tests:multihost_test
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "bootstrap: all ${#packages[@]} packages are installed"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "bootstrap: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
