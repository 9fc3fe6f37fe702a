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

Tensor Reduce(const char* op, const Tensor& x, const Tensor& axes, bool keep_dims = false) {
  KernelRunner r(op);
  r.Attr("keep_dims", keep_dims);
  return RunOk(r, {x, axes});
}

// x = [[1, 1, 1], [1, 1, 1]] from tf.reduce_sum's documentation.
TEST(ReductionTest, TensorFlowDocumentedSums) {
  const Tensor x = Filled<int32_t>({2, 3}, 1);
  EXPECT_THAT(Reduce("Sum", x, Literal<int32_t>({2}, {0, 1})), TensorIs<int32_t>({}, {6}));
  EXPECT_THAT(Reduce("Sum", x, Scalar<int32_t>(0)), TensorIs<int32_t>({3}, {2, 2, 2}));
  EXPECT_THAT(Reduce("Sum", x, Scalar<int32_t>(1)), TensorIs<int32_t>({2}, {3, 3}));
  EXPECT_THAT(Reduce("Sum", x, Scalar<int32_t>(1), true), TensorIs<int32_t>({2, 1}, {3, 3}));
  EXPECT_THAT(Reduce("Sum", x, Literal<int64_t>({1}, {-1})), TensorIs<int32_t>({2}, {3, 3}));
}

TEST(ReductionTest, MeanMaxMinProd) {
  const Tensor x = Literal<float>({2, 2}, {1, 2, 3, 4});
  EXPECT_THAT(Reduce("Mean", x, Scalar<int32_t>(0)), TensorIs<float>({2}, {2, 3}));
  EXPECT_THAT(Reduce("Mean", x, Literal<int32_t>({2}, {0, 1})), TensorIs<float>({}, {2.5f}));
  EXPECT_THAT(Reduce("Max", x, Scalar<int32_t>(1)), TensorIs<float>({2}, {2, 4}));
  EXPECT_THAT(Reduce("Min", x, Scalar<int32_t>(0)), TensorIs<float>({2}, {1, 2}));
  EXPECT_THAT(Reduce("Prod", x, Scalar<int32_t>(1)), TensorIs<float>({2}, {2, 12}));
  // NaN wins over infinities, as TF's tf.reduce_max([nan, inf]).
  const Tensor edges = Literal<float>({3}, {NAN, std::numeric_limits<float>::infinity(), 1});
  EXPECT_TRUE(std::isnan(Reduce("Max", edges, Scalar<int32_t>(0)).data<float>()[0]));
  EXPECT_TRUE(std::isnan(Reduce("Min", edges, Scalar<int32_t>(0)).data<float>()[0]));
  EXPECT_THAT(Reduce("Mean", Literal<int32_t>({2}, {1, 2}), Scalar<int32_t>(0)),
              TensorIs<int32_t>({}, {1}));
}

