// MatMul on a GPU (bench/README.md): a chain of kChain float MatMuls of
// n x n through a Session on /gpu:0 against the same products by direct
// cublasSgemm calls on one stream. Both end with the GPU idle: the session
// fetches one element of the last product (a copy to the host after the
// kernels), the direct loop synchronises its stream. Built with
// --config=cuda; without it the program says so and exits 1.
//
//   gpu_bench [n ...]        (default 1024 4096)
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "tools/flags.h"

#ifdef TOWERFLOW_CUDA
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "framework/gpu/gpu_device.h"
#include "graph/scope.h"
#include "ops/const_op.h"
#include "ops/gen/index_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/random_ops.h"
#include "runtime/session.h"
#endif

namespace towerflow {
namespace {

constexpr int kChain = 10;
constexpr int kRuns = 20;

#ifdef TOWERFLOW_CUDA

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void Fail(const std::string& what) {
  std::fprintf(stderr, "gpu_bench: %s\n", what.c_str());
  std::exit(1);
}

// Seconds per chain through a Session: the products and the random matrix
// all on /gpu:0.
double SessionChain(int64_t n) {
  Scope root = Scope::NewRootScope().WithDevice("/gpu:0");
  Output a = ops::Mul(root,
                      ops::RandomStandardNormal(root, ops::Const(root, {n, n}), DT_FLOAT,
                                                ops::RandomStandardNormal::Seed(1)),
                      1.0f / std::sqrt(static_cast<float>(n)));
  Output c = a;
  for (int i = 0; i < kChain; ++i) c = ops::MatMul(root, c, a);
  Output corner = ops::Slice(root, c, ops::Const(root, {0, 0}), ops::Const(root, {1, 1}));
  GraphDef graph;
  if (absl::Status s = root.ToGraphDef(&graph); !s.ok()) Fail(s.ToString());
  SessionOptions options;
  options.allow_soft_placement = false;
  auto session = NewSession(options);
  if (!session.ok()) Fail(session.status().ToString());
  if (absl::Status s = (*session)->Create(graph); !s.ok()) Fail(s.ToString());
  std::vector<Tensor> out;
  const std::string fetch = corner.name();
  for (int i = 0; i < 3; ++i) {  // warm-up: the executor, cuBLAS's workspace
    if (absl::Status s = (*session)->Run({}, {fetch}, {}, &out); !s.ok()) Fail(s.ToString());
  }
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kRuns; ++i) {
    if (absl::Status s = (*session)->Run({}, {fetch}, {}, &out); !s.ok()) Fail(s.ToString());
  }
  return Seconds(start) / kRuns;
}

#define BENCH_CHECK(call)                                                                     \
  do {                                                                                        \
    if (auto e = (call); e != 0) Fail(absl::StrCat(#call, " failed: ", static_cast<int>(e))); \
  } while (0)

// Seconds per chain of direct cublasSgemm calls.
double DirectChain(int n) {
  float *a = nullptr, *c[2] = {nullptr, nullptr};
  const size_t bytes = sizeof(float) * n * n;
  BENCH_CHECK(cudaMalloc(&a, bytes));
  BENCH_CHECK(cudaMalloc(&c[0], bytes));
  BENCH_CHECK(cudaMalloc(&c[1], bytes));
  std::vector<float> host(static_cast<size_t>(n) * n);
  for (size_t i = 0; i < host.size(); ++i) host[i] = ((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
  BENCH_CHECK(cudaMemcpy(a, host.data(), bytes, cudaMemcpyHostToDevice));
  BENCH_CHECK(cudaMemcpy(c[0], host.data(), bytes, cudaMemcpyHostToDevice));
  cudaStream_t stream;
  BENCH_CHECK(cudaStreamCreate(&stream));
  cublasHandle_t handle;
  BENCH_CHECK(cublasCreate(&handle));
  BENCH_CHECK(cublasSetStream(handle, stream));
  const float one = 1, zero = 0;
  auto chain = [&] {
    for (int i = 0; i < kChain; ++i) {
      BENCH_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, c[i % 2], n,
                              &zero, c[(i + 1) % 2], n));
    }
    BENCH_CHECK(cudaStreamSynchronize(stream));
  };
  for (int i = 0; i < 3; ++i) chain();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kRuns; ++i) chain();
  const double seconds = Seconds(start) / kRuns;
  cublasDestroy(handle);
  cudaStreamDestroy(stream);
  cudaFree(a);
  cudaFree(c[0]);
  cudaFree(c[1]);
  return seconds;
}

int Main(const std::vector<std::string>& args) {
  std::vector<int> sizes;
  for (const std::string& arg : args) {
    int n = 0;
    if (!absl::SimpleAtoi(arg, &n) || n <= 0 || n > 32768) {
      Fail(absl::StrCat("a size is a number from 1 to 32768, not '", arg, "'"));
    }
    sizes.push_back(n);
  }
  if (sizes.empty()) sizes = {1024, 4096};
  if (gpu::CudaDeviceCount() == 0) Fail("no GPU on this machine");
  std::printf("%-6s %-26s %12s %12s\n", "n", "case", "ms/MatMul", "TFLOP/s");
  for (int n : sizes) {
    const double flops = 2.0 * n * n * static_cast<double>(n);
    // Alternate, twice each, so that clocks and caches favour neither.
    for (int round = 0; round < 2; ++round) {
      const double session = SessionChain(n) / kChain;
      const double direct = DirectChain(n) / kChain;
      std::printf("%-6d %-26s %12.3f %12.1f\n", n, "MatMul kernel (Session)", session * 1e3,
                  flops / session / 1e12);
      std::printf("%-6d %-26s %12.3f %12.1f\n", n, "cublasSgemm direct", direct * 1e3,
                  flops / direct / 1e12);
    }
  }
  return 0;
}

#else

int Main(const std::vector<std::string>&) {
  std::fprintf(stderr, "gpu_bench: built without CUDA (bazel build --config=cuda)\n");
  return 1;
}

#endif  // TOWERFLOW_CUDA

}  // namespace
}  // namespace towerflow

int main(int argc, char** argv) {
  return towerflow::Main(towerflow::ParseCommandLine(
      argc, argv,
      "gpu_bench: a chain of n x n float MatMuls on /gpu:0 through a Session against direct "
      "cublasSgemm.\n\nusage: gpu_bench [n ...]   (default: 1024 4096)"));
}
