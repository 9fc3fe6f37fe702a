// The FFT and complex-number kernels (fft_ops.cc, complex_ops.cc) and complex
// arithmetic with TensorFlow's values and messages (TF 2.21, tf.raw_ops).
#include <complex>
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
using c64 = complex64;

const Tensor kSignals =
    Literal<float>({2, 5}, {1.0f, 2.0f, -1.0f, 0.5f, 3.0f, 0.0f, -2.0f, 1.5f, 2.0f, -0.5f});

// kSignals + i kSignals reversed along the rows.
Tensor ComplexSignals() {
  std::vector<c64> v;
  const float* x = kSignals.data<float>();
  for (int r = 0; r < 2; ++r) {
    for (int c = 0; c < 5; ++c) v.emplace_back(x[r * 5 + c], x[r * 5 + 4 - c]);
  }
  return Literal<c64>({2, 5}, v);
}

Tensor RunFft(const char* op, const std::vector<Tensor>& in) {
  KernelRunner r(op);
  return RunOk(r, in);
}

TEST(FftOpsTest, RfftOfRealSignals) {
  EXPECT_THAT(RunFft("RFFT", {kSignals, Literal<int32_t>({1}, {5})}),
              TensorNear<c64>({2, 3},
                              {{5.5f, 0},
                               {2.9495935f, 1.8327343f},
                               {-3.1995935f, -0.8387996f},
                               {1, 0},
                               {-3.6041019f, 1.7204775f},
                               {3.1041021f, 0.4061496f}},
                              1e-5));
  // A longer input is cropped to fft_length (the Python wrapper pads).
  EXPECT_THAT(
      RunFft("RFFT", {kSignals, Literal<int32_t>({1}, {4})}),
      TensorNear<c64>({2, 3}, {{2.5f, 0}, {2, -1.5f}, {-2.5f, 0}, {1.5f, 0}, {-1.5f, 4}, {1.5f, 0}},
                      1e-5));
  EXPECT_THAT(RunFft("RFFT2D", {kSignals, Literal<int32_t>({2}, {2, 4})}),
              TensorNear<c64>(
                  {2, 3}, {{4, 0}, {0.5f, 2.5f}, {-1, 0}, {1, 0}, {3.5f, -5.5f}, {-4, 0}}, 1e-5));
}

TEST(FftOpsTest, ComplexFftAndItsInverse) {
  const Tensor z = ComplexSignals();
  EXPECT_THAT(RunFft("FFT", {z}), TensorNear<c64>({2, 5},
                                                  {{5.5f, 5.5f},
                                                   {0.7107096f, 4.4872427f},
                                                   {-0.6403165f, 1.2566918f},
                                                   {-5.7588706f, 2.9342909f},
                                                   {5.1884775f, 0.8217742f},
                                                   {1, 1},
                                                   {0.3552597f, 2.2430201f},
                                                   {0.9509747f, -1.8663929f},
                                                   {5.2572298f, -2.6786921f},
                                                   {-7.5634632f, -1.197935f}},
                                                  1e-5));
  EXPECT_THAT(RunFft("IFFT", {z}), TensorNear<c64>({2, 5},
                                                   {{1.1f, 1.1f},
                                                    {1.0376955f, 0.1643548f},
                                                    {-1.1517742f, 0.5868582f},
                                                    {-0.1280633f, 0.2513384f},
                                                    {0.1421419f, 0.8974485f},
                                                    {0.2f, 0.2f},
                                                    {-1.5126927f, -0.239587f},
                                                    {1.051446f, -0.5357384f},
                                                    {0.1901949f, -0.3732786f},
                                                    {0.0710519f, 0.448604f}},
                                                   1e-5));
  EXPECT_THAT(RunFft("FFT2D", {z}), TensorNear<c64>({2, 5},
                                                    {{6.5f, 6.5f},
                                                     {1.0659692f, 6.7302628f},
                                                     {0.3106582f, -0.609701f},
                                                     {-0.5016408f, 0.2555988f},
                                                     {-2.3749857f, -0.3761607f},
                                                     {4.5f, 4.5f},
                                                     {0.3554499f, 2.2442226f},
                                                     {-1.5912912f, 3.1230845f},
                                                     {-11.0161f, 5.6129827f},
                                                     {12.751941f, 2.0197091f}},
                                                    1e-4));
  // IFFT(FFT(z)) is z.
  EXPECT_THAT(RunFft("IFFT2D", {RunFft("FFT2D", {z})}), TensorNear(z, 1e-5));
}

TEST(FftOpsTest, IrfftIgnoresTheImaginaryPartsHermitianSymmetryFixes) {
  const Tensor bins = Literal<c64>({1, 4}, {{1, 1}, {2, -1}, {0.5f, 0}, {-1, 2}});
  EXPECT_THAT(
      RunFft("IRFFT", {bins, Literal<int32_t>({1}, {6})}),
      TensorNear<float>({1, 6},
                        {0.8333334f, 0.8720085f, -0.1279915f, -0.1666667f, -0.7053418f, 0.2946582f},
                        1e-6));
  EXPECT_THAT(
      RunFft("IRFFT", {bins, Literal<int32_t>({1}, {5})}),
      TensorNear<float>({1, 5}, {1.2f, 0.6658328f, -0.1502961f, -0.6205243f, -0.0950124f}, 1e-6));
  const Tensor two = Literal<c64>(
      {2, 4}, {{1, 1}, {2, -1}, {0.5f, 0}, {-1, 2}, {-1, 1}, {1, 2}, {0, 0.5f}, {-2, -1}});
  EXPECT_THAT(
      RunFft("IRFFT2D", {two, Literal<int32_t>({2}, {2, 6})}),
      TensorNear<float>({2, 6},
                        {0.3333333f, 0.241827f, -0.6138355f, -0.1666667f, -0.4694979f, 0.6748397f,
                         0.5f, 0.6301815f, 0.4858439f, 0.0f, -0.2358439f, -0.3801815f},
                        1e-6));
}