// Reducing over no axis (the gradient of an Add of same-shape tensors sums
// over BroadcastGradientArgs' empty list), or over size-1 axes only, gives
// the input itself in the output's shape, without a copy.
TEST(ReductionTest, NothingReducedForwardsTheInput) {
  const Tensor x = Literal<float>({2, 1, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor none = Literal<int32_t>({0}, {});
  for (const char* op : {"Sum", "Mean", "Max", "Prod"}) {
    const Tensor same = Reduce(op, x, none);
    EXPECT_THAT(same, TensorIs<float>({2, 1, 3}, {1, 2, 3, 4, 5, 6})) << op;
    EXPECT_TRUE(same.SharesBufferWith(x)) << op;
    const Tensor squeezed = Reduce(op, x, Scalar<int32_t>(1));
    EXPECT_THAT(squeezed, TensorIs<float>({2, 3}, {1, 2, 3, 4, 5, 6})) << op;
    EXPECT_TRUE(squeezed.SharesBufferWith(x)) << op;
    EXPECT_THAT(Reduce(op, x, Scalar<int32_t>(1), true),
                TensorIs<float>({2, 1, 3}, {1, 2, 3, 4, 5, 6}))
        << op;
  }
  EXPECT_THAT(Reduce("Sum", Filled<float>({0, 3}, 1), none), TensorIs<float>({0, 3}, {}));
}

TEST(ReductionTest, MiddleAndAlternatingAxes) {
  std::vector<float> v(2 * 3 * 4 * 5);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  const Tensor x = Literal<float>({2, 3, 4, 5}, v);
  // Middle axis 1: out[a, c, d] = sum_b x[a, b, c, d].
  const Tensor mid = Reduce("Sum", x, Scalar<int32_t>(1));
  ASSERT_EQ(mid.shape(), TensorShape({2, 4, 5}));
  EXPECT_EQ(mid.data<float>()[0], 0 + 20 + 40);
  // Axes 0 and 2 (alternating pattern, shuffled path).
  const Tensor alt = Reduce("Sum", x, Literal<int32_t>({2}, {0, 2}));
  ASSERT_EQ(alt.shape(), TensorShape({3, 5}));
  float want = 0;
  for (int a = 0; a < 2; ++a) {
    for (int c = 0; c < 4; ++c) want += v[((a * 3 + 1) * 4 + c) * 5 + 2];
  }
  EXPECT_EQ(alt.data<float>()[1 * 5 + 2], want);
}

// Ten alternating reduced/kept dimensions: past Eigen's shuffle ranks.
TEST(ReductionTest, ManyAlternatingAxes) {
  const std::vector<int64_t> dims = {2, 3, 2, 3, 2, 3, 2, 3, 2, 3};
  std::vector<float> v(7776);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 13);
  const Tensor out =
      Reduce("Max", Literal<float>(TensorShape(dims), v), Literal<int32_t>({5}, {0, 2, 4, 6, 8}));
  ASSERT_EQ(out.shape(), TensorShape({3, 3, 3, 3, 3}));
  std::vector<float> want(243, -1);
  for (int64_t k = 0; k < 7776; ++k) {
    int64_t rest = k, o = 0, scale = 1;
    for (int d = 9; d >= 0; --d) {
      const int64_t c = rest % dims[d];
      rest /= dims[d];
      if (d % 2 == 1) {
        o += c * scale;
        scale *= 3;
      }
    }
    want[o] = std::max(want[o], v[k]);
  }
  EXPECT_EQ(Values<float>(out), want);
}

TEST(ReductionTest, EmptyInputsGiveIdentities) {
  const Tensor e = Literal<float>({0, 2}, {});
  EXPECT_THAT(Reduce("Sum", e, Scalar<int32_t>(0)), TensorIs<float>({2}, {0, 0}));
  EXPECT_THAT(Reduce("Prod", e, Scalar<int32_t>(0)), TensorIs<float>({2}, {1, 1}));
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_THAT(Reduce("Max", e, Scalar<int32_t>(0)), TensorIs<float>({2}, {-inf, -inf}));
  EXPECT_THAT(Reduce("Min", e, Scalar<int32_t>(0)), TensorIs<float>({2}, {inf, inf}));
  const Tensor mean = Reduce("Mean", e, Scalar<int32_t>(0));
  EXPECT_TRUE(std::isnan(mean.data<float>()[0]));
  EXPECT_THAT(Reduce("Sum", e, Scalar<int32_t>(1)), TensorIs<float>({0}, {}));
  EXPECT_THAT(Reduce("Mean", Literal<int32_t>({0}, {}), Scalar<int32_t>(0)),
              TensorIs<int32_t>({}, {0}));
}

TEST(ReductionTest, AllAndAny) {
  const Tensor b = Literal<bool>({2, 2}, {true, false, true, true});
  EXPECT_THAT(Reduce("All", b, Scalar<int32_t>(1)), TensorIs<bool>({2}, {false, true}));
  EXPECT_THAT(Reduce("Any", b, Scalar<int32_t>(0)), TensorIs<bool>({2}, {true, true}));
}

TEST(ReductionTest, BadAxesAreInvalidArgument) {
  KernelRunner r("Sum");
  auto out = r.Run({Filled<float>({2, 3}, 1), Scalar<int32_t>(2)});
  EXPECT_THAT(out.status().message(), HasSubstr("Invalid reduction dimension (2"));
  EXPECT_THAT(r.Run({Filled<float>({2, 3}, 1), Scalar<int32_t>(-3)}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Invalid reduction dimension (-3 for input with 2 dimension(s)"));
  EXPECT_THAT(r.Run({Filled<float>({2, 3}, 1), Filled<int32_t>({1, 1}, 0)}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "reduction indices must be a scalar or a vector, got shape [1,1]"));
}

TEST(ArgMaxTest, FirstExtremeAlongAxis) {
  const Tensor x = Literal<float>({2, 3}, {1, 5, 5, 7, 0, 7});
  KernelRunner r("ArgMax");
  EXPECT_THAT(RunOk(r, {x, Scalar<int32_t>(1)}), TensorIs<int64_t>({2}, {1, 0}));
  EXPECT_THAT(RunOk(r, {x, Scalar<int32_t>(0)}), TensorIs<int64_t>({3}, {1, 0, 1}));
  KernelRunner m("ArgMin");
  m.Attr("output_type", DT_INT32);
  EXPECT_THAT(RunOk(m, {x, Scalar<int64_t>(-1)}), TensorIs<int32_t>({2}, {0, 1}));
  EXPECT_THAT(r.Run({Literal<float>({0, 3}, {}), Scalar<int32_t>(0)}).status().message(),
              HasSubstr("Reduction axis 0 is empty in shape [0,3]"));
  EXPECT_THAT(r.Run({x, Scalar<int32_t>(2)}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Expected dimension in the range [-2, 2), but got 2"));
  EXPECT_THAT(r.Run({Scalar<float>(1), Scalar<int32_t>(0)}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Expected dimension in the range [0, 0), but got 0"));
}

// TF 2.21's values (tf.raw_ops.EuclideanNorm): nothing reduced gives |x|,
// integers truncate the root, complex numbers give a real-valued result.
TEST(ReductionTest, EuclideanNormMatchesTensorFlow) {
  KernelRunner norm("EuclideanNorm");
  const Tensor x = Literal<float>({2, 3}, {1, -2, 2, 0.5, 0, -0.5});
  EXPECT_THAT(RunOk(norm, {x, Literal<int32_t>({1}, {1})}),
              TensorNear<float>({2}, {3, 0.7071067690849304f}, 1e-7));
  EXPECT_THAT(RunOk(norm, {Literal<float>({2, 2}, {-3, 4, 1, -1}), Literal<int32_t>({0}, {})}),
              TensorIs<float>({2, 2}, {3, 4, 1, 1}));
  EXPECT_THAT(RunOk(norm, {Literal<int32_t>({2, 2}, {3, 4, 1, 1}), Scalar<int32_t>(1)}),
              TensorIs<int32_t>({2}, {5, 1}));
  EXPECT_THAT(RunOk(norm, {Literal<float>({0, 2}, {}), Scalar<int32_t>(0)}),
              TensorIs<float>({2}, {0, 0}));
  // uint8 squares and sums wrap before the root, as TF's: 20^2 = 144, 144 + 144 = 32.
  EXPECT_THAT(
      RunOk(norm, {Literal<uint8_t>({4, 2}, {20, 20, 3, 4, 255, 0, 16, 0}), Scalar<int32_t>(1)}),
      TensorIs<uint8_t>({4}, {5, 5, 1, 0}));
  EXPECT_THAT(RunOk(norm, {Literal<uint8_t>({2, 2}, {20, 20, 3, 4}), Literal<int32_t>({0}, {})}),
              TensorIs<uint8_t>({2, 2}, {12, 12, 3, 4}));
  KernelRunner kept("EuclideanNorm");
  kept.Attr("keep_dims", true);
  EXPECT_THAT(RunOk(kept, {x, Literal<int32_t>({2}, {0, 1})}),
              TensorNear<float>({1, 1}, {3.082206964492798f}, 1e-6));
  EXPECT_THAT(RunOk(norm, {Literal<complex64>({1, 2}, {complex64(3, 4), complex64(0, 1)}),
                           Scalar<int32_t>(1)}),
              TensorNear<complex64>({1}, {complex64(5.0990195f, 0)}, 1e-6));
}

}  // namespace
}  // namespace towerflow
