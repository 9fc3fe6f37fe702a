// The host's time per GPU node (bench/README.md): where a training step's
// GPU work is small, the step takes as long as the executor's thread needs
// to enqueue it, so this is what a ResNet-20 step on a fast GPU costs.
//
// 1. Through a Session on /gpu:0: chains of kLong and of 1 node of one op
//    (Relu, Conv2D, Conv2DBackpropInput) on a batch-1 ResNet-20 layer
//    (32x32x16, 3x3 filters, SAME), where each kernel takes a few
//    microseconds of GPU time; (chain - single) / (kLong - 1) is one node.
// 2. cuDNN's legacy convolution calls alone on the same shape, enqueued
//    kCalls times without a synchronisation: the host time per call, with
//    descriptors made once and with them made per call (as the kernels do).
//
// Built with --config=cuda; without it the program says so and exits 1.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tools/flags.h"

#ifdef TOWERFLOW_CUDA
#include <cuda_runtime.h>
#include <cudnn.h>

#include "framework/gpu/gpu_device.h"
#include "graph/scope.h"
#include "ops/ops.h"
#include "runtime/session.h"
#endif

namespace towerflow {
namespace {

#ifdef TOWERFLOW_CUDA

constexpr int kLong = 41;
constexpr int kRuns = 50;
constexpr int kCalls = 500;
constexpr int64_t kSide = 32, kChannels = 16;

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void Fail(const std::string& what) {
  std::fprintf(stderr, "gpu_node_overhead: %s\n", what.c_str());
  std::exit(1);
}

// Seconds per step of a chain of `length` nodes, each made by `node` from
// the one before, on /gpu:0; the step fetches one element of the last.
double ChainStep(int length, const std::function<Output(const Scope&, Output, Output)>& node) {
  Scope root = Scope::NewRootScope().WithDevice("/gpu:0");
  const auto random = [&](Output shape, int seed) {
    return ops::Mul(
        root,
        ops::RandomStandardNormal(root, shape, DT_FLOAT, ops::RandomStandardNormal::Seed(seed)),
        0.1f);
  };
  Output filter = random(ops::Const(root, {3, 3, kChannels, kChannels}), 1);
  Output x = random(ops::Const(root, {int64_t{1}, kSide, kSide, kChannels}), 2);
  for (int i = 0; i < length; ++i) x = node(root, x, filter);
  Output corner =
      ops::Slice(root, x, ops::Const(root, {0, 0, 0, 0}), ops::Const(root, {1, 1, 1, 1}));
  GraphDef graph;
  if (absl::Status s = root.ToGraphDef(&graph); !s.ok()) Fail(s.ToString());
  SessionOptions options;
  options.allow_soft_placement = false;
  auto session = NewSession(options);
  if (!session.ok()) Fail(session.status().ToString());
  if (absl::Status s = (*session)->Create(graph); !s.ok()) Fail(s.ToString());
  std::vector<Tensor> out;
  for (int i = 0; i < 5; ++i) {  // warm-up: the executor, cuDNN's algorithms
    if (absl::Status s = (*session)->Run({}, {corner.name()}, {}, &out); !s.ok()) {
      Fail(s.ToString());
    }
  }
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kRuns; ++i) {
    if (absl::Status s = (*session)->Run({}, {corner.name()}, {}, &out); !s.ok()) {
      Fail(s.ToString());
    }
  }
  return Seconds(start) / kRuns;
}

#define BENCH_CHECK(call)                                                                     \
  do {                                                                                        \
    if (auto e = (call); e != 0) Fail(absl::StrCat(#call, " failed: ", static_cast<int>(e))); \
  } while (0)

// The batch-1 layer's descriptors, NHWC as the kernels make them.
struct Descriptors {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;

  Descriptors() {
    BENCH_CHECK(cudnnCreateTensorDescriptor(&x));
    BENCH_CHECK(cudnnCreateTensorDescriptor(&y));
    BENCH_CHECK(cudnnCreateFilterDescriptor(&w));
    BENCH_CHECK(cudnnCreateConvolutionDescriptor(&conv));
    for (cudnnTensorDescriptor_t t : {x, y}) {
      BENCH_CHECK(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, 1, kChannels,
                                             kSide, kSide));
    }
    BENCH_CHECK(cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, kChannels,
                                           kChannels, 3, 3));
    BENCH_CHECK(cudnnSetConvolution2dDescriptor(conv, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                                CUDNN_DATA_FLOAT));
    BENCH_CHECK(cudnnSetConvolutionMathType(conv, CUDNN_FMA_MATH));
  }
  ~Descriptors() {
    cudnnDestroyTensorDescriptor(x);
    cudnnDestroyTensorDescriptor(y);
    cudnnDestroyFilterDescriptor(w);
    cudnnDestroyConvolutionDescriptor(conv);
  }
};

struct CudnnTimes {
  double enqueue, with_descriptors, per_call;  // seconds per call
};

// Host seconds per legacy cuDNN call (forward or backward data) on one
// stream: enqueued back to back, then with fresh descriptors per call; and
// per call including the GPU's time (a synchronisation at the end).
CudnnTimes CudnnCalls(bool backward_data) {
  const size_t act = sizeof(float) * kSide * kSide * kChannels;
  const size_t filt = sizeof(float) * 9 * kChannels * kChannels;
  float *x = nullptr, *y = nullptr, *w = nullptr;
  BENCH_CHECK(cudaMalloc(&x, act));
  BENCH_CHECK(cudaMalloc(&y, act));
  BENCH_CHECK(cudaMalloc(&w, filt));
  BENCH_CHECK(cudaMemset(x, 0, act));
  BENCH_CHECK(cudaMemset(y, 0, act));
  BENCH_CHECK(cudaMemset(w, 0, filt));
  cudaStream_t stream;
  BENCH_CHECK(cudaStreamCreate(&stream));
  cudnnHandle_t handle;
  BENCH_CHECK(cudnnCreate(&handle));
  BENCH_CHECK(cudnnSetStream(handle, stream));
  Descriptors fixed;
  int found = 0;
  cudnnConvolutionFwdAlgoPerf_t fwd;
  cudnnConvolutionBwdDataAlgoPerf_t bwd;
  size_t workspace_bytes = 0;
  if (backward_data) {
    BENCH_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(handle, fixed.w, fixed.y, fixed.conv,
                                                            fixed.x, 1, &found, &bwd));
    workspace_bytes = bwd.memory;
  } else {
    BENCH_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(handle, fixed.x, fixed.w, fixed.conv,
                                                       fixed.y, 1, &found, &fwd));
    workspace_bytes = fwd.memory;
  }
  void* workspace = nullptr;
  if (workspace_bytes > 0) BENCH_CHECK(cudaMalloc(&workspace, workspace_bytes));
  const float one = 1, zero = 0;
  const auto call = [&](const Descriptors& d) {
    if (backward_data) {
      BENCH_CHECK(cudnnConvolutionBackwardData(handle, &one, d.w, w, d.y, y, d.conv, bwd.algo,
                                               workspace, workspace_bytes, &zero, d.x, x));
    } else {
      BENCH_CHECK(cudnnConvolutionForward(handle, &one, d.x, x, d.w, w, d.conv, fwd.algo, workspace,
                                          workspace_bytes, &zero, d.y, y));
    }
  };
  for (int i = 0; i < 20; ++i) call(fixed);
  BENCH_CHECK(cudaStreamSynchronize(stream));
  CudnnTimes times;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kCalls; ++i) call(fixed);
  times.enqueue = Seconds(start) / kCalls;
  BENCH_CHECK(cudaStreamSynchronize(stream));
  times.per_call = Seconds(start) / kCalls;
  start = std::chrono::steady_clock::now();
  for (int i = 0; i < kCalls; ++i) call(Descriptors());
  times.with_descriptors = Seconds(start) / kCalls;
  BENCH_CHECK(cudaStreamSynchronize(stream));
  cudnnDestroy(handle);
  cudaStreamDestroy(stream);
  cudaFree(workspace);
  cudaFree(x);
  cudaFree(y);
  cudaFree(w);
  return times;
}

