// Banded and tridiagonal systems (banded_ops.cc) against TensorFlow 2.21's
// values (tf.raw_ops on these matrices) and errors.
#include <cmath>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "testing/status_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::towerflow::testing::StatusIs;

// Superdiagonal, diagonal and subdiagonal rows of a 4 x 4 system, and two
// right-hand sides.
const Tensor kDiagonals = Literal<double>({1, 3, 4}, {2, 1, -1, 0.5, 4, 5, 6, 3, 0, 1, 2, -2});
const Tensor kRhs = Literal<double>({1, 4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});

Tensor Solve(const Tensor& diagonals, const Tensor& rhs, bool pivoting, bool perturb) {
  KernelRunner r("TridiagonalSolve");
  r.Attr("partial_pivoting", pivoting).Attr("perturb_singular", perturb);
  return RunOk(r, {diagonals, rhs});
}

TEST(TridiagonalSolveTest, EveryMethodMatchesTensorFlow) {
  const std::vector<double> want = {
      0.08333333333333334, 0.2727272727272727, 0.3333333333333333, 0.45454545454545453, 1.25,
      1.4545454545454546,  3.1666666666666665, 3.6363636363636362};
  EXPECT_THAT(Solve(kDiagonals, kRhs, true, false), TensorNear<double>({1, 4, 2}, want, 1e-15));
  EXPECT_THAT(Solve(kDiagonals, kRhs, false, false), TensorNear<double>({1, 4, 2}, want, 1e-15));
  EXPECT_THAT(Solve(kDiagonals, kRhs, true, true), TensorNear<double>({1, 4, 2}, want, 1e-15));
  // A subdiagonal larger than the pivot: pivoting exchanges the rows.
  const Tensor swap = Literal<double>({3, 3}, {1, 1, 0, 1, 1, 1, 0, 3, 1});
  const Tensor rhs = Literal<double>({3, 1}, {1, 2, 3});
  EXPECT_THAT(Solve(swap, rhs, true, false),
              TensorNear<double>(
                  {3, 1}, {-0.3333333333333333, 1.3333333333333335, 1.6666666666666665}, 1e-15));
  EXPECT_THAT(Solve(swap, rhs, false, false),
              TensorNear<double>(
                  {3, 1}, {-0.3333333333333335, 1.3333333333333335, 1.6666666666666667}, 1e-15));
  KernelRunner f("TridiagonalSolve");
  EXPECT_THAT(RunOk(f, {Literal<float>({3, 4}, {2, 1, -1, 0.5, 4, 5, 6, 3, 0, 1, 2, -2}),
                        Literal<float>({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8})}),
              TensorNear<float>(
                  {4, 2},
                  {0.0833333432674408, 0.27272728085517883, 0.3333333134651184, 0.45454543828964233,
                   1.2500001192092896, 1.4545456171035767, 3.1666667461395264, 3.636363983154297},
                  1e-7));
}

TEST(TridiagonalSolveTest, ASingularSystemIsNaNOrPerturbedAsTensorFlow) {
  // Rows [1 1 0], [1 1 0], [0 1 0]: singular.
  const Tensor singular = Literal<double>({3, 3}, {1, 1, 0, 1, 1, 0, 0, 1, 0});
  const Tensor rhs = Literal<double>({3, 1}, {1, 2, 3});
  const Tensor nan = Solve(singular, rhs, true, false);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(std::isnan(nan.data<double>()[i]));
  EXPECT_THAT(Solve(singular, rhs, true, true),
              TensorNear(Literal<double>({3, 1}, {6.084722881095501e+31, -6.084722881095501e+31,
                                                  1.3510798882111488e+16}),
                         0, 1e-12));
  const Tensor zero = Literal<double>({3, 1}, {0, 0, 0});
  const Tensor one_rhs = Literal<double>({1, 2}, {2, 3});
  EXPECT_TRUE(std::isnan(Solve(zero, one_rhs, true, false).data<double>()[0]));
  EXPECT_THAT(Solve(zero, one_rhs, true, true),
              TensorNear(Literal<double>({1, 2}, {2.9961552247705263e+307, 4.49423283715579e+307}),
                         0, 1e-12));
  EXPECT_THAT(Solve(Literal<double>({3, 1}, {0, 4, 0}), one_rhs, true, true),
              TensorIs<double>({1, 2}, {0.5, 0.75}));
}

