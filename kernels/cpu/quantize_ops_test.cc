// QuantizeV2 and Dequantize against TensorFlow 2.21's values and messages
// (tf.raw_ops with TF_ENABLE_ONEDNN_OPTS=0, TF's own CPU kernels, on these
// inputs): every quantized type in every mode, per-axis ranges, TF's
// widening of the range, its rounding, NaN and infinities, and qint32's
// values that do not fit a float.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/type_dispatch.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using testing::StatusIs;
constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;
constexpr auto kUnimplemented = absl::StatusCode::kUnimplemented;

// A tensor of a quantized type holding `values`.
Tensor Quantized(DataType dtype, const TensorShape& shape, const std::vector<int64_t>& values) {
  Tensor t(dtype, shape);
  VisitQuantizedType(dtype, [&](auto zero) {
    using S = decltype(zero);
    for (size_t i = 0; i < values.size(); ++i) static_cast<S*>(t.raw_data())[i] = S(values[i]);
  });
  return t;
}

// The integers of a quantized tensor (empty when it is not of `dtype`).
std::vector<int64_t> Ints(const Tensor& t, DataType dtype) {
  if (t.dtype() != dtype) return {};
  std::vector<int64_t> out;
  VisitQuantizedType(dtype, [&](auto zero) {
    using S = decltype(zero);
    for (int64_t i = 0; i < t.NumElements(); ++i)
      out.push_back(static_cast<const S*>(t.raw_data())[i]);
  });
  return out;
}

const std::vector<float> kX = {-1, -0.5f, 0, 0.3f, 1, 2, 5.5f, -3, 0.1234567f, 1.5f};

struct QuantizeCase {
  DataType type;
  std::string mode;
  bool narrow_range;
  std::vector<int64_t> expected;
  float out_min, out_max;
};

TEST(QuantizeV2Test, EveryTypeAndModeMatchesTensorFlow) {
  const std::vector<QuantizeCase> cases = {
      {DT_QUINT8, "MIN_COMBINED", false, {0, 43, 85, 110, 170, 255, 255, 0, 95, 213}, -1, 2},
      {DT_QUINT8, "MIN_FIRST", false, {0, 42, 85, 111, 170, 255, 255, 0, 95, 213}, -1, 2},
      {DT_QUINT8, "SCALED", false, {0, 0, 0, 38, 128, 255, 255, 0, 16, 191}, 0, 2},
      {DT_QUINT8,
       "SCALED",
       true,
       {1, 1, 1, 38, 128, 255, 255, 1, 16, 191},
       0.007843137718737125f,
       2},
      {DT_QINT8, "MIN_COMBINED", false, {-128, -86, -43, -18, 42, 127, 127, -128, -33, 85}, -1, 2},
      {DT_QINT8, "MIN_FIRST", false, {-128, -86, -43, -17, 42, 127, 127, -128, -33, 85}, -1, 2},
      {DT_QINT8,
       "SCALED",
       false,
       {-64, -32, 0, 19, 64, 127, 127, -128, 8, 95},
       -2.0157480239868164f,
       2},
      {DT_QINT8, "SCALED", true, {-64, -32, 0, 19, 64, 127, 127, -127, 8, 95}, -2, 2},
      {DT_QUINT16,
       "MIN_COMBINED",
       false,
       {0, 10923, 21845, 28398, 43690, 65535, 65535, 0, 24542, 54613},
       -1,
       2},
      {DT_QUINT16,
       "MIN_FIRST",
       false,
       {0, 10922, 21845, 28399, 43690, 65535, 65535, 0, 24542, 54613},
       -1,
       2},
      {DT_QUINT16,
       "SCALED",
       true,
       {1, 1, 1, 9830, 32768, 65535, 65535, 1, 4045, 49151},
       3.051804378628731e-05f,
       2},
      {DT_QINT16,
       "MIN_COMBINED",
       false,
       {-32768, -21846, -10923, -4370, 10922, 32767, 32767, -32768, -8226, 21845},
       -1,
       2},
      {DT_QINT16,
       "MIN_FIRST",
       false,
       {-32768, -21846, -10923, -4369, 10922, 32767, 32767, -32768, -8226, 21845},
       -1,
       2},
      {DT_QINT16,
       "SCALED",
       false,
       {-16384, -8192, 0, 4915, 16384, 32767, 32767, -32768, 2023, 24575},
       -2.00006103515625f,
       2},
      // qint32's range as floats: 2^31 does not fit, and becomes INT32_MIN
      // in MIN_COMBINED and SCALED (x86's conversion); MIN_FIRST clamps.
      {DT_QINT32,
       "MIN_COMBINED",
       false,
       {-2147483648, -1431655680, -715827840, -286331136, 715827968, -2147483648, -2147483648,
        -2147483648, -539080320, 1431655936},
       -1,
       2},
      {DT_QINT32,
       "MIN_FIRST",
       false,
       {-2147483648, -1431655680, -715827840, -286331072, 715827968, 2147483520, 2147483520,
        -2147483648, -539080320, 1431655808},
       -1,
       2},
      {DT_QINT32,
       "SCALED",
       false,
       {-1073741824, -536870912, 0, 322122560, 1073741824, -2147483648, -2147483648, -2147483648,
        132560624, 1610612736},
       -2,
       2},
  };
  for (const QuantizeCase& c : cases) {
    SCOPED_TRACE(DataTypeString(c.type) + " " + c.mode + (c.narrow_range ? " narrow" : ""));
    KernelRunner r("QuantizeV2");
    r.Attr("T", c.type).Attr("mode", c.mode).Attr("narrow_range", c.narrow_range);
    absl::StatusOr<std::vector<Tensor>> out =
        r.Run({Literal<float>({10}, kX), Scalar<float>(-1), Scalar<float>(2)});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Ints((*out)[0], c.type), c.expected);
    EXPECT_THAT((*out)[1], TensorIs<float>({}, {c.out_min}));
    EXPECT_THAT((*out)[2], TensorIs<float>({}, {c.out_max}));
  }
}