int Main(const std::vector<std::string>& args) {
  if (!args.empty()) Fail("takes no arguments");
  if (gpu::CudaDeviceCount() == 0) Fail("no GPU on this machine");
  const std::vector<int64_t> unit = {1, 1, 1, 1};
  const std::vector<std::pair<const char*, std::function<Output(const Scope&, Output, Output)>>>
      nodes = {
          {"Relu", [](const Scope& s, Output x, Output) { return ops::Relu(s, x); }},
          {"Conv2D",
           [&](const Scope& s, Output x, Output f) { return ops::Conv2D(s, x, f, unit, "SAME"); }},
          {"Conv2DBackpropInput",
           [&](const Scope& s, Output dy, Output f) {
             return ops::Conv2DBackpropInput(
                 s, ops::Const(s, {1, int(kSide), int(kSide), int(kChannels)}), f, dy, unit,
                 "SAME");
           }},
      };
  std::printf("%-34s %14s\n", "case (batch-1 ResNet-20 layer)", "host us each");
  for (int round = 0; round < 2; ++round) {
    for (const auto& [name, node] : nodes) {
      const double single = ChainStep(1, node), chain = ChainStep(kLong, node);
      std::printf("%-34s %14.1f\n", absl::StrCat(name, " node (Session)").c_str(),
                  (chain - single) / (kLong - 1) * 1e6);
    }
    for (bool backward : {false, true}) {
      const CudnnTimes t = CudnnCalls(backward);
      const char* call = backward ? "cudnnConvolutionBackwardData" : "cudnnConvolutionForward";
      std::printf("%-34s %14.1f\n", absl::StrCat(call, " enqueue").c_str(), t.enqueue * 1e6);
      std::printf("%-34s %14.1f\n", absl::StrCat(call, " + descriptors").c_str(),
                  t.with_descriptors * 1e6);
      std::printf("%-34s %14.1f\n", absl::StrCat(call, " with the GPU").c_str(), t.per_call * 1e6);
    }
  }
  return 0;
}

#else

int Main(const std::vector<std::string>&) {
  std::fprintf(stderr, "gpu_node_overhead: built without CUDA (bazel build --config=cuda)\n");
  return 1;
}

#endif  // TOWERFLOW_CUDA

}  // namespace
}  // namespace towerflow

int main(int argc, char** argv) {
  return towerflow::Main(towerflow::ParseCommandLine(
      argc, argv,
      "gpu_node_overhead: the host's time per GPU node through a Session (Relu, Conv2D, "
      "Conv2DBackpropInput chains) and per legacy cuDNN convolution call.\n\nusage: "
      "gpu_node_overhead"));
}
