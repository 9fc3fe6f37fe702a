// The host's time per GPU node (bench/README.md): where a training step's
// GPU work is small, the step takes as long as the executor's thread needs
// to enqueue it, so this is what a ResNet-20 step on a fast GPU costs.
//
// 1. Through a Session on /gpu:0: chains of kLong and of 1 node of one op
//    (Relu, Conv2D, Conv2DBackpropInput) on a batch-1 ResNet-20 layer
//    (32x32x16, 3x3 filters, SAME), where each kernel takes a few
//    microseconds of GPU time; (chain - single) / (kLong - 1) is one node.
// 2. cuDNN's convolution calls alone on the same shape (NCHW, as the
//    kernels compute), enqueued kCalls times without a synchronisation: the
//    host time per legacy call, with descriptors made once and with them
//    made per call (as the kernels do), and per execution of a graph-API
//    plan built once (what PyTorch and TF do), with its output checked
//    against the legacy call's.
//
// Built with --config=cuda; without it the program says so and exits 1.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tools/flags.h"

#ifdef TOWERFLOW_CUDA
#include <cuda_runtime.h>
#include <cudnn.h>

#include "framework/gpu/gpu_device.h"
#include "graph/scope.h"
#include "ops/const_op.h"
#include "ops/gen/conv_ops.h"
#include "ops/gen/index_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/nn_ops.h"
#include "ops/gen/random_ops.h"
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

// The batch-1 layer's legacy descriptors, NCHW as the kernels make them.
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
      BENCH_CHECK(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, kChannels,
                                             kSide, kSide));
    }
    BENCH_CHECK(cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, kChannels,
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

// A descriptor of cuDNN's graph (backend) API, destroyed with its owner.
class Backend {
 public:
  explicit Backend(cudnnBackendDescriptorType_t type) {
    BENCH_CHECK(cudnnBackendCreateDescriptor(type, &d_));
  }
  Backend(Backend&& other) noexcept : d_(other.d_) { other.d_ = nullptr; }
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;
  Backend& operator=(Backend&& other) noexcept {
    std::swap(d_, other.d_);
    return *this;
  }
  ~Backend() {
    if (d_ != nullptr) cudnnBackendDestroyDescriptor(d_);
  }
  cudnnBackendDescriptor_t get() const { return d_; }
  void Set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count,
           const void* values) {
    BENCH_CHECK(cudnnBackendSetAttribute(d_, name, type, count, values));
  }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

// A packed NCHW float tensor [n, c, h, w] of the graph API.
Backend GraphTensor(int64_t uid, int64_t n, int64_t c, int64_t h, int64_t w) {
  Backend t(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  const cudnnDataType_t type = CUDNN_DATA_FLOAT;
  const int64_t dims[4] = {n, c, h, w}, strides[4] = {c * h * w, h * w, w, 1}, alignment = 16;
  t.Set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
  t.Set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims);
  t.Set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides);
  t.Set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
  t.Set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment);
  BENCH_CHECK(cudnnBackendFinalize(t.get()));
  return t;
}

enum : int64_t { kUidX = 1, kUidW = 2, kUidY = 3 };

// The layer as a graph-API execution plan, built once: the operation
// graph, then the first of the heuristics' engine configs that uses no
// tensor cores (no TF32, as the legacy calls' CUDNN_FMA_MATH) and builds.
struct GraphPlan {
  std::vector<Backend> keep;  // what the plan refers to
  Backend plan{CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR};
  int64_t workspace_bytes = 0;
};