// Runs QuantizeV2 of `x` with the scalar range [lo, hi].
std::vector<Tensor> Quantize(KernelRunner& r, const std::vector<float>& x, float lo, float hi) {
  absl::StatusOr<std::vector<Tensor>> out =
      r.Run({Literal<float>({static_cast<int64_t>(x.size())}, x), Scalar(lo), Scalar(hi)});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::vector<Tensor>(3);
}

TEST(QuantizeV2Test, RoundingRangesAndSpecialValuesMatchTensorFlow) {
  const std::vector<float> halves = {0.5f, 1.5f, 2.5f, -0.5f, -2.5f, 126.5f};
  KernelRunner even("QuantizeV2");
  even.Attr("T", DT_QINT8).Attr("mode", "SCALED").Attr("round_mode", "HALF_TO_EVEN");
  EXPECT_EQ(Ints(Quantize(even, halves, -128, 127)[0], DT_QINT8),
            (std::vector<int64_t>{0, 2, 2, 0, -2, 126}));
  KernelRunner away("QuantizeV2");
  away.Attr("T", DT_QINT8).Attr("mode", "SCALED");
  EXPECT_EQ(Ints(Quantize(away, halves, -128, 127)[0], DT_QINT8),
            (std::vector<int64_t>{1, 2, 3, -1, -3, 127}));

  // An empty range is widened to ensure_minimum_range (0.01 by default),
  // and a range above 0 starts at 0.
  KernelRunner mc("QuantizeV2");
  mc.Attr("T", DT_QUINT8);
  std::vector<Tensor> out = Quantize(mc, {0, 0.001f, 0.5f}, 0, 0);
  EXPECT_EQ(Ints(out[0], DT_QUINT8), (std::vector<int64_t>{0, 26, 255}));
  EXPECT_THAT(out[2], TensorIs<float>({}, {0.009999999776482582f}));
  out = Quantize(mc, {0, 1, 3, 4}, 1, 3);
  EXPECT_EQ(Ints(out[0], DT_QUINT8), (std::vector<int64_t>{0, 85, 255, 255}));
  EXPECT_THAT(out[1], TensorIs<float>({}, {0}));
  KernelRunner wide("QuantizeV2");
  wide.Attr("T", DT_QINT8).Attr("ensure_minimum_range", 0.5f);
  out = Quantize(wide, {0, 0.001f, 0.5f}, 0, 0);
  EXPECT_EQ(Ints(out[0], DT_QINT8), (std::vector<int64_t>{-128, -127, 127}));
  EXPECT_THAT(out[2], TensorIs<float>({}, {0.5f}));

  // NaN becomes 0 (through INT32_MIN), infinities the ends.
  const float inf = std::numeric_limits<float>::infinity();
  out = Quantize(away, {NAN, inf, -inf}, -1, 1);
  EXPECT_EQ(Ints(out[0], DT_QINT8), (std::vector<int64_t>{0, 127, -128}));
  EXPECT_THAT(out[1], TensorIs<float>({}, {-1.0078740119934082f}));
  KernelRunner first("QuantizeV2");
  first.Attr("T", DT_QUINT8).Attr("mode", "MIN_FIRST");
  EXPECT_EQ(Ints(Quantize(first, {NAN, inf, -inf, 0.5f}, -1, 1)[0], DT_QUINT8),
            (std::vector<int64_t>{0, 255, 0, 192}));
  KernelRunner first8("QuantizeV2");
  first8.Attr("T", DT_QINT8).Attr("mode", "MIN_FIRST");
  EXPECT_EQ(Ints(Quantize(first8, {NAN, inf, -inf, 0.5f}, -1, 1)[0], DT_QINT8),
            (std::vector<int64_t>{0, 127, -128, 64}));
  // qint32 keeps TF's difference: a NaN rounded first (MIN_COMBINED,
  // SCALED) is 0, MIN_FIRST's INT32_MIN.
  for (const char* mode : {"MIN_COMBINED", "SCALED", "MIN_FIRST"}) {
    KernelRunner q32("QuantizeV2");
    q32.Attr("T", DT_QINT32).Attr("mode", std::string(mode));
    EXPECT_EQ(
        Ints(Quantize(q32, {NAN, -inf}, -1, 2)[0], DT_QINT32),
        (std::vector<int64_t>{std::string(mode) == "MIN_FIRST" ? -2147483648 : 0, -2147483648}))
        << mode;
  }
  KernelRunner first32("QuantizeV2");
  first32.Attr("T", DT_QINT32).Attr("mode", "MIN_FIRST");
  EXPECT_EQ(Ints(Quantize(first32, {1e9f, -1e9f, 3}, -1e9f, 1e9f)[0], DT_QINT32),
            (std::vector<int64_t>{2147483520, -2147483648, 6}));
  // A NaN min is read as 0 by TF's comparisons; an infinite one scales by 0.
  out = Quantize(away, {0.5f}, NAN, 1);
  EXPECT_EQ(Ints(out[0], DT_QINT8), (std::vector<int64_t>{64}));
  EXPECT_THAT(out[1], TensorIs<float>({}, {-1.0078740119934082f}));
  out = Quantize(away, {0.5f}, -inf, 1);
  EXPECT_EQ(Ints(out[0], DT_QINT8), (std::vector<int64_t>{0}));
  EXPECT_THAT(out[1], TensorIs<float>({}, {-inf}));
  EXPECT_THAT(out[2], TensorIs<float>({}, {inf}));

  // No elements: the range alone.
  out = Quantize(mc, {}, -1, 1);
  EXPECT_EQ(out[0].NumElements(), 0);
  EXPECT_THAT(out[2], TensorIs<float>({}, {1}));
}

