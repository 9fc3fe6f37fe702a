// Real TensorFlow-written graphs run end to end on the CPU kernels
// (../shared/reference/tf/graphs/; skipped when the reference is absent).
#include <cmath>
#include <random>

#include "framework/tensor_views.h"
#include "gmock/gmock.h"
#include "graph/graph_io.h"
#include "gtest/gtest.h"
#include "proto/summary.pb.h"
#include "runtime/session.h"
#include "testing/session_testing.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

// The Deep MNIST forward pass (reshape to 28x28x1, two 5x5 SAME
// convolutions with bias and ReLU each followed by a 2x2/2 max-pool, fc
// 3136->1024 with ReLU, fc 1024->10) in plain loops, as an independent
// reference for the kernels. Weights: conv1 w/b, conv2 w/b, fc1 w/b, fc2 w/b.
std::vector<float> ReferenceDeepMnistLogits(const Tensor& x, const std::vector<Tensor>& p) {
  const int64_t batch = x.dim_size(0);
  std::vector<float> a(x.data<float>(), x.data<float>() + x.NumElements());
  int64_t size = 28, channels = 1;
  for (int layer = 0; layer < 2; ++layer) {
    const Tensor& w = p[2 * layer];
    const Tensor& b = p[2 * layer + 1];
    const int64_t out_c = w.dim_size(3);
    std::vector<float> conv(batch * size * size * out_c);
    const auto W = w.tensor<float, 4>();
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t h = 0; h < size; ++h)
        for (int64_t v = 0; v < size; ++v)
          for (int64_t o = 0; o < out_c; ++o) {
            double acc = b.data<float>()[o];
            for (int64_t kh = 0; kh < 5; ++kh)
              for (int64_t kw = 0; kw < 5; ++kw) {
                const int64_t ih = h + kh - 2, iw = v + kw - 2;  // SAME: 2 before
                if (ih < 0 || ih >= size || iw < 0 || iw >= size) continue;
                for (int64_t c = 0; c < channels; ++c) {
                  acc += a[((n * size + ih) * size + iw) * channels + c] * W(kh, kw, c, o);
                }
              }
            conv[((n * size + h) * size + v) * out_c + o] = std::max<double>(acc, 0);
          }
    const int64_t half = size / 2;
    a.assign(batch * half * half * out_c, 0);
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t h = 0; h < half; ++h)
        for (int64_t v = 0; v < half; ++v)
          for (int64_t o = 0; o < out_c; ++o) {
            float m = -INFINITY;
            for (int dh = 0; dh < 2; ++dh)
              for (int dv = 0; dv < 2; ++dv) {
                m = std::max(m, conv[((n * size + 2 * h + dh) * size + 2 * v + dv) * out_c + o]);
              }
            a[((n * half + h) * half + v) * out_c + o] = m;
          }
    size = half;
    channels = out_c;
  }
  for (int layer = 2; layer < 4; ++layer) {
    const auto W = p[2 * layer].matrix<float>();
    const float* b = p[2 * layer + 1].data<float>();
    const int64_t in = W.dimension(0), out = W.dimension(1);
    std::vector<float> next(batch * out);
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t o = 0; o < out; ++o) {
        double acc = b[o];
        for (int64_t i = 0; i < in; ++i) acc += a[n * in + i] * W(i, o);
        next[n * out + o] = layer == 2 ? std::max<double>(acc, 0) : acc;
      }
    a = std::move(next);
  }
  return a;
}