std::unique_ptr<GraphPlan> BuildGraphPlan(cudnnHandle_t handle, bool backward_data) {
  auto p = std::make_unique<GraphPlan>();
  Backend x = GraphTensor(kUidX, 1, kChannels, kSide, kSide);
  Backend w = GraphTensor(kUidW, kChannels, kChannels, 3, 3);
  Backend y = GraphTensor(kUidY, 1, kChannels, kSide, kSide);
  Backend conv(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  const int64_t spatial = 2, pad[2] = {1, 1}, one2[2] = {1, 1};
  conv.Set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute);
  conv.Set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
  conv.Set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial);
  conv.Set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
  conv.Set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
  conv.Set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, one2);
  conv.Set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, one2);
  BENCH_CHECK(cudnnBackendFinalize(conv.get()));
  const float alpha = 1, beta = 0;
  const cudnnBackendDescriptor_t xd = x.get(), wd = w.get(), yd = y.get(), cd = conv.get();
  Backend op(backward_data ? CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR
                           : CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
  if (backward_data) {
    op.Set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &xd);
    op.Set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &wd);
    op.Set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &yd);
    op.Set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
           &cd);
    op.Set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha);
    op.Set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA, CUDNN_TYPE_FLOAT, 1, &beta);
  } else {
    op.Set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &xd);
    op.Set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &wd);
    op.Set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &yd);
    op.Set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
           &cd);
    op.Set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha);
    op.Set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta);
  }
  BENCH_CHECK(cudnnBackendFinalize(op.get()));
  Backend graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  const cudnnBackendDescriptor_t opd = op.get();
  graph.Set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &opd);
  graph.Set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
  BENCH_CHECK(cudnnBackendFinalize(graph.get()));
  Backend heuristics(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  const cudnnBackendDescriptor_t gd = graph.get();
  const cudnnBackendHeurMode_t heur_mode = CUDNN_HEUR_MODE_A;
  heuristics.Set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &gd);
  heuristics.Set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &heur_mode);
  BENCH_CHECK(cudnnBackendFinalize(heuristics.get()));
  int64_t count = 0;
  BENCH_CHECK(cudnnBackendGetAttribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                       CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr));
  std::vector<Backend> configs;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (int64_t i = 0; i < count; ++i) {
    configs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    raw.push_back(configs.back().get());
  }
  BENCH_CHECK(cudnnBackendGetAttribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                       CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &count, raw.data()));
  for (int64_t i = 0; i < count; ++i) {
    Backend engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    cudnnBackendDescriptor_t ed = engine.get();
    int64_t got = 0;
    BENCH_CHECK(cudnnBackendGetAttribute(raw[i], CUDNN_ATTR_ENGINECFG_ENGINE,
                                         CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &got, &ed));
    cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
    int64_t note_count = 0;
    BENCH_CHECK(cudnnBackendGetAttribute(ed, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
                                         CUDNN_TYPE_NUMERICAL_NOTE, CUDNN_NUMERICAL_NOTE_TYPE_COUNT,
                                         &note_count, notes));
    bool tensor_core = false;
    for (int64_t k = 0; k < note_count; ++k) {
      tensor_core |= notes[k] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE;
    }
    if (tensor_core) continue;
    Backend plan(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    plan.Set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
    plan.Set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw[i]);
    if (cudnnBackendFinalize(plan.get()) != CUDNN_STATUS_SUCCESS) continue;
    BENCH_CHECK(cudnnBackendGetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                         CUDNN_TYPE_INT64, 1, &got, &p->workspace_bytes));
    p->plan = std::move(plan);
    for (Backend* b : {&x, &w, &y, &conv, &op, &graph, &heuristics}) {
      p->keep.push_back(std::move(*b));
    }
    for (Backend& c : configs) p->keep.push_back(std::move(c));
    return p;
  }
  Fail("cuDNN's heuristics gave no engine without tensor cores that builds");
  return nullptr;
}

struct CudnnTimes {
  // Seconds per call, host only: legacy with descriptors made once and
  // per call, graph API with a variant pack per call; then per legacy
  // call with the GPU's time (a synchronisation at the end).
  double legacy, legacy_descriptors, graph, legacy_with_gpu;
  double max_difference;  // |legacy - graph| over the output
};

