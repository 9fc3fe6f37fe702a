// Dense linear algebra (linalg_ops.cc) against TensorFlow 2.21's values
// (tf.raw_ops on these matrices), and TF's errors.
#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

const Tensor kA =
    Literal<double>({2, 3, 3}, {4, 1, 2, 1, 3, 0, 2, 0, 5, 2, -1, 0, 1, 3, 1, 0, 1, 4});
const Tensor kB = Literal<double>({2, 3, 1}, {1, 2, 3, 0, 1, -1});

TEST(LinalgTest, InverseAndDeterminantsMatchTensorFlow) {
  KernelRunner inv("MatrixInverse");
  EXPECT_THAT(RunOk(inv, {kA}),
              TensorNear<double>({2, 3, 3},
                                 {0.3488372093023256, -0.11627906976744187, -0.13953488372093023,
                                  -0.11627906976744187, 0.372093023255814, 0.04651162790697675,
                                  -0.13953488372093023, 0.04651162790697675, 0.2558139534883721,
                                  0.4230769230769231, 0.15384615384615383, -0.03846153846153846,
                                  -0.15384615384615383, 0.30769230769230765, -0.07692307692307691,
                                  0.03846153846153846, -0.07692307692307691, 0.2692307692307692},
                                 1e-14));
  KernelRunner adj("MatrixInverse");
  adj.Attr("adjoint", true);
  const Tensor t = RunOk(adj, {kA});
  EXPECT_NEAR(t.data<double>()[10], -0.15384615384615383, 1e-14);
  EXPECT_NEAR(t.data<double>()[12], 0.15384615384615383, 1e-14);
  KernelRunner det("MatrixDeterminant");
  EXPECT_THAT(RunOk(det, {kA}), TensorNear<double>({2}, {43, 26}, 1e-12));
  KernelRunner logdet("LogMatrixDeterminant");
  const Tensor m = Literal<double>({2, 2, 2}, {0, 1, 1, 0, 2, 0, 0, 3});
  EXPECT_THAT(RunOk(logdet, {m}, 0), TensorIs<double>({2}, {-1, 1}));
  EXPECT_THAT(RunOk(logdet, {m}, 1), TensorNear<double>({2}, {0, 1.791759469228055}, 1e-15));
  // A singular matrix: sign 0, log |det| -inf, determinant 0.
  const Tensor singular = Literal<double>({2, 2}, {1, 2, 2, 4});
  EXPECT_THAT(RunOk(logdet, {singular}, 0), TensorIs<double>({}, {0}));
  EXPECT_EQ(RunOk(logdet, {singular}, 1).data<double>()[0],
            -std::numeric_limits<double>::infinity());
  EXPECT_THAT(RunOk(det, {singular}), TensorIs<double>({}, {0}));
}

TEST(LinalgTest, SolvesMatchTensorFlow) {
  KernelRunner solve("MatrixSolve");
  EXPECT_THAT(RunOk(solve, {kA, kB}),
              TensorNear<double>({2, 3, 1},
                                 {-0.30232558139534893, 0.7674418604651164, 0.7209302325581396,
                                  0.1923076923076923, 0.3846153846153846, -0.3461538461538461},
                                 1e-14));
  KernelRunner solve_adj("MatrixSolve");
  solve_adj.Attr("adjoint", true);
  EXPECT_THAT(RunOk(solve_adj, {kA, kB}),
              TensorNear<double>({2, 3, 1},
                                 {-0.30232558139534893, 0.7674418604651164, 0.7209302325581396,
                                  -0.1923076923076923, 0.3846153846153846, -0.3461538461538461},
                                 1e-14));
  KernelRunner lower("MatrixTriangularSolve");
  EXPECT_THAT(RunOk(lower, {kA, kB}), TensorNear<double>({2, 3, 1},
                                                         {0.25, 0.5833333333333333, 0.5, 0,
                                                          0.3333333333333333, -0.3333333333333333},
                                                         1e-14));
  KernelRunner upper_adj("MatrixTriangularSolve");
  upper_adj.Attr("lower", false).Attr("adjoint", true);
  EXPECT_THAT(
      RunOk(upper_adj, {kA, kB}),
      TensorNear<double>(
          {2, 3, 1}, {0.25, 0.5833333333333333, 0.5, 0, 0.3333333333333333, -0.3333333333333333},
          1e-14));
}

