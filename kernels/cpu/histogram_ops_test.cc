// DenseBincount and the searches of sorted rows (histogram_ops.cc), with
// TensorFlow's values and messages.
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::testing::HasSubstr;

TEST(HistogramOpsTest, DenseBincountAsTensorFlow) {
  const Tensor rows = Literal<int32_t>({2, 4}, {1, 2, 2, 5, 0, 0, 7, 1});
  KernelRunner counts("DenseBincount");
  EXPECT_THAT(RunOk(counts, {rows, Scalar<int32_t>(4), Literal<float>({0}, {})}),
              TensorIs<float>({2, 4}, {0, 1, 2, 0, 2, 1, 0, 0}));
  KernelRunner weighted("DenseBincount");
  EXPECT_THAT(RunOk(weighted, {Literal<int32_t>({4}, {1, 2, 2, 5}), Scalar<int32_t>(4),
                               Literal<float>({4}, {0.5, 1, 2, 3})}),
              TensorIs<float>({4}, {0, 0.5, 3, 0}));
  KernelRunner binary("DenseBincount");
  binary.Attr("binary_output", true);
  EXPECT_THAT(RunOk(binary, {rows, Scalar<int32_t>(4), Literal<int32_t>({0}, {})}),
              TensorIs<int32_t>({2, 4}, {0, 1, 1, 0, 1, 1, 0, 0}));
  KernelRunner wide("DenseBincount");
  EXPECT_THAT(
      RunOk(wide, {Literal<int64_t>({3}, {3, 3, 0}), Scalar<int64_t>(4), Literal<double>({0}, {})}),
      TensorIs<double>({4}, {1, 0, 0, 2}));

  KernelRunner bad("DenseBincount");
  const Tensor none = Literal<float>({0}, {});
  EXPECT_THAT(
      bad.Run({Literal<int32_t>({2}, {1, -2}), Scalar<int32_t>(4), none}).status().message(),
      HasSubstr("Input arr must be non-negative!"));
  EXPECT_THAT(
      bad.Run({Literal<int32_t>({2}, {1, 2}), Scalar<int32_t>(-1), none}).status().message(),
      HasSubstr("size (-1) must be non-negative"));
  EXPECT_THAT(bad.Run({Literal<int32_t>({2}, {1, 2}), Scalar<int32_t>(4), Literal<float>({1}, {1})})
                  .status()
                  .message(),
              HasSubstr("`weights` must be the same shape as `arr` or a length-0 `Tensor`"));
}

TEST(HistogramOpsTest, LowerAndUpperBoundAsTensorFlow) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor sorted = Literal<float>({2, 4}, {1, 2, 2, 4, 0, 0, 1, 9});
  const Tensor values = Literal<float>({2, 5}, {2, 3, 0, 5, nan, 0, 1, 10, -1, 1});
  KernelRunner lower("LowerBound");
  EXPECT_THAT(RunOk(lower, {sorted, values}),
              TensorIs<int32_t>({2, 5}, {1, 3, 0, 4, 0, 0, 2, 4, 0, 2}));
  KernelRunner upper("UpperBound");
  upper.Attr("out_type", DT_INT64);
  EXPECT_THAT(RunOk(upper, {sorted, values}),
              TensorIs<int64_t>({2, 5}, {3, 3, 0, 4, 4, 2, 3, 4, 0, 3}));
  KernelRunner bad("LowerBound");
  EXPECT_THAT(bad.Run({sorted, Literal<float>({3, 1}, {1, 1, 1})}).status().message(),
              HasSubstr("Leading dim_size of both tensors must match."));
}

}  // namespace
}  // namespace towerflow