// Host seconds per cuDNN call (forward or backward data) on one stream,
// enqueued back to back: legacy calls with descriptors made once, and made
// per call (as the kernels do), and the graph API's execution of a plan
// built once; and their outputs compared.
CudnnTimes CudnnCalls(bool backward_data) {
  const int64_t act = kSide * kSide * kChannels, filt = 9 * kChannels * kChannels;
  float *x = nullptr, *y = nullptr, *w = nullptr, *graph_out = nullptr;
  BENCH_CHECK(cudaMalloc(&x, sizeof(float) * act));
  BENCH_CHECK(cudaMalloc(&y, sizeof(float) * act));
  BENCH_CHECK(cudaMalloc(&w, sizeof(float) * filt));
  BENCH_CHECK(cudaMalloc(&graph_out, sizeof(float) * act));
  std::vector<float> host(static_cast<size_t>(act));
  for (size_t i = 0; i < host.size(); ++i) host[i] = ((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
  // The pass's input: x forward, y (as dy) backward.
  BENCH_CHECK(
      cudaMemcpy(backward_data ? y : x, host.data(), sizeof(float) * act, cudaMemcpyHostToDevice));
  BENCH_CHECK(cudaMemcpy(w, host.data(), sizeof(float) * filt, cudaMemcpyHostToDevice));
  float* legacy_out = backward_data ? x : y;
  cudaStream_t stream;
  BENCH_CHECK(cudaStreamCreate(&stream));
  cudnnHandle_t handle;
  BENCH_CHECK(cudnnCreate(&handle));
  BENCH_CHECK(cudnnSetStream(handle, stream));
  Descriptors fixed;
  int found = 0;
  cudnnConvolutionFwdAlgoPerf_t fwd;
  cudnnConvolutionBwdDataAlgoPerf_t bwd;
  size_t legacy_workspace = 0;
  if (backward_data) {
    BENCH_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(handle, fixed.w, fixed.y, fixed.conv,
                                                            fixed.x, 1, &found, &bwd));
    legacy_workspace = bwd.memory;
  } else {
    BENCH_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(handle, fixed.x, fixed.w, fixed.conv,
                                                       fixed.y, 1, &found, &fwd));
    legacy_workspace = fwd.memory;
  }
  const std::unique_ptr<GraphPlan> plan = BuildGraphPlan(handle, backward_data);
  const size_t workspace_bytes =
      std::max(legacy_workspace, static_cast<size_t>(plan->workspace_bytes));
  void* workspace = nullptr;
  if (workspace_bytes > 0) BENCH_CHECK(cudaMalloc(&workspace, workspace_bytes));
  const float one = 1, zero = 0;
  const auto legacy = [&](const Descriptors& d) {
    if (backward_data) {
      BENCH_CHECK(cudnnConvolutionBackwardData(handle, &one, d.w, w, d.y, y, d.conv, bwd.algo,
                                               workspace, legacy_workspace, &zero, d.x, x));
    } else {
      BENCH_CHECK(cudnnConvolutionForward(handle, &one, d.x, x, d.w, w, d.conv, fwd.algo, workspace,
                                          legacy_workspace, &zero, d.y, y));
    }
  };
  const auto graph = [&] {
    Backend pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    const int64_t uids[3] = {kUidX, kUidW, kUidY};
    void* pointers[3] = {backward_data ? graph_out : x, w, backward_data ? y : graph_out};
    pack.Set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids);
    pack.Set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, pointers);
    pack.Set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
    BENCH_CHECK(cudnnBackendFinalize(pack.get()));
    BENCH_CHECK(cudnnBackendExecute(handle, plan->plan.get(), pack.get()));
  };
  for (int i = 0; i < 20; ++i) {
    legacy(fixed);
    graph();
  }
  BENCH_CHECK(cudaStreamSynchronize(stream));
  std::vector<float> a(host.size()), b(host.size());
  BENCH_CHECK(cudaMemcpy(a.data(), legacy_out, sizeof(float) * act, cudaMemcpyDeviceToHost));
  BENCH_CHECK(cudaMemcpy(b.data(), graph_out, sizeof(float) * act, cudaMemcpyDeviceToHost));
  CudnnTimes times;
  times.max_difference = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    times.max_difference = std::max<double>(times.max_difference, std::abs(a[i] - b[i]));
  }
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kCalls; ++i) legacy(fixed);
  times.legacy = Seconds(start) / kCalls;
  BENCH_CHECK(cudaStreamSynchronize(stream));
  times.legacy_with_gpu = Seconds(start) / kCalls;
  start = std::chrono::steady_clock::now();
  for (int i = 0; i < kCalls; ++i) legacy(Descriptors());
  times.legacy_descriptors = Seconds(start) / kCalls;
  BENCH_CHECK(cudaStreamSynchronize(stream));
  start = std::chrono::steady_clock::now();
  for (int i = 0; i < kCalls; ++i) graph();
  times.graph = Seconds(start) / kCalls;
  BENCH_CHECK(cudaStreamSynchronize(stream));
  cudnnDestroy(handle);
  cudaStreamDestroy(stream);
  cudaFree(workspace);
  for (float* buffer : {x, y, w, graph_out}) cudaFree(buffer);
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
      const std::string pass = backward ? "backward data" : "forward";
      std::printf("%-34s %14.1f\n", absl::StrCat("legacy ", pass).c_str(), t.legacy * 1e6);
      std::printf("%-34s %14.1f\n", absl::StrCat("legacy ", pass, " + descriptors").c_str(),
                  t.legacy_descriptors * 1e6);
      std::printf("%-34s %14.1f\n", absl::StrCat("legacy ", pass, " with the GPU").c_str(),
                  t.legacy_with_gpu * 1e6);
      std::printf("%-34s %14.1f   (max |legacy - graph| %.2g)\n",
                  absl::StrCat("graph API ", pass).c_str(), t.graph * 1e6, t.max_difference);
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
