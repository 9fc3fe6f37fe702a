// Multinomial and StatelessMultinomial (multinomial_ops.cc) with TensorFlow's
// draws for the same seeds and its messages (TF 2.21, tf.raw_ops).
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "testing/status_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::towerflow::testing::StatusIs;

const float kInf = std::numeric_limits<float>::infinity();
// Rows: uneven, uniform, two classes of -inf.
const Tensor kLogits =
    Literal<float>({3, 4}, {0.5f, 1.0f, -1.0f, 2.0f, 0, 0, 0, 0, -kInf, 1.0f, -kInf, 1.0f});

TEST(MultinomialOpsTest, SeededDrawsAreTensorFlows) {
  KernelRunner r("Multinomial");
  r.Attr("seed", int64_t{7}).Attr("seed2", int64_t{3});
  EXPECT_THAT(
      RunOk(r, {kLogits, Scalar<int32_t>(7)}),
      TensorIs<int64_t>({3, 7}, {1, 3, 3, 0, 2, 3, 3, 3, 3, 2, 0, 3, 3, 3, 3, 1, 3, 1, 3, 3, 3}));
  // A second run draws on from where TF's reserves end.
  KernelRunner twice("Multinomial");
  twice.Attr("seed", int64_t{1}).Attr("seed2", int64_t{2}).Attr("output_dtype", DT_INT32);
  EXPECT_THAT(RunOk(twice, {kLogits, Scalar<int32_t>(5)}),
              TensorIs<int32_t>({3, 5}, {1, 3, 1, 1, 3, 3, 2, 2, 3, 1, 1, 3, 3, 1, 3}));
  EXPECT_THAT(RunOk(twice, {kLogits, Scalar<int32_t>(5)}),
              TensorIs<int32_t>({3, 5}, {1, 3, 1, 0, 3, 0, 0, 2, 2, 3, 1, 3, 3, 3, 1}));
}

TEST(MultinomialOpsTest, StatelessDrawsAreTensorFlows) {
  KernelRunner r("StatelessMultinomial");
  EXPECT_THAT(RunOk(r, {kLogits, Scalar<int32_t>(6), Literal<int64_t>({2}, {3, 4})}),
              TensorIs<int64_t>({3, 6}, {3, 3, 1, 3, 3, 3, 0, 0, 2, 1, 0, 2, 3, 1, 1, 3, 3, 3}));
  // All -inf: TF's count of classes.
  KernelRunner none("StatelessMultinomial");
  EXPECT_THAT(RunOk(none, {Literal<float>({1, 2}, {-kInf, -kInf}), Scalar<int32_t>(2),
                           Literal<int64_t>({2}, {1, 1})}),
              TensorIs<int64_t>({1, 2}, {2, 2}));
  const auto fails = [](const Tensor& logits, int32_t samples, const Tensor& seed) {
    KernelRunner k("StatelessMultinomial");
    return k.Run({logits, Scalar<int32_t>(samples), seed}).status();
  };
  const Tensor pair = Literal<int64_t>({2}, {1, 2});
  EXPECT_THAT(
      fails(Literal<float>({1}, {1}), 2, pair),
      StatusIs(absl::StatusCode::kInvalidArgument, "logits should be a matrix, got shape [1]"));
  EXPECT_THAT(
      fails(Tensor(DT_FLOAT, TensorShape({2, 0})), 2, pair),
      StatusIs(absl::StatusCode::kInvalidArgument, "num_classes should be positive, got 0"));
  EXPECT_THAT(
      fails(Tensor(DT_FLOAT, TensorShape({2, 3})), -1, pair),
      StatusIs(absl::StatusCode::kInvalidArgument, "num_samples should be non-negative, got -1"));
  EXPECT_THAT(fails(Tensor(DT_FLOAT, TensorShape({2, 3})), 2, Literal<int64_t>({3}, {1, 2, 3})),
              StatusIs(absl::StatusCode::kInvalidArgument, "seed must have shape [2], not [3]"));
}

}  // namespace
}  // namespace towerflow