TEST(QuantizeV2Test, PerAxisRangesMatchTensorFlow) {
  const Tensor x = Literal<float>({2, 3}, {-1, 0.5f, 2, 0.25f, -4, 1});
  KernelRunner scaled("QuantizeV2");
  scaled.Attr("T", DT_QINT8).Attr("mode", "SCALED").Attr("axis", int64_t{1});
  absl::StatusOr<std::vector<Tensor>> out =
      scaled.Run({x, Literal<float>({3}, {-1, -4, -2}), Literal<float>({3}, {2, 1, 1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Ints((*out)[0], DT_QINT8), (std::vector<int64_t>{-64, 16, 127, 16, -128, 64}));
  EXPECT_THAT((*out)[1], TensorIs<float>({3}, {-2.0157480239868164f, -4, -2}));
  EXPECT_THAT((*out)[2], TensorIs<float>({3}, {2, 3.96875f, 1.984375f}));

  KernelRunner combined("QuantizeV2");
  combined.Attr("T", DT_QUINT8).Attr("axis", int64_t{1});
  out = combined.Run({x, Literal<float>({3}, {-1, -4, -2}), Literal<float>({3}, {2, 1, 1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Ints((*out)[0], DT_QUINT8), (std::vector<int64_t>{0, 230, 255, 106, 0, 255}));
  KernelRunner rows("QuantizeV2");
  rows.Attr("T", DT_QINT8).Attr("axis", int64_t{0});
  out = rows.Run({x, Literal<float>({2}, {-1, -4}), Literal<float>({2}, {2, 1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Ints((*out)[0], DT_QINT8), (std::vector<int64_t>{-128, -1, 127, 89, -128, 127}));
  // One slice: TF's scalar path, scalar ranges out.
  out = combined.Run(
      {Literal<float>({2, 1}, {1, 0.5f}), Literal<float>({1}, {-1}), Literal<float>({1}, {1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Ints((*out)[0], DT_QUINT8), (std::vector<int64_t>{255, 191}));
  EXPECT_THAT((*out)[1], TensorIs<float>({}, {-1}));
}

TEST(QuantizeV2Test, BadInputsGetTensorFlowsMessages) {
  const Tensor x = Literal<float>({2, 3}, {-1, 0.5f, 2, 0.25f, -4, 1});
  KernelRunner r("QuantizeV2");
  r.Attr("T", DT_QUINT8);
  EXPECT_THAT(r.Run({x, Scalar<float>(2), Scalar<float>(1)}),
              StatusIs(kInvalid, "input_max_range must be larger than input_min_range."));
  EXPECT_THAT(r.Run({x, Literal<float>({2}, {-1, 0}), Scalar<float>(1)}),
              StatusIs(kInvalid,
                       "If axis is not specified, min_range must contain a single float "
                       "element, but it contains 2 elements"));
  EXPECT_THAT(r.Run({x, Scalar<float>(-1), Literal<float>({0}, {})}),
              StatusIs(kInvalid,
                       "If axis is not specified, max_range must contain a single float "
                       "element, but it contains 0 elements"));
  KernelRunner even("QuantizeV2");
  even.Attr("T", DT_QUINT8).Attr("round_mode", "HALF_TO_EVEN");
  EXPECT_THAT(even.Run({x, Scalar<float>(-1), Scalar<float>(1)}),
              StatusIs(kInvalid,
                       "Round mode 'HALF_TO_EVEN' only supported for mode 'SCALED', but mode "
                       "is 'MIN_COMBINED'."));

  KernelRunner axis("QuantizeV2");
  axis.Attr("T", DT_QUINT8).Attr("axis", int64_t{1});
  const std::string specified =
      "If axis is specified, min_range must be a 1-D tensor whose size matches the axis "
      "dimension of the input and output tensors, but min_range ";
  EXPECT_THAT(
      axis.Run({x, Literal<float>({2}, {-1, 0}), Literal<float>({2}, {1, 1})}),
      StatusIs(kInvalid, specified + "is a 1-D tensor of size 2 and input's axis dimension is "
                                     "of size 3"));
  EXPECT_THAT(axis.Run({x, Literal<float>({1, 3}, {-1, 0, 0}), Literal<float>({3}, {1, 1, 1})}),
              StatusIs(kInvalid, specified + "dims are 2"));
  EXPECT_THAT(
      axis.Run({x, Literal<float>({3}, {-1, 0, 0}), Literal<float>({2}, {1, 1})}),
      StatusIs(kInvalid,
               "If axis is specified, max_range must be a 1-D tensor whose size matches the "
               "axis dimension of the input and output tensors, but max_range is a 1-D tensor "
               "of size 2 and input's axis dimension is of size 3"));
  KernelRunner far("QuantizeV2");
  far.Attr("T", DT_QUINT8).Attr("axis", int64_t{3});
  EXPECT_THAT(
      far.Run({Literal<float>({1}, {1}), Literal<float>({1}, {-1}), Literal<float>({1}, {1})}),
      StatusIs(kInvalid,
               "Axis is on a zero-based index, so its value must always be less than "
               "number of input's dims, but given axis value was 3 and input's dims "
               "was 1"));
  KernelRunner first("QuantizeV2");
  first.Attr("T", DT_QUINT8).Attr("axis", int64_t{1}).Attr("mode", "MIN_FIRST");
  EXPECT_THAT(
      first.Run({x, Literal<float>({3}, {-1, -4, -2}), Literal<float>({3}, {2, 1, 1})}),
      StatusIs(kUnimplemented, "MIN_FIRST mode is not implemented for Quantize with axis != -1."));
  KernelRunner slice("QuantizeV2");
  slice.Attr("T", DT_QINT8).Attr("axis", int64_t{1}).Attr("mode", "SCALED");
  EXPECT_THAT(slice.Run({x, Literal<float>({3}, {-1, 2, 0}), Literal<float>({3}, {1, 1, 1})}),
              StatusIs(kInvalid, "input_max_range must be larger than input_min_range."));
}

struct DequantizeCase {
  DataType type;
  std::vector<int64_t> values;
  std::vector<float> combined, scaled;  // MIN_FIRST gives MIN_COMBINED's values here
};

TEST(DequantizeTest, EveryTypeAndModeMatchesTensorFlow) {
  const std::vector<DequantizeCase> cases = {
      {DT_QUINT8,
       {0, 1, 85, 128, 200, 255},
       {-1.5f, -1.4852941036224365f, -0.25f, 0.38235294818878174f, 1.441176414489746f, 2.25f},
       {0, 0.008823529817163944f, 0.7500000596046448f, 1.1294118165969849f, 1.764706015586853f,
        2.25f}},
      {DT_QINT8,
       {-128, -127, -1, 0, 1, 64, 127},
       {-1.5f, -1.4852941036224365f, 0.36764705181121826f, 0.38235294818878174f,
        0.3970588445663452f, 1.3235294818878174f, 2.25f},
       {-2.267716646194458f, -2.25f, -0.017716536298394203f, 0, 0.017716536298394203f,
        1.133858323097229f, 2.25f}},
      {DT_QUINT16,
       {0, 1, 32768, 65535},
       {-1.5f, -1.4999427795410156f, 0.3750286102294922f, 2.25f},
       {0, 3.433279925957322e-05f, 1.1250171661376953f, 2.25f}},
      {DT_QINT16,
       {-32768, -32767, 0, 12345, 32767},
       {-1.5f, -1.4999427795410156f, 0.3750286102294922f, 1.0814259052276611f, 2.25f},
       {-2.2500686645507812f, -2.25f, 0, 0.8476897478103638f, 2.25f}},
      // Integers that round to 2^31 as floats: 2.25 in MIN_COMBINED, back
      // through int32 (INT32_MIN) in SCALED.
      {DT_QINT32,
       {-2147483648, -5, 0, 7, 1073741824, 2147483647, 2147483520, 2147483583, 2147483584,
        16777217},
       {-1.5f, 0.375f, 0.375f, 0.375f, 1.3125f, 2.25f, 2.25f, 2.25f, 2.25f, 0.3896484375f},
       {-2.25f, -5.238689482212067e-09f, 0, 7.334165275096893e-09f, 1.125f, -2.25f,
        2.249999761581421f, 2.249999761581421f, -2.25f, 0.017578125f}},
  };
  for (const DequantizeCase& c : cases) {
    const int64_t n = static_cast<int64_t>(c.values.size());
    const Tensor x = Quantized(c.type, {n}, c.values);
    for (const char* mode : {"MIN_COMBINED", "MIN_FIRST", "SCALED"}) {
      SCOPED_TRACE(DataTypeString(c.type) + " " + mode);
      KernelRunner r("Dequantize");
      r.Attr("mode", std::string(mode));
      const bool scaled = std::string(mode) == "SCALED";
      EXPECT_THAT(RunOk(r, {x, Scalar<float>(-1.5f), Scalar<float>(2.25f)}),
                  TensorIs<float>({n}, scaled ? c.scaled : c.combined));
      if (scaled) {  // narrow_range changes nothing here (TF's)
        r.Attr("narrow_range", true);
        EXPECT_THAT(RunOk(r, {x, Scalar<float>(-1.5f), Scalar<float>(2.25f)}),
                    TensorIs<float>({n}, c.scaled));
      }
    }
  }
}

TEST(DequantizeTest, RangesAxesAndBfloat16MatchTensorFlow) {
  const Tensor bytes = Quantized(DT_QUINT8, {3}, {0, 1, 255});
  for (const char* mode : {"MIN_COMBINED", "MIN_FIRST"}) {
    KernelRunner r("Dequantize");
    r.Attr("mode", std::string(mode));
    EXPECT_THAT(RunOk(r, {bytes, Scalar<float>(0.5f), Scalar<float>(0.5f)}),
                TensorIs<float>({3}, {0.5f, 0.5f, 0.5f}));
  }
  KernelRunner first("Dequantize");
  first.Attr("mode", "MIN_FIRST");
  EXPECT_THAT(
      RunOk(first, {bytes, Scalar<float>(0.3f), Scalar<float>(6.7f)}),
      TensorIs<float>({3}, {0.30117642879486084f, 0.32627445459365845f, 6.701176166534424f}));
  // A zero range scales by -0 (TF's std::max(-0, 0)).
  KernelRunner scaled("Dequantize");
  scaled.Attr("mode", "SCALED");
  const Tensor zero_range =
      RunOk(scaled, {Quantized(DT_QINT8, {3}, {-128, 1, 127}), Scalar<float>(0), Scalar<float>(0)});
  ASSERT_EQ(zero_range.NumElements(), 3);
  EXPECT_FALSE(std::signbit(zero_range.data<float>()[0]));
  EXPECT_TRUE(std::signbit(zero_range.data<float>()[1]));
  EXPECT_TRUE(std::signbit(zero_range.data<float>()[2]));

  const Tensor grid = Quantized(DT_QUINT8, {2, 3}, {0, 1, 85, 128, 200, 255});
  KernelRunner columns("Dequantize");
  columns.Attr("axis", int64_t{1});
  EXPECT_THAT(
      RunOk(columns, {grid, Literal<float>({3}, {-1, 0, 2}), Literal<float>({3}, {1, 4, 3})}),
      TensorIs<float>({2, 3}, {-1, 0.01568627543747425f, 2.3333332538604736f, 0.003921627998352051f,
                               3.1372551918029785f, 3}));
  KernelRunner rows("Dequantize");
  rows.Attr("axis", int64_t{0}).Attr("mode", "SCALED");
  EXPECT_THAT(RunOk(rows, {Quantized(DT_QINT8, {2, 3}, {-128, -1, 0, 1, 64, 127}),
                           Literal<float>({2}, {-1, -2}), Literal<float>({2}, {1, 4})}),
              TensorIs<float>({2, 3}, {-1.0078740119934082f, -0.007874015718698502f, 0,
                                       0.031496062874794006f, 2.0157480239868164f, 4}));
  KernelRunner bf16("Dequantize");
  bf16.Attr("axis", int64_t{1}).Attr("dtype", DT_BFLOAT16);
  EXPECT_THAT(RunOk(bf16, {grid, Literal<float>({3}, {-1, 0, 2}), Literal<float>({3}, {1, 4, 3})}),
              TensorIs<bfloat16>(
                  {2, 3}, {bfloat16(-1.0f), bfloat16(0.0157470703125f), bfloat16(2.328125f),
                           bfloat16(0.003936767578125f), bfloat16(3.140625f), bfloat16(3.0f)}));
  KernelRunner bf16_whole("Dequantize");
  bf16_whole.Attr("dtype", DT_BFLOAT16);
  EXPECT_THAT(RunOk(bf16_whole, {Quantized(DT_QUINT8, {5}, {0, 1, 85, 200, 255}),
                                 Scalar<float>(-1.5f), Scalar<float>(2.25f)}),
              TensorIs<bfloat16>({5}, {bfloat16(-1.5f), bfloat16(-1.484375f), bfloat16(-0.25f),
                                       bfloat16(1.4375f), bfloat16(2.25f)}));
  // One slice on the axis: the scalar path.
  EXPECT_THAT(RunOk(columns, {Quantized(DT_QUINT8, {2, 1}, {3, 200}), Literal<float>({1}, {-1}),
                              Literal<float>({1}, {1})}),
              TensorIs<float>({2, 1}, {-0.9764705896377563f, 0.5686275959014893f}));
}

TEST(DequantizeTest, BadInputsGetTensorFlowsMessages) {
  const Tensor grid = Quantized(DT_QUINT8, {2, 3}, {0, 1, 85, 128, 200, 255});
  for (const char* mode : {"MIN_FIRST", "SCALED"}) {
    KernelRunner r("Dequantize");
    r.Attr("dtype", DT_BFLOAT16).Attr("mode", std::string(mode));
    EXPECT_THAT(r.Run({grid, Scalar<float>(-1), Scalar<float>(1)}),
                StatusIs(kInvalid, absl::StrCat("When output type is bfloat16, Mode string "
                                                "must be 'MIN_COMBINED', is '",
                                                mode, "'")));
  }
  KernelRunner far("Dequantize");
  far.Attr("axis", int64_t{2});
  EXPECT_THAT(far.Run({grid, Literal<float>({1}, {-1}), Literal<float>({1}, {1})}),
              StatusIs(kInvalid, "Axis must be less than input dimension(2), got 2"));
  KernelRunner columns("Dequantize");
  columns.Attr("axis", int64_t{1});
  EXPECT_THAT(columns.Run({grid, Literal<float>({2}, {-1, 0}), Literal<float>({3}, {1, 1, 1})}),
              StatusIs(kInvalid,
                       "input_min_tensor must have as many elements as input on the "
                       "dequantization axis (1), got 2, expected 3"));
  EXPECT_THAT(columns.Run({grid, Literal<float>({3}, {-1, 0, 0}), Literal<float>({2}, {1, 1})}),
              StatusIs(kInvalid,
                       "input_max_tensor must have as many elements as input on the "
                       "dequantization axis (1), got 2, expected 3"));
  KernelRunner whole("Dequantize");
  EXPECT_THAT(whole.Run({grid, Literal<float>({0}, {}), Scalar<float>(1)}),
              StatusIs(kInvalid,
                       "input_min_tensor must have as many elements as input on the "
                       "dequantization axis (-1), got 0, expected 1"));
  KernelRunner first("Dequantize");
  first.Attr("axis", int64_t{1}).Attr("mode", "MIN_FIRST");
  EXPECT_THAT(first.Run({grid, Literal<float>({3}, {-1, 0, 2}), Literal<float>({3}, {1, 4, 3})}),
              StatusIs(kUnimplemented,
                       "MIN_FIRST mode is not implemented for Dequantize with axis != -1."));
}

}  // namespace
}  // namespace towerflow
