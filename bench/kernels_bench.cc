// CPU kernel benchmarks (commands and figures in bench/README.md):
//  * MatMul 1024x1024x1024 float through the MatMul kernel (oneDNN's
//    sgemm, kernels/cpu/blas.h) against a direct OpenBLAS cblas_sgemm call
//    on the same buffers;
//  * the CIFAR-10 tutorial model's training-step kernels at batch 128
//    (forward, loss, backward and the SGD updates; cifar10_multi_gpu_train.py's
//    inference() and loss()), summed per step, with a per-kernel breakdown
//    in the counters. bench/cifar10_torch.py runs the same layers in PyTorch;
//  * the machine's float FMA peak per thread count (the yardstick for the
//    convolutions' share of it);
//  * broadcasting binary ops (AddV2 and Greater on float) over the shapes
//    training meets: a bias row, a column, rank 3 and 4, short rows;
//  * BroadcastTo and Tile as the gradients of means repeat a statistic.
#include <immintrin.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "kernels/cpu/dnnl_conv.h"
#include "kernels/testing/kernel_runner.h"
#include "openblas-pthread/cblas.h"

namespace towerflow {
namespace {

Tensor RandomTensor(const TensorShape& shape, float scale, int seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0, scale);
  Tensor t(DT_FLOAT, shape);
  for (int64_t i = 0; i < t.NumElements(); ++i) t.data<float>()[i] = dist(gen);
  return t;
}

Tensor Ints(std::vector<int32_t> v) {
  return Literal<int32_t>({static_cast<int64_t>(v.size())}, v);
}

Tensor Must(absl::StatusOr<std::vector<Tensor>> out, int i = 0) {
  if (!out.ok()) {
    std::fprintf(stderr, "kernel failed: %s\n", out.status().ToString().c_str());
    std::abort();
  }
  return (*out)[i];
}

void BM_MatMulKernel(benchmark::State& state) {
  const int64_t n = state.range(0);
  const Tensor a = RandomTensor({n, n}, 1, 1), b = RandomTensor({n, n}, 1, 2);
  KernelRunner mm("MatMul");
  for (auto _ : state) benchmark::DoNotOptimize(Must(mm.Run({a, b})));
  state.counters["GFLOP/s"] = benchmark::Counter(
      2.0 * n * n * n, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

void BM_CblasSgemm(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const Tensor a = RandomTensor({n, n}, 1, 1), b = RandomTensor({n, n}, 1, 2);
  Tensor c(DT_FLOAT, TensorShape({n, n}));
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data<float>(), n,
                b.data<float>(), n, 0.0f, c.data<float>(), n);
    benchmark::DoNotOptimize(c.data<float>());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(
      2.0 * n * n * n, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

// Float FMAs on registers alone: 12 independent vector accumulators (more
// than the FMA latency times the pipes), 2 FLOPs per lane per FMA.
void BM_FmaPeak(benchmark::State& state) {
  constexpr int64_t kIterations = 1 << 20;
#if defined(__AVX512F__)
  using Vec = __m512;
  const auto fma = [](Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); };
  const auto set1 = [](float v) { return _mm512_set1_ps(v); };
  const auto sum = [](Vec v) { return _mm512_reduce_add_ps(v); };
#elif defined(__FMA__)
  using Vec = __m256;
  const auto fma = [](Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); };
  const auto set1 = [](float v) { return _mm256_set1_ps(v); };
  const auto sum = [](Vec v) {
    alignas(32) float f[8];
    _mm256_store_ps(f, v);
    return f[0] + f[1] + f[2] + f[3] + f[4] + f[5] + f[6] + f[7];
  };
#else
  state.SkipWithError("built without FMA instructions");
  return;
#endif
#if defined(__AVX512F__) || defined(__FMA__)
  constexpr int kLanes = sizeof(Vec) / sizeof(float), kChains = 12;
  const Vec a = set1(0.999999f), b = set1(1e-7f);
  for (auto _ : state) {
    Vec acc[kChains];
    for (int c = 0; c < kChains; ++c) acc[c] = set1(static_cast<float>(c));
    for (int64_t i = 0; i < kIterations; ++i) {
      // Unrolled, so the accumulators stay in registers (-O2 keeps the loop).
#pragma GCC unroll 12
      for (int c = 0; c < kChains; ++c) acc[c] = fma(acc[c], a, b);
    }
    float total = 0;
    for (int c = 0; c < kChains; ++c) total += sum(acc[c]);
    benchmark::DoNotOptimize(total);
  }
  state.counters["GFLOP/s"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * kIterations * kChains * kLanes * 2 / 1e9,
      benchmark::Counter::kIsRate);
#endif
}
BENCHMARK(BM_FmaPeak)->Threads(1)->Threads(2)->UseRealTime();

// A broadcasting binary op: x [..] op y [..] per case, ~1M output elements.
struct BroadcastCase {
  const char* name;
  TensorShape x, y;
};
const BroadcastCase kBroadcastCases[] = {
    {"bias_row", {1024, 1024}, {1024}},      {"column", {1024, 1024}, {1024, 1}},
    {"rank3", {64, 1, 1024}, {1, 16, 1024}}, {"rank4", {16, 16, 64, 64}, {16, 1, 64, 1}},
    {"short_rows", {524288, 2}, {1, 2}},     {"outer", {1024, 1}, {1, 1024}},
};

void BM_BroadcastBinary(benchmark::State& state) {
  const BroadcastCase& c = kBroadcastCases[state.range(0)];
  const char* op = state.range(1) == 0 ? "AddV2" : "Greater";
  state.SetLabel(absl::StrCat(op, " ", c.name, " ", c.x.DebugString(), " ", c.y.DebugString()));
  const Tensor x = RandomTensor(c.x, 1, 1), y = RandomTensor(c.y, 1, 2);
  KernelRunner r(op);
  int64_t elements = 0;
  for (auto _ : state) elements = Must(r.Run({x, y})).NumElements();
  state.counters["Melem/s"] = benchmark::Counter(static_cast<double>(elements),
                                                 benchmark::Counter::kIsIterationInvariantRate,
                                                 benchmark::Counter::kIs1000);
}
BENCHMARK(BM_BroadcastBinary)
    ->ArgsProduct({{0, 1, 2, 3, 4, 5}, {0, 1}})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// BroadcastTo (range 0 = 0) and Tile (1) as the gradients of means and of
// spatial reductions repeat a statistic: [128,1,1,64] over 16x16 positions
// (range 1 = 0), and a [1,64] row 4096 times (1).
void BM_RepeatStatistic(benchmark::State& state) {
  const bool tile = state.range(0) == 1, spatial = state.range(1) == 0;
  const Tensor x =
      RandomTensor(spatial ? TensorShape({128, 1, 1, 64}) : TensorShape({1, 64}), 1, 3);
  const Tensor to = tile ? (spatial ? Ints({1, 16, 16, 1}) : Ints({4096, 1}))
                         : (spatial ? Ints({128, 16, 16, 64}) : Ints({4096, 64}));
  state.SetLabel(tile ? (spatial ? "Tile [128,1,1,64] by [1,16,16,1]" : "Tile [1,64] by [4096,1]")
                      : (spatial ? "BroadcastTo [128,1,1,64] to [128,16,16,64]"
                                 : "BroadcastTo [1,64] to [4096,64]"));
  KernelRunner r(tile ? "Tile" : "BroadcastTo");
  for (auto _ : state) benchmark::DoNotOptimize(Must(r.Run({x, to})));
}
BENCHMARK(BM_RepeatStatistic)
    ->ArgsProduct({{0, 1}, {0, 1}})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

BENCHMARK(BM_MatMulKernel)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_CblasSgemm)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();

// One kernel of the step, with its time accumulated per name.
class Step {
 public:
  Tensor Run(const std::string& name, KernelRunner& k, const std::vector<Tensor>& in, int i = 0) {
    const auto start = std::chrono::steady_clock::now();
    Tensor out = Must(k.Run(in), i);
    seconds_[name] +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
  }
  std::vector<Tensor> RunAll(const std::string& name, KernelRunner& k,
                             const std::vector<Tensor>& in) {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<std::vector<Tensor>> out = k.Run(in);
    Must(out);
    seconds_[name] +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return *out;
  }
  const std::map<std::string, double>& seconds() const { return seconds_; }