TEST(LinalgTest, CholeskyMatchesTensorFlow) {
  KernelRunner chol("Cholesky");
  EXPECT_THAT(
      RunOk(chol, {Literal<double>({1, 3, 3}, {4, 1, 2, 1, 3, 0, 2, 0, 5})}),
      TensorNear<double>(
          {1, 3, 3},
          {2, 0, 0, 0.5, 1.6583123951777, 0, 1, -0.30151134457776363, 1.9771421064483223}, 1e-13));
  // Not positive definite: NaNs, no error (TF's CPU kernel).
  const Tensor bad = RunOk(chol, {Literal<double>({2, 2}, {1, 2, 2, 1})});
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(std::isnan(bad.data<double>()[i]));
}

TEST(LinalgTest, BadInputsAreTensorFlowsErrors) {
  KernelRunner inv("MatrixInverse");
  EXPECT_THAT(inv.Run({Literal<double>({2, 2}, {0, 0, 0, 0})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument, "Input is not invertible."));
  EXPECT_THAT(
      inv.Run({Literal<double>({2, 3}, {1, 2, 3, 4, 5, 6})}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument, "Input matrix must be square."));
  KernelRunner solve("MatrixSolve");
  EXPECT_THAT(solve.Run({kA, Literal<double>({2, 2, 1}, {1, 2, 3, 4})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Input matrix and rhs are incompatible."));
  KernelRunner det("MatrixDeterminant");
  EXPECT_THAT(det.Run({Literal<double>({3}, {1, 2, 3})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Input tensor 0 must have rank >= 2, got 1"));
}

// TF 2.21's values (tf.raw_ops.MatrixSquareRoot, Cross).
TEST(LinalgTest, SquareRootAndCrossMatchTensorFlow) {
  KernelRunner sqrtm("MatrixSquareRoot");
  EXPECT_THAT(RunOk(sqrtm, {Literal<double>({3, 3}, {4, 1, 0, 1, 3, 1, 0, 1, 2})}),
              TensorNear<double>({3, 3},
                                 {1.9807091316411691, 0.27578188529998926, -0.02712356122769774,
                                  0.27578188529998926, 1.677803685113482, 0.3300290077553838,
                                  -0.027123561227697546, 0.3300290077553838, 1.3748982385857955},
                                 1e-12));
  // A negative real eigenvalue has no real principal root: NaN, as TF.
  const Tensor no_root = RunOk(sqrtm, {Literal<float>({2, 2}, {1, 2, 3, 4})});
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(std::isnan(no_root.data<float>()[i]));
  EXPECT_THAT(RunOk(sqrtm, {Literal<float>({2, 0, 0}, {})}), TensorIs<float>({2, 0, 0}, {}));
  EXPECT_THAT(sqrtm.Run({Literal<float>({2, 3}, {1, 2, 3, 4, 5, 6})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument));
  KernelRunner cross("Cross");
  EXPECT_THAT(
      RunOk(cross, {Literal<double>({1, 3}, {1.5, -2, 3}), Literal<double>({1, 3}, {0.5, 4, -1})}),
      TensorIs<double>({1, 3}, {-10, 3, 7}));
  EXPECT_THAT(RunOk(cross, {Literal<int32_t>({3}, {1, 2, 3}), Literal<int32_t>({3}, {4, 5, 6})}),
              TensorIs<int32_t>({3}, {-3, 6, -3}));
  EXPECT_THAT(cross.Run({Literal<float>({2}, {1, 2}), Literal<float>({2}, {4, 5})}),
              testing::StatusIs(absl::StatusCode::kFailedPrecondition,
                                "Cross-products are only defined for 3-element vectors."));
  EXPECT_THAT(cross.Run({Literal<float>({1, 3}, {1, 2, 3}), Literal<float>({3}, {4, 5, 6})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Both inputs must be of same shape: [1,3] vs. [3]"));
}

// TF 1's Cholesky gradient op: TF's values for the factors of two
// matrices, the gradient's upper triangle unread (the 9s).
TEST(LinalgTest, CholeskyGradMatchesTensorFlow) {
  KernelRunner chol("Cholesky");
  const Tensor l = RunOk(
      chol,
      {Literal<double>({2, 3, 3}, {4, 1, 2, 1, 3, 0, 2, 0, 5, 2, 0.5, 0, 0.5, 1, 0.2, 0, 0.2, 3})});
  const Tensor g =
      Literal<double>({2, 3, 3}, {1, 0, 0, 2, 3, 0, -1, 0.5, 2, 0.5, 9, 9, 1, -2, 9, 0.25, 1.5, 1});
  KernelRunner grad("CholeskyGrad");
  EXPECT_THAT(RunOk(grad, {l, g}),
              TensorNear<double>(
                  {2, 3, 3},
                  {0.4964155881418458, 0.14147607142310142, -0.5635692119952422,
                   0.14147607142310142, 0.9486641737811494, 0.2427157702632224, -0.5635692119952422,
                   0.2427157702632224, 0.5057805388588732, 0.011068861574901633, 0.662831334886941,
                   -0.09543472526961959, 0.662831334886941, -1.2371117771746694, 0.7352922916717521,
                   -0.09543472526961959, 0.7352922916717521, 0.29090002403665444},
                  1e-14));
  KernelRunner bad("CholeskyGrad");
  EXPECT_THAT(
      bad.Run({Literal<double>({2, 3}, std::vector<double>(6, 1.0)),
               Literal<double>({2, 3}, std::vector<double>(6, 1.0))})
          .status(),
      testing::StatusIs(absl::StatusCode::kInvalidArgument, "Inputs must be a square matrices."));
  EXPECT_THAT(bad.Run({l, Literal<double>({3, 3}, std::vector<double>(9, 1.0))}).status(),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "All input tensors must have the same rank."));
}

// tf.linalg.logm: TF's principal logarithm (Eigen's) of a complex matrix.
TEST(LinalgTest, MatrixLogarithmMatchesTensorFlow) {
  using C = std::complex<double>;
  const Tensor a = Literal<C>({3, 3}, {C(4, 0.1), C(2, 0), C(0, 0), C(-1, 0), C(3.5, 0.2), C(3, 0),
                                       C(0.2, 0.3), C(1, 0), C(1, 0)});
  KernelRunner log("MatrixLogarithm");
  const Tensor got = RunOk(log, {a});
  const std::vector<C> want = {
      C(1.5078519123970895, 0.041606090019002215), C(0.6217545869818928, -0.06540629270137396),
      C(-0.6421015902319732, 0.12579695007927177), C(-0.3939569950260352, -0.05103239717618156),
      C(1.034632785170699, 0.15194386758307643),   C(1.9020741133247643, -0.25469978465937015),
      C(0.24265404935283985, 0.14107466680533134), C(0.5786382367515291, -0.14072362390436938),
      C(-0.7814428249878878, 0.27932106393732403)};
  ASSERT_EQ(got.shape(), TensorShape({3, 3}));
  for (int i = 0; i < 9; ++i) {
    EXPECT_NEAR(got.data<C>()[i].real(), want[i].real(), 1e-13) << i;
    EXPECT_NEAR(got.data<C>()[i].imag(), want[i].imag(), 1e-13) << i;
  }
  KernelRunner square("MatrixLogarithm");
  EXPECT_THAT(
      square.Run({Literal<C>({2, 3}, std::vector<C>(6))}).status(),
      testing::StatusIs(absl::StatusCode::kInvalidArgument, "Input matrix must be square."));
}

}  // namespace
}  // namespace towerflow