// The Deep MNIST tutorial's graph before training: initialise every
// variable through its Assign, then feed a batch of MNIST-like images (a
// fifth of the pixels lit, the rest 0). The graph's loss (sparse softmax
// cross-entropy through TF's weights/Select/Mean pipeline) equals the
// cross-entropy computed here from the fetched logits and is finite.
//
// It is not near ln 10: with this graph's initialisation (weights
// N(0, 0.1) truncated, biases 0.1) the pre-activations grow through the
// wide layers — fc1 sums 3136 inputs — so the logits have a standard
// deviation near 10 on MNIST-like input and the initial loss is about 10.
TEST(TfGraphsTest, DeepMnistInitialLossIsTheLogitsCrossEntropy) {
  std::string path;
  TW_SKIP_WITHOUT_REFERENCE(path, "tf/graphs/mnist_deep_cnn_before.pbtxt");
  TW_ASSERT_OK_AND_ASSIGN(GraphDef g, ReadGraphDef(path));
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> s, MakeSession(g));
  std::vector<std::string> assigns;
  for (const char* layer : {"conv1", "conv2", "fc1", "fc2"}) {
    assigns.push_back(absl::StrCat(layer, "/Variable/Assign"));
    assigns.push_back(absl::StrCat(layer, "/Variable_1/Assign"));
  }
  TW_ASSERT_OK(s->Run({}, {}, assigns, nullptr));
  constexpr int kBatch = 16;
  Tensor x(DT_FLOAT, TensorShape({kBatch, 784}));
  Tensor y(DT_INT64, TensorShape({kBatch}));
  std::mt19937 gen(42);
  std::uniform_real_distribution<float> u(0, 1);
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    x.data<float>()[i] = u(gen) < 0.2f ? 0.5f + 0.5f * u(gen) : 0.0f;
  }
  for (int i = 0; i < kBatch; ++i) y.data<int64_t>()[i] = i % 10;
  std::vector<Tensor> out;
  TW_ASSERT_OK(s->Run({{"Placeholder", x}, {"Placeholder_1", y}}, {"Mean", "fc2/add"}, {}, &out));
  ASSERT_EQ(out[0].shape(), TensorShape({}));
  ASSERT_EQ(out[1].shape(), TensorShape({kBatch, 10}));
  const float loss = *out[0].data<float>();
  double want = 0;
  const auto logits = out[1].matrix<float>();
  for (int i = 0; i < kBatch; ++i) {
    double max = logits(i, 0), sum = 0;
    for (int j = 1; j < 10; ++j) max = std::max<double>(max, logits(i, j));
    for (int j = 0; j < 10; ++j) sum += std::exp(logits(i, j) - max);
    want += (std::log(sum) + max - logits(i, y.data<int64_t>()[i])) / kBatch;
  }
  EXPECT_NEAR(loss, want, 1e-4);
  EXPECT_TRUE(std::isfinite(loss));
  EXPECT_GT(loss, 0.0f);
  // The logits themselves against plain loops over the same weights.
  std::vector<std::string> params;
  for (const char* layer : {"conv1", "conv2", "fc1", "fc2"}) {
    params.push_back(absl::StrCat(layer, "/Variable/read"));
    params.push_back(absl::StrCat(layer, "/Variable_1/read"));
  }
  std::vector<Tensor> weights;
  TW_ASSERT_OK(s->Run({}, params, {}, &weights));
  const std::vector<float> reference = ReferenceDeepMnistLogits(x, weights);
  for (int64_t i = 0; i < out[1].NumElements(); ++i) {
    ASSERT_NEAR(out[1].data<float>()[i], reference[i], 1e-3f * (1 + std::abs(reference[i])));
  }
}

// The same model with TF's gradient graph and AdamOptimizer (ApplyAdam,
// Conv2DBackpropInput/Filter, MaxPoolGrad, ReluGrad, BroadcastGradientArgs,
// ShapeN, Tile, PreventGradient...): training on one fixed batch must
// lower the loss.
TEST(TfGraphsTest, DeepMnistAdamLowersTheLoss) {
  std::string path;
  TW_SKIP_WITHOUT_REFERENCE(path, "tf/graphs/mnist_deep_cnn_after.pbtxt");
  TW_ASSERT_OK_AND_ASSIGN(GraphDef g, ReadGraphDef(path));
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> s, MakeSession(g));
  std::vector<std::string> assigns;
  for (const NodeDef& n : g.node()) {
    // Initialisers; adam_optimizer/Adam/Assign* update the beta powers.
    if (n.op() == "Assign" && n.name().rfind("adam_optimizer/Adam/", 0) != 0) {
      assigns.push_back(n.name());
    }
  }
  ASSERT_EQ(assigns.size(), 26u);  // 8 variables, 16 Adam slots, 2 beta powers
  TW_ASSERT_OK(s->Run({}, {}, assigns, nullptr));
  constexpr int kBatch = 8;
  Tensor x(DT_FLOAT, TensorShape({kBatch, 784}));
  Tensor y(DT_INT64, TensorShape({kBatch}));
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> u(0, 1);
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    x.data<float>()[i] = u(gen) < 0.2f ? 0.5f + 0.5f * u(gen) : 0.0f;
  }
  for (int i = 0; i < kBatch; ++i) y.data<int64_t>()[i] = i % 10;
  const std::vector<std::pair<std::string, Tensor>> feeds = {{"Placeholder", x},
                                                             {"Placeholder_1", y}};
  std::vector<Tensor> out;
  TW_ASSERT_OK(s->Run(feeds, {"Mean"}, {}, &out));
  const float before = *out[0].data<float>();
  for (int step = 0; step < 5; ++step) {
    TW_ASSERT_OK(s->Run(feeds, {}, {"adam_optimizer/Adam"}, nullptr));
  }
  TW_ASSERT_OK(s->Run(feeds, {"Mean"}, {}, &out));
  const float after = *out[0].data<float>();
  EXPECT_TRUE(std::isfinite(after));
  EXPECT_LT(after, 0.5f * before) << "before " << before << ", after " << after;
}

