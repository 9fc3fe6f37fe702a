// The scan kernels (scan_ops.cc): Cumsum, Cumprod and CumulativeLogsumexp,
// with TensorFlow's values.
#include <cmath>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::testing::HasSubstr;

Tensor Iota(const TensorShape& shape) {
  Tensor t(DT_FLOAT, shape);
  for (int64_t i = 0; i < t.NumElements(); ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}

TEST(ScanOpsTest, CumsumAndCumprodFlags) {
  // TF's documented examples on [a, b, c] = [1, 2, 3] (and 2, 3, 4 for products).
  const auto scan = [](const char* op, bool exclusive, bool reverse, const Tensor& x, int axis) {
    KernelRunner r(op);
    r.Attr("exclusive", exclusive).Attr("reverse", reverse);
    return RunOk(r, {x, Scalar<int32_t>(axis)});
  };
  const Tensor v = Literal<float>({3}, {1, 2, 3});
  EXPECT_THAT(scan("Cumsum", false, false, v, 0), TensorIs<float>({3}, {1, 3, 6}));
  EXPECT_THAT(scan("Cumsum", true, false, v, 0), TensorIs<float>({3}, {0, 1, 3}));
  EXPECT_THAT(scan("Cumsum", false, true, v, 0), TensorIs<float>({3}, {6, 5, 3}));
  EXPECT_THAT(scan("Cumsum", true, true, v, 0), TensorIs<float>({3}, {5, 3, 0}));
  const Tensor p = Literal<float>({3}, {2, 3, 4});
  EXPECT_THAT(scan("Cumprod", false, false, p, 0), TensorIs<float>({3}, {2, 6, 24}));
  EXPECT_THAT(scan("Cumprod", true, false, p, 0), TensorIs<float>({3}, {1, 2, 6}));
  EXPECT_THAT(scan("Cumprod", false, true, p, 0), TensorIs<float>({3}, {24, 12, 4}));
  EXPECT_THAT(scan("Cumprod", true, true, p, 0), TensorIs<float>({3}, {12, 4, 1}));
  // A middle axis of a [2, 3, 2] tensor, and a negative axis.
  const Tensor x = Iota({2, 3, 2});
  EXPECT_THAT(scan("Cumsum", false, false, x, 1),
              TensorIs<float>({2, 3, 2}, {0, 1, 2, 4, 6, 9, 6, 7, 14, 16, 24, 27}));
  EXPECT_THAT(scan("Cumsum", false, false, x, -1),
              TensorIs<float>({2, 3, 2}, {0, 1, 2, 5, 4, 9, 6, 13, 8, 17, 10, 21}));
  KernelRunner ints("Cumprod");
  EXPECT_THAT(RunOk(ints, {Literal<int64_t>({2, 2}, {1, 2, 3, 4}), Scalar<int32_t>(0)}),
              TensorIs<int64_t>({2, 2}, {1, 2, 3, 8}));
  KernelRunner bad("Cumsum");
  EXPECT_THAT(bad.Run({v, Scalar<int32_t>(1)}).status().message(),
              HasSubstr("axis 1 is out of range [-1, 1)"));
  EXPECT_THAT(bad.Run({Scalar<float>(1), Scalar<int32_t>(0)}).status().message(),
              HasSubstr("rank >= 1"));
  EXPECT_THAT(RunOk(bad, {Iota({0, 2}), Scalar<int32_t>(0)}), TensorIs<float>({0, 2}, {}));
}

TEST(ScanOpsTest, CumulativeLogsumexpAsTensorFlow) {
  // TF 2.21's values (tf.raw_ops.CumulativeLogsumexp, axis 1), -1e30 and
  // -inf included: nothing yet is -inf, exactly.
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor x = Literal<float>({2, 4}, {1, 2, -1, 0.5f, -1e30f, 3, -inf, 2});
  const auto scan = [&](bool exclusive, bool reverse) {
    KernelRunner r("CumulativeLogsumexp");
    r.Attr("exclusive", exclusive).Attr("reverse", reverse);
    return RunOk(r, {x, Scalar<int32_t>(1)});
  };
  EXPECT_THAT(scan(false, false),
              TensorNear(Literal<float>({2, 4}, {1, 2.3132617f, 2.3490124f, 2.495182f, -1e30f, 3, 3,
                                                 3.3132617f}),
                         1e-6, 1e-6));
  EXPECT_THAT(scan(false, true),
              TensorNear(Literal<float>({2, 4}, {2.495182f, 2.2413113f, 0.70141327f, 0.5f,
                                                 3.3132617f, 3.3132617f, 2, 2}),
                         1e-6, 1e-6));
  EXPECT_THAT(
      scan(true, false),
      TensorNear(Literal<float>({2, 4}, {-inf, 1, 2.3132617f, 2.3490124f, -inf, -1e30f, 3, 3}),
                 1e-6, 1e-6));
  EXPECT_THAT(scan(true, true), TensorNear(Literal<float>({2, 4}, {2.2413113f, 0.70141327f, 0.5f,
                                                                   -inf, 3.3132617f, 2, 2, -inf}),
                                           1e-6, 1e-6));
  KernelRunner d("CumulativeLogsumexp");
  EXPECT_THAT(RunOk(d, {Literal<double>({2, 2}, {1, 2, 3, 4}), Scalar<int32_t>(0)}),
              TensorNear(Literal<double>({2, 2}, {1, 2, 3.1269280110429727, 4.126928011042972}),
                         1e-12, 1e-12));
}

}  // namespace
}  // namespace towerflow