 private:
  std::map<std::string, double> seconds_;
};

// state.range(0): 1 = float convolutions on oneDNN (the default), 0 = the
// im2col + GEMM path.
void BM_Cifar10TrainingStep(benchmark::State& state) {
  UseDnnlConvolutions() = state.range(0) == 1;
  constexpr int64_t kBatch = 128;
  const Tensor images = RandomTensor({kBatch, 24, 24, 3}, 1, 3);
  Tensor labels(DT_INT32, TensorShape({kBatch}));
  for (int i = 0; i < kBatch; ++i) labels.data<int32_t>()[i] = i % 10;
  Tensor w1 = RandomTensor({5, 5, 3, 64}, 5e-2f, 4), b1 = Filled<float>({64}, 0);
  Tensor w2 = RandomTensor({5, 5, 64, 64}, 5e-2f, 5), b2 = Filled<float>({64}, 0.1f);
  Tensor w3 = RandomTensor({2304, 384}, 4e-2f, 6), b3 = Filled<float>({384}, 0.1f);
  Tensor w4 = RandomTensor({384, 192}, 4e-2f, 7), b4 = Filled<float>({192}, 0.1f);
  Tensor w5 = RandomTensor({192, 10}, 1 / 192.0f, 8), b5 = Filled<float>({10}, 0);
  const Tensor lr = Scalar<float>(0.1f);

  KernelRunner conv("Conv2D"), bias("BiasAdd"), relu("Relu"), pool("MaxPool"), lrn("LRN"),
      reshape("Reshape"), matmul("MatMul"), xent("SparseSoftmaxCrossEntropyWithLogits");
  conv.Attr("strides", {1, 1, 1, 1}).Attr("padding", "SAME");
  pool.Attr("ksize", {1, 3, 3, 1}).Attr("strides", {1, 2, 2, 1}).Attr("padding", "SAME");
  lrn.Attr("depth_radius", int64_t{4})
      .Attr("bias", 1.0f)
      .Attr("alpha", 0.001f / 9)
      .Attr("beta", 0.75f);
  KernelRunner conv_in("Conv2DBackpropInput"), conv_filter("Conv2DBackpropFilter"),
      pool_grad("MaxPoolGrad"), lrn_grad("LRNGrad"), relu_grad("ReluGrad"),
      bias_grad("BiasAddGrad"), mm_ta("MatMul"), mm_tb("MatMul"), apply("ApplyGradientDescent");
  for (KernelRunner* k : {&conv_in, &conv_filter})
    k->Attr("strides", {1, 1, 1, 1}).Attr("padding", "SAME");
  pool_grad.Attr("ksize", {1, 3, 3, 1}).Attr("strides", {1, 2, 2, 1}).Attr("padding", "SAME");
  lrn_grad.Attr("depth_radius", int64_t{4})
      .Attr("bias", 1.0f)
      .Attr("alpha", 0.001f / 9)
      .Attr("beta", 0.75f);
  mm_ta.Attr("transpose_a", true);
  mm_tb.Attr("transpose_b", true);

  Step step;
  for (auto _ : state) {
    // Forward (cifar10.inference): conv1, pool1, norm1, conv2, norm2, pool2, local3, local4,
    // logits.
    const Tensor c1 = step.Run("conv", conv, {images, w1});
    const Tensor r1 = step.Run("relu", relu, {step.Run("bias", bias, {c1, b1})});
    const Tensor p1 = step.Run("pool", pool, {r1});
    const Tensor n1 = step.Run("lrn", lrn, {p1});
    const Tensor c2 = step.Run("conv", conv, {n1, w2});
    const Tensor r2 = step.Run("relu", relu, {step.Run("bias", bias, {c2, b2})});
    const Tensor n2 = step.Run("lrn", lrn, {r2});
    const Tensor p2 = step.Run("pool", pool, {n2});
    const Tensor flat = step.Run("reshape", reshape, {p2, Ints({kBatch, -1})});
    const Tensor r3 = step.Run(
        "relu", relu, {step.Run("bias", bias, {step.Run("matmul", matmul, {flat, w3}), b3})});
    const Tensor r4 = step.Run(
        "relu", relu, {step.Run("bias", bias, {step.Run("matmul", matmul, {r3, w4}), b4})});
    const Tensor logits = step.Run("bias", bias, {step.Run("matmul", matmul, {r4, w5}), b5});
    const std::vector<Tensor> loss = step.RunAll("xent", xent, {logits, labels});
    // Backward.
    const Tensor& dlogits = loss[1];
    const Tensor db5 = step.Run("bias_grad", bias_grad, {dlogits});
    const Tensor dw5 = step.Run("matmul", mm_ta, {r4, dlogits});
    const Tensor dr4 = step.Run("matmul", mm_tb, {dlogits, w5});
    const Tensor dz4 = step.Run("relu_grad", relu_grad, {dr4, r4});
    const Tensor db4 = step.Run("bias_grad", bias_grad, {dz4});
    const Tensor dw4 = step.Run("matmul", mm_ta, {r3, dz4});
    const Tensor dr3 = step.Run("matmul", mm_tb, {dz4, w4});
    const Tensor dz3 = step.Run("relu_grad", relu_grad, {dr3, r3});
    const Tensor db3 = step.Run("bias_grad", bias_grad, {dz3});
    const Tensor dw3 = step.Run("matmul", mm_ta, {flat, dz3});
    const Tensor dflat = step.Run("matmul", mm_tb, {dz3, w3});
    const Tensor dp2 = step.Run("reshape", reshape, {dflat, Ints({kBatch, 6, 6, 64})});
    const Tensor dn2 = step.Run("pool_grad", pool_grad, {n2, p2, dp2});
    const Tensor dr2 = step.Run("lrn_grad", lrn_grad, {dn2, r2, n2});
    const Tensor dz2 = step.Run("relu_grad", relu_grad, {dr2, r2});
    const Tensor db2 = step.Run("bias_grad", bias_grad, {dz2});
    const Tensor dw2 = step.Run("conv_filter", conv_filter, {n1, Ints({5, 5, 64, 64}), dz2});
    const Tensor dn1 = step.Run("conv_input", conv_in, {Ints({kBatch, 12, 12, 64}), w2, dz2});
    const Tensor dp1 = step.Run("lrn_grad", lrn_grad, {dn1, p1, n1});
    const Tensor dr1 = step.Run("pool_grad", pool_grad, {r1, p1, dp1});
    const Tensor dz1 = step.Run("relu_grad", relu_grad, {dr1, r1});
    const Tensor db1 = step.Run("bias_grad", bias_grad, {dz1});
    const Tensor dw1 = step.Run("conv_filter", conv_filter, {images, Ints({5, 5, 3, 64}), dz1});
    // SGD updates.
    const std::vector<std::pair<Tensor*, const Tensor*>> updates = {
        {&w1, &dw1}, {&b1, &db1}, {&w2, &dw2}, {&b2, &db2}, {&w3, &dw3},
        {&b3, &db3}, {&w4, &dw4}, {&b4, &db4}, {&w5, &dw5}, {&b5, &db5}};
    for (const auto& [var, grad] : updates) *var = step.Run("apply", apply, {*var, lr, *grad});
  }
  for (const auto& [name, seconds] : step.seconds()) {
    state.counters[name + "_ms"] = benchmark::Counter(seconds * 1e3 / state.iterations());
  }
  state.counters["images/s"] =
      benchmark::Counter(kBatch, benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(BM_Cifar10TrainingStep)
    ->ArgName("onednn")
    ->Arg(1)
    ->Arg(0)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(5);

}  // namespace
}  // namespace towerflow

BENCHMARK_MAIN();