// The VR gesture softmax regression: weights and biases start at zero, so
// softmax is [0.5, 0.5] and the cost -sum(y log p) of two one-hot rows is
// exactly 2 ln 2; one GradientDescent step (learning rate 0.01) moves each
// weight by 0.01 * 0.5 = 0.005 towards its row's label.
TEST(TfGraphsTest, VrGestureSoftmaxRegressionStep) {
  std::string path;
  TW_SKIP_WITHOUT_REFERENCE(path, "tf/graphs/vr_gesture_softmax_regression.pbtxt");
  TW_ASSERT_OK_AND_ASSIGN(GraphDef g, ReadGraphDef(path));
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> s, MakeSession(g));
  TW_ASSERT_OK(s->Run({}, {}, {"init"}, nullptr));
  Tensor x(DT_FLOAT, TensorShape({2, 784}));
  x.flat<float>().setZero();
  x.matrix<float>()(0, 0) = 1;  // row 0 lights pixel 0, label 0
  x.matrix<float>()(1, 1) = 1;  // row 1 lights pixel 1, label 1
  Tensor labels(DT_FLOAT, TensorShape({2, 2}));
  labels.flat<float>().setValues({1, 0, 0, 1});
  const std::vector<std::pair<std::string, Tensor>> feeds = {{"inp", x}, {"shape", labels}};
  std::vector<Tensor> out;
  TW_ASSERT_OK(s->Run(feeds, {"cost_function/Neg", "Mean", "Merge/MergeSummary"}, {}, &out));
  EXPECT_FLOAT_EQ(*out[0].data<float>(), 2 * std::log(2.0f));
  // argmax of [0.5, 0.5] is 0: row 0 right, row 1 wrong.
  EXPECT_FLOAT_EQ(*out[1].data<float>(), 0.5f);
  Summary summary;
  ASSERT_TRUE(summary.ParseFromString(*out[2].data<std::string>()));
  std::vector<std::string> tags;
  for (const auto& v : summary.value()) tags.push_back(v.tag());
  EXPECT_THAT(
      tags, ::testing::UnorderedElementsAre("weights_1", "biases", "cost_function/cost_function"));

  TW_ASSERT_OK(s->Run(feeds, {}, {"train/GradientDescent"}, nullptr));
  TW_ASSERT_OK(s->Run({}, {"weights/read", "Variable/read"}, {}, &out));
  const auto w = out[0].matrix<float>();
  EXPECT_FLOAT_EQ(w(0, 0), 0.005f);
  EXPECT_FLOAT_EQ(w(0, 1), -0.005f);
  EXPECT_FLOAT_EQ(w(1, 0), -0.005f);
  EXPECT_FLOAT_EQ(w(1, 1), 0.005f);
  EXPECT_FLOAT_EQ(w(2, 0), 0.0f);
  EXPECT_THAT(out[1].span<float>(), ::testing::Each(::testing::FloatEq(0.0f)));
}

// Random ops in a Session draw fresh numbers each run from one stream.
TEST(TfGraphsTest, DeepMnistInitialisersDrawFreshTruncatedNormals) {
  std::string path;
  TW_SKIP_WITHOUT_REFERENCE(path, "tf/graphs/mnist_deep_cnn_before.pbtxt");
  TW_ASSERT_OK_AND_ASSIGN(GraphDef g, ReadGraphDef(path));
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> s, MakeSession(g));
  std::vector<Tensor> a, b;
  TW_ASSERT_OK(s->Run({}, {"conv1/Variable/Assign"}, {}, &a));
  TW_ASSERT_OK(s->Run({}, {"conv1/Variable/Assign"}, {}, &b));
  ASSERT_EQ(a[0].shape(), TensorShape({5, 5, 1, 32}));
  EXPECT_NE(a[0].data<float>()[0], b[0].data<float>()[0]);
  for (float v : a[0].span<float>()) ASSERT_LE(std::abs(v), 0.2f + 1e-6f);  // stddev 0.1, |z| <= 2
}

}  // namespace
}  // namespace towerflow
