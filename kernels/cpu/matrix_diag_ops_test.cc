// The diagonal and band ops (matrix_diag_ops.cc) against TensorFlow 2.21's
// values (tf.raw_ops on these inputs), every alignment, and TF's errors.
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

// m[b, i, j] = 1 + 12 b + 4 i + j: two 3x4 matrices.
Tensor M() {
  std::vector<float> v(24);
  for (int i = 0; i < 24; ++i) v[i] = static_cast<float>(i + 1);
  return Literal<float>({2, 3, 4}, v);
}
Tensor K(std::vector<int32_t> k) { return Literal<int32_t>({static_cast<int64_t>(k.size())}, k); }
Tensor I32(int32_t v) { return Literal<int32_t>({}, {v}); }
Tensor F(float v) { return Literal<float>({}, {v}); }

TEST(MatrixDiagTest, BuildsBandsAsTensorFlow) {
  KernelRunner v3("MatrixDiagV3");
  EXPECT_THAT(RunOk(v3, {Literal<float>({1, 3, 3}, {1, 2, 0, 3, 4, 5, 0, 6, 7}), K({-1, 1}),
                         I32(-1), I32(-1), F(9)}),
              TensorIs<float>({1, 3, 3}, {3, 2, 9, 0, 4, 0, 9, 6, 5}));
  KernelRunner v2("MatrixDiagV2");  // LEFT_LEFT
  EXPECT_THAT(RunOk(v2, {Literal<float>({1, 3, 3}, {1, 2, 0, 3, 4, 5, 6, 7, 0}), K({-1, 1}),
                         I32(-1), I32(-1), F(9)}),
              TensorIs<float>({1, 3, 3}, {3, 1, 9, 6, 4, 2, 9, 7, 5}));
  const Tensor d = Literal<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  KernelRunner left("MatrixDiagV3");
  left.Attr("align", "LEFT_RIGHT");
  EXPECT_THAT(RunOk(left, {d, K({-1}), I32(-1), I32(5), F(-1)}),
              TensorIs<float>({2, 4, 5}, {-1, -1, -1, -1, -1, 1,  -1, -1, -1, -1, -1, 2, -1, -1,
                                          -1, -1, -1, 3,  -1, -1, -1, -1, -1, -1, -1, 4, -1, -1,
                                          -1, -1, -1, 5,  -1, -1, -1, -1, -1, 6,  -1, -1}));
  KernelRunner v1("MatrixDiag");
  EXPECT_THAT(RunOk(v1, {d}),
              TensorIs<float>({2, 3, 3}, {1, 0, 0, 0, 2, 0, 0, 0, 3, 4, 0, 0, 0, 5, 0, 0, 0, 6}));
  KernelRunner diag("Diag");
  const Tensor big = RunOk(diag, {d});
  EXPECT_EQ(big.shape(), TensorShape({2, 3, 2, 3}));
  KernelRunner part("DiagPart");
  EXPECT_THAT(RunOk(part, {big}), TensorIs<float>({2, 3}, {1, 2, 3, 4, 5, 6}));
}

TEST(MatrixDiagTest, ReadsBandsInEveryAlignment) {
  const struct {
    const char* align;
    std::vector<float> want;
  } cases[] = {
      {"RIGHT_LEFT",
       {0, 3, 8, 2, 7, 12, 1, 6, 11, 5, 10, 0, 0, 15, 20, 14, 19, 24, 13, 18, 23, 17, 22, 0}},
      {"LEFT_RIGHT",
       {3, 8, 0, 2, 7, 12, 1, 6, 11, 0, 5, 10, 15, 20, 0, 14, 19, 24, 13, 18, 23, 0, 17, 22}},
      {"LEFT_LEFT",
       {3, 8, 0, 2, 7, 12, 1, 6, 11, 5, 10, 0, 15, 20, 0, 14, 19, 24, 13, 18, 23, 17, 22, 0}},
      {"RIGHT_RIGHT",
       {0, 3, 8, 2, 7, 12, 1, 6, 11, 0, 5, 10, 0, 15, 20, 14, 19, 24, 13, 18, 23, 0, 17, 22}},
  };
  for (const auto& c : cases) {
    KernelRunner r("MatrixDiagPartV3");
    r.Attr("align", c.align);
    EXPECT_THAT(RunOk(r, {M(), K({-1, 2}), F(0)}), TensorIs<float>({2, 4, 3}, c.want)) << c.align;
  }
  KernelRunner one("MatrixDiagPartV3");
  EXPECT_THAT(RunOk(one, {M(), K({-2}), F(0)}), TensorIs<float>({2, 1}, {9, 21}));
  KernelRunner v1("MatrixDiagPart");
  EXPECT_THAT(RunOk(v1, {M()}), TensorIs<float>({2, 3}, {1, 6, 11, 13, 18, 23}));
}