TEST(FftOpsTest, RefusesWhatTensorFlowRefuses) {
  const auto fails = [](const char* op, const std::vector<Tensor>& in) {
    KernelRunner r(op);
    return r.Run(in).status();
  };
  const auto invalid = [](const char* message) {
    return StatusIs(absl::StatusCode::kInvalidArgument, message);
  };
  EXPECT_THAT(fails("RFFT", {kSignals, Literal<int32_t>({1}, {6})}),
              invalid("Input dimension 1 must have length of at least 6 but got: 5"));
  EXPECT_THAT(fails("RFFT", {kSignals, Literal<int32_t>({1}, {-1})}),
              invalid("fft_length[0] must >= 0, but got: -1"));
  EXPECT_THAT(fails("RFFT", {kSignals, Literal<int32_t>({2}, {4, 4})}),
              invalid("fft_length must have shape [1]"));
  EXPECT_THAT(fails("RFFT", {Scalar<float>(1), Literal<int32_t>({1}, {1})}),
              invalid("Input must have rank of at least 1 but got: []"));
  EXPECT_THAT(fails("FFT2D", {Literal<c64>({1}, {{0, 1}})}),
              invalid("Input must have rank of at least 2 but got: [1]"));
  EXPECT_THAT(fails("IRFFT", {Literal<c64>({1, 4}, {1, 2, 3, 4}), Literal<int32_t>({1}, {8})}),
              invalid("Input dimension 1 must have length of at least 5 but got: 4"));
  // An empty input gives zeros (TF's kernel leaves such an output unwritten).
  EXPECT_THAT(RunFft("RFFT", {Tensor(DT_FLOAT, TensorShape({2, 0})), Literal<int32_t>({1}, {4})}),
              TensorIs<c64>({2, 3}, std::vector<c64>(6)));
}

TEST(ComplexOpsTest, PartsMagnitudesAndArithmetic) {
  const Tensor c = Literal<c64>({4}, {{3, 4}, {-1, 0}, {0, -2}, {-3, -4}});
  const auto run = [&](const char* op, std::vector<Tensor> extra = {}) {
    KernelRunner r(op);
    extra.insert(extra.begin(), c);
    return RunOk(r, extra);
  };
  EXPECT_THAT(run("ComplexAbs"), TensorNear<float>({4}, {5, 1, 2, 5}, 1e-6));
  EXPECT_THAT(run("Angle"),
              TensorNear<float>({4}, {0.9272952f, 3.1415927f, -1.5707964f, -2.2142975f}, 1e-6));
  EXPECT_THAT(run("Real"), TensorIs<float>({4}, {3, -1, 0, -3}));
  EXPECT_THAT(run("Imag"), TensorIs<float>({4}, {4, 0, -2, -4}));
  EXPECT_THAT(run("Conj"), TensorIs<c64>({4}, {{3, -4}, {-1, 0}, {0, 2}, {-3, 4}}));
  EXPECT_THAT(run("Div", {Literal<c64>({4}, {{1, 1}, {2, 0}, {0, -1}, {0.5f, -0.5f}})}),
              TensorNear<c64>({4}, {{3.5f, 0.5f}, {-0.5f, 0}, {2, 0}, {1, -7}}, 1e-6));
  EXPECT_THAT(run("Exp"), TensorNear<c64>({4},
                                          {{-13.128783f, -15.200785f},
                                           {0.3678795f, 0},
                                           {-0.4161468f, -0.9092974f},
                                           {-0.032543f, 0.037679f}},
                                          1e-5));
  EXPECT_THAT(run("Sqrt"), TensorNear<c64>({4}, {{2, 1}, {0, 1}, {1, -1}, {1, -2}}, 1e-6));
  KernelRunner sum("Sum");
  EXPECT_THAT(RunOk(sum, {c, Scalar<int32_t>(0)}), TensorIs<c64>({}, {{-1, -2}}));
  KernelRunner prod("Prod");
  EXPECT_THAT(RunOk(prod, {c, Scalar<int32_t>(0)}), TensorIs<c64>({}, {{48, 14}}));
  KernelRunner complex("Complex");
  EXPECT_THAT(RunOk(complex, {Literal<float>({2, 1}, {1, 2}), Literal<float>({2}, {3, 4})}),
              TensorIs<c64>({2, 2}, {{1, 3}, {1, 4}, {2, 3}, {2, 4}}));
}

TEST(ComplexOpsTest, CastThroughTheRealPart) {
  const Tensor c = Literal<c64>({4}, {{3, 4}, {-1, 0}, {0, -2}, {-3, -4}});
  const auto cast = [](const Tensor& x, DataType to) {
    KernelRunner r("Cast");
    r.Attr("SrcT", x.dtype()).Attr("DstT", to);
    return RunOk(r, {x});
  };
  EXPECT_THAT(cast(c, DT_INT32), TensorIs<int32_t>({4}, {3, -1, 0, -3}));
  EXPECT_THAT(cast(c, DT_BOOL), TensorIs<bool>({4}, {true, true, false, true}));
  EXPECT_THAT(cast(Literal<float>({2}, {1.5f, -2}), DT_COMPLEX128),
              TensorIs<complex128>({2}, {{1.5, 0}, {-2, 0}}));
  EXPECT_THAT(cast(c, DT_COMPLEX128),
              TensorIs<complex128>({4}, {{3, 4}, {-1, 0}, {0, -2}, {-3, -4}}));
}

}  // namespace
}  // namespace towerflow