TEST(TridiagonalSolveTest, BadShapesAreRefusedAsTensorFlow) {
  KernelRunner r("TridiagonalSolve");
  EXPECT_THAT(
      r.Run({Literal<double>({3, 4}, std::vector<double>(12)), kRhs}),
      StatusIs(absl::StatusCode::kInvalidArgument, "All input tensors must have the same rank."));
  EXPECT_THAT(r.Run({Literal<double>({2, 3, 4}, std::vector<double>(24)), kRhs}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "All input tensors must have the same outer dimensions."));
  EXPECT_THAT(r.Run({Literal<double>({1, 2, 4}, std::vector<double>(8)), kRhs}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Expected diagonals to be provided as a matrix with 3 rows, got 2 rows."));
  EXPECT_THAT(r.Run({Literal<double>({1, 3, 3}, std::vector<double>(9)), kRhs}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Expected the same number of left-hand sides and right-hand sides, got 3 "
                       "and 4."));
  EXPECT_THAT(
      r.Run({Literal<double>({3}, {1, 2, 3}), kRhs}),
      StatusIs(absl::StatusCode::kInvalidArgument, "Input tensor 0 must have rank >= 2, got 1"));
  KernelRunner bad("TridiagonalSolve");
  bad.Attr("partial_pivoting", false).Attr("perturb_singular", true);
  EXPECT_THAT(bad.Run({kDiagonals, kRhs}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Setting perturb_singular requires also setting partial_pivoting."));
}

TEST(TridiagonalMatMulTest, MatchesTensorFlow) {
  const Tensor super = Literal<double>({1, 1, 4}, {1, 2, 3, 9});  // 9 is not read
  const Tensor main = Literal<double>({1, 1, 4}, {4, 5, 6, 7});
  const Tensor sub = Literal<double>({1, 1, 4}, {9, -1, -2, -3});  // nor this 9
  KernelRunner r("TridiagonalMatMul");
  EXPECT_THAT(RunOk(r, {super, main, sub, kRhs}),
              TensorIs<double>({1, 4, 2}, {7, 12, 24, 30, 45, 52, 34, 38}));
  EXPECT_THAT(r.Run({Literal<double>({1, 1, 3}, {1, 2, 3}), main, sub, kRhs}),
              StatusIs(absl::StatusCode::kInvalidArgument, "Invalid superdiagonal shape."));
  EXPECT_THAT(r.Run({super, main, Literal<double>({1, 4, 1}, {1, 2, 3, 4}), kRhs}),
              StatusIs(absl::StatusCode::kInvalidArgument, "Invalid subdiagonal shape."));
  EXPECT_THAT(
      r.Run({Literal<double>({4}, {1, 2, 3, 4}), main, sub, kRhs}),
      StatusIs(absl::StatusCode::kInvalidArgument, "Input tensor 0 must have rank >= 2, got 1"));
}

// Two bands of a 3 x 3 matrix: lower, [[2 0 0] [1 3 0] [0 -1 4]]; upper,
// [[9 2 0] [0 1 3] [0 0 -1]].
const Tensor kBands = Literal<double>({2, 3}, {2, 3, 4, 9, 1, -1});
const Tensor kBandRhs = Literal<double>({3, 2}, {1, 2, 3, 4, 5, 6});

Tensor BandedSolve(const Tensor& bands, const Tensor& rhs, bool lower, bool adjoint) {
  KernelRunner r("BandedTriangularSolve");
  r.Attr("lower", lower).Attr("adjoint", adjoint);
  return RunOk(r, {bands, rhs});
}

TEST(BandedTriangularSolveTest, MatchesTensorFlow) {
  EXPECT_THAT(BandedSolve(kBands, kBandRhs, true, false),
              TensorNear<double>(
                  {3, 2}, {0.5, 1.0, 0.8333333333333334, 1.0, 1.4583333333333333, 1.75}, 1e-15));
  EXPECT_THAT(BandedSolve(kBands, kBandRhs, true, true),
              TensorNear<double>({3, 2},
                                 {-0.20833333333333337, 0.08333333333333337, 1.4166666666666667,
                                  1.8333333333333333, 1.25, 1.5},
                                 1e-15));
  EXPECT_THAT(
      BandedSolve(kBands, kBandRhs, false, false),
      TensorNear<double>({3, 2}, {-3.888888888888889, -4.666666666666667, 18, 22, -5, -6}, 1e-14));
  EXPECT_THAT(BandedSolve(kBands, kBandRhs, false, true),
              TensorNear<double>({3, 2},
                                 {0.1111111111111111, 0.2222222222222222, 2.7777777777777777,
                                  3.5555555555555554, 3.333333333333332, 4.666666666666666},
                                 1e-14));
  // The bands' batch of two broadcast over one rhs; more bands than rows.
  const Tensor two = Literal<double>({2, 2, 3}, {2, 3, 4, 9, 1, -1, 4, 6, 8, 18, 2, -2});
  EXPECT_THAT(BandedSolve(two, Literal<double>({1, 3, 2}, {1, 2, 3, 4, 5, 6}), true, false),
              TensorNear<double>({2, 3, 2},
                                 {0.5, 1.0, 0.8333333333333334, 1.0, 1.4583333333333333, 1.75, 0.25,
                                  0.5, 0.4166666666666667, 0.5, 0.7291666666666666, 0.875},
                                 1e-15));
  EXPECT_THAT(
      BandedSolve(Literal<double>({4, 3}, std::vector<double>(12, 1.0)), kBandRhs, true, false),
      TensorIs<double>({3, 2}, {1, 2, 2, 2, 2, 2}));
}

TEST(BandedTriangularSolveTest, BadInputsAreRefusedAsTensorFlow) {
  KernelRunner r("BandedTriangularSolve");
  EXPECT_THAT(r.Run({Literal<double>({2, 2}, {0, 1, 0, 1}), Literal<double>({2, 1}, {1, 1})}),
              StatusIs(absl::StatusCode::kInvalidArgument, "Input matrix is not invertible."));
  EXPECT_THAT(r.Run({kBands, Literal<double>({2, 2}, {1, 2, 3, 4})}),
              StatusIs(absl::StatusCode::kInvalidArgument, "In[0] mismatch In[1] shape"));
  EXPECT_THAT(r.Run({Literal<double>({3}, {1, 2, 3}), kBandRhs}),
              StatusIs(absl::StatusCode::kInvalidArgument, "In[0] ndims must be >= 2: 1"));
  EXPECT_THAT(r.Run({Literal<double>({2, 2, 3}, std::vector<double>(12, 1.0)),
                     Literal<double>({3, 3, 2}, std::vector<double>(18, 1.0))}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "In[0] and In[1] must have compatible batch dimensions: [2,2,3] vs. "
                       "[3,3,2]"));
  EXPECT_THAT(r.Run({Literal<double>({0, 3}, {}), kBandRhs}),
              StatusIs(absl::StatusCode::kInvalidArgument, "In[0] must not be an empty tensor"));
}

}  // namespace
}  // namespace towerflow