TEST(MatrixDiagTest, SetsBandsAndKeepsBandParts) {
  KernelRunner set("MatrixSetDiagV3");
  EXPECT_THAT(RunOk(set, {M(), Literal<float>({2, 2, 3}, std::vector<float>(12, -1)), K({0, 1})}),
              TensorIs<float>({2, 3, 4}, {-1, -1, 3,  4,  5,  -1, -1, 8,  9,  10, -1, -1,
                                          -1, -1, 15, 16, 17, -1, -1, 20, 21, 22, -1, -1}));
  KernelRunner v1("MatrixSetDiag");
  EXPECT_THAT(RunOk(v1, {M(), Literal<float>({2, 3}, std::vector<float>(6, 0))}),
              TensorIs<float>({2, 3, 4}, {0, 2,  3,  4,  5,  0, 7,  8,  9,  10, 0, 12,
                                          0, 14, 15, 16, 17, 0, 19, 20, 21, 22, 0, 24}));
  KernelRunner band("MatrixBandPart");
  EXPECT_THAT(RunOk(band, {M(), Literal<int64_t>({}, {1}), Literal<int64_t>({}, {0})}),
              TensorIs<float>({2, 3, 4}, {1,  0, 0, 0, 5,  6,  0, 0, 0, 10, 11, 0,
                                          13, 0, 0, 0, 17, 18, 0, 0, 0, 22, 23, 0}));
  EXPECT_THAT(RunOk(band, {M(), Literal<int64_t>({}, {-1}), Literal<int64_t>({}, {1})}),
              TensorIs<float>({2, 3, 4}, {1,  2,  0, 0, 5,  6,  7,  0, 9,  10, 11, 12,
                                          13, 14, 0, 0, 17, 18, 19, 0, 21, 22, 23, 24}));
}

TEST(MatrixDiagTest, BadInputsAreTensorFlowsErrors) {
  KernelRunner part("MatrixDiagPartV3");
  EXPECT_THAT(
      part.Run({M(), K({2, -1}), F(0)}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument,
                        "lower_diag_index must not be larger than upper_diag_index: 2 > -1"));
  EXPECT_THAT(
      part.Run({M(), K({5}), F(0)}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument,
                        "lower_diag_index is out of bound: 5. It must be between -3 and 4"));
  KernelRunner diag("MatrixDiagV3");
  const Tensor d = Literal<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_THAT(diag.Run({d, K({0, 1, 2}), I32(-1), I32(-1), F(0)}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "diag_index must have only one or two elements, received 3 "
                                "elements."));
  EXPECT_THAT(
      diag.Run({d, K({0}), I32(2), I32(-1), F(0)}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument, "The number of rows is too small."));
  KernelRunner set("MatrixSetDiagV3");
  EXPECT_THAT(set.Run({M(), Literal<float>({2, 4}, std::vector<float>(8, 0)), K({0})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Either first dimensions of diagonal don't match"));
  KernelRunner band("MatrixBandPart");
  EXPECT_THAT(band.Run({M(), Literal<int64_t>({}, {5}), Literal<int64_t>({}, {0})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "num_lower must be negative or less or equal to number of rows (3) "
                                "got: 5"));
  KernelRunner part2("DiagPart");
  EXPECT_THAT(part2.Run({Literal<float>({2, 3}, std::vector<float>(6, 0))}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Invalid shape [2,3]: dimensions 0 and 1 do not match."));
  KernelRunner v1("MatrixDiagPart");
  EXPECT_THAT(v1.Run({Literal<float>({3}, {1, 2, 3})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "input must be at least 2-dim, received shape: [3]"));
}

}  // namespace
}  // namespace towerflow
