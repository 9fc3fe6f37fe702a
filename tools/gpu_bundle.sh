#!/usr/bin/env bash
# Packs the GPU test binaries and the programs timed on a GPU for a machine
# that has a GPU, CUDA and its libraries but no Bazel and none of Debian's:
#
#   tools/gpu_bundle.sh              # builds with --config=cuda, writes gpu_bundle/
#   tools/gpu_bundle.sh //ops/... //train/...   # the C++ tests under these instead
#
# The default holds the tests that use a GPU when one is present and the
# programs bench/README.md times. With patterns, every cc_test they hold: on a
# GPU machine any session places unpinned nodes on the GPU, so the whole
# suite exercises the GPU kernels; the device tool carries 64 MiB, so pack it
# a few packages at a time. Tests that read files beside the checkout
# (../shared) skip them there.
#
# gpu_bundle/bundle.tar.xz holds bin/ (the programs, without debug information), lib/ (the
# shared libraries they load that are neither glibc's, GCC's nor CUDA's: the
# GPU machine brings its own CUDA 13 libraries, newer glibc and libstdc++) and
# run.sh. On the GPU machine:
#
#   tar -xJf gpu_bundle/bundle.tar.xz -C /tmp/tw && /tmp/tw/run.sh PROGRAM ARGS...
#
# run.sh finds libcudart, cuBLAS, cuDNN and NCCL there (CUDA's own folder or
# the nvidia-* Python wheels) and runs bin/PROGRAM with them.
set -euo pipefail
cd "$(dirname "$0")/.."

# Every test target that touches a GPU when one is present, and the programs
# bench/README.md times on one.
default_targets=(
  //framework/gpu:gpu_device_test
  //kernels/gpu:gpu_conformance_test
  //kernels/gpu:gpu_replay_test
  //kernels/gpu:collective_ops_test
  //estimator:all_reduce_test
  //estimator:replicate_model_fn_test
  //runtime:placement_test
  //examples/cifar10:cifar10_train
  //examples/resnet:resnet_train
  //bench:gpu_bench
  //bench:gpu_node_overhead
  //bench:gpu_replay
)
if [ $# -gt 0 ]; then
  mapfile -t targets < <(bazel query "kind(cc_test, tests(set($*)))" 2>/dev/null)
  if [ ${#targets[@]} -eq 0 ]; then
    echo "gpu_bundle.sh: no cc_test in $*" >&2
    exit 1
  fi
else
  targets=("${default_targets[@]}")
fi

bazel build --config=cuda "${targets[@]}"

out=gpu_bundle
stage="$out/stage"
rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/lib"
for target in "${targets[@]}"; do
  path="${target#//}"
  binary="bazel-bin/${path/://}"
  name="$(basename "$binary")"
  # Two packages' tests of one name (examples' model_test): the second is
  # named by its package too.
  if [ -e "$stage/bin/$name" ]; then
    name="$(echo "$path" | tr '/:' '__')"
  fi
  cp "$binary" "$stage/bin/$name"
  chmod u+w "$stage/bin/$name"
  # Symbols stay (backtraces name functions); debug information goes.
  strip --strip-debug "$stage/bin/$name"
  ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// {print $3}'
done | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    # glibc and GCC's runtime: the GPU machine's own (newer) ones.
    libc.so.* | libm.so.* | libpthread.so.* | librt.so.* | libdl.so.* | ld-linux*) ;;
    libstdc++.so.* | libgcc_s.so.*) ;;
    # CUDA's: the GPU machine's own, matching its driver.
    libcudart.so.* | libcublas.so.* | libcublasLt.so.* | libcudnn*.so.* | libnccl.so.*) ;;
    *) cp -L "$lib" "$stage/lib/" ;;
  esac
done

cat > "$stage/run.sh" << 'EOF'
#!/usr/bin/env bash
# run.sh [--wrap "COMMAND ARGS"] PROGRAM ARGS...: runs bin/PROGRAM with the
# bundled libraries and the machine's CUDA libraries, under COMMAND when
# given (compute-sanitizer --tool memcheck, cuda-gdb -batch -ex run -ex bt
# --args, ncu ...).
here="$(cd "$(dirname "$0")" && pwd)"
# The folders of the machine's CUDA libraries, searched for once and kept.
cache="$here/cuda_lib_path"
if [ ! -s "$cache" ]; then
  dirs=""
  for soname in libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libcudnn.so.9 libnccl.so.2; do
    found="$(find /usr/local/cuda*/ /usr/lib /opt -name "$soname" 2>/dev/null | head -n 1)"
    if [ -z "$found" ]; then
      echo "run.sh: $soname not found on this machine" >&2
      exit 1
    fi
    case ":$dirs:" in *":$(dirname "$found"):"*) ;; *) dirs="$dirs:$(dirname "$found")" ;; esac
  done
  echo "${dirs#:}" > "$cache"
fi
export LD_LIBRARY_PATH="$here/lib:$(cat "$cache")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
wrap=()
if [ "${1:-}" = --wrap ]; then
  read -r -a wrap <<< "$2"
  shift 2
fi
program="$1"
shift
exec "${wrap[@]}" "$here/bin/$program" "$@"
EOF
chmod +x "$stage/run.sh"

# The programs share most of their code (the kernels), so a dictionary that
# spans several of them stores each shared part once: 86 MiB with xz's
# default 8 MiB dictionary, 47 MiB with this one (decompressing needs 256 MiB
# of memory; tar -xJf reads it as usual).
tar -cf - -C "$stage" . | xz -T1 --lzma2=preset=6,dict=256MiB > "$out/bundle.tar.xz"
rm -rf "$stage"
ls -l "$out/bundle.tar.xz"
if [ "$(stat -c %s "$out/bundle.tar.xz")" -gt $((60 << 20)) ]; then
  echo "gpu_bundle.sh: over 60 MiB, more than the device tool carries: pack fewer tests" >&2
  exit 1
fi
