// TF 1's eight-bit inference ops against TensorFlow 2.21's values and
// messages (tf.raw_ops with TF_ENABLE_ONEDNN_OPTS=0, TF's own CPU kernels,
// on these inputs): zero points inside and outside the types, reversed
// ranges, TF's fixed-point requantisation, its SAME window placement, and
// the bad inputs that crashed TF (an empty convolution output).
#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::testing::ElementsAreArray;
using testing::StatusIs;
constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;

// A tensor of quantized `dtype` whose integers (of C++ type S) are `v`.
template <typename S>
Tensor QTensor(DataType dtype, const TensorShape& shape, const std::vector<S>& v) {
  Tensor t(dtype, shape);
  std::memcpy(t.raw_data(), v.data(), v.size() * sizeof(S));
  return t;
}
Tensor U8(const TensorShape& shape, const std::vector<uint8_t>& v) {
  return QTensor(DT_QUINT8, shape, v);
}
Tensor I8(const TensorShape& shape, const std::vector<int8_t>& v) {
  return QTensor(DT_QINT8, shape, v);
}
Tensor I32(const TensorShape& shape, const std::vector<int32_t>& v) {
  return QTensor(DT_QINT32, shape, v);
}

// The integers of t, of C++ type S.
template <typename S>
std::vector<int64_t> IntsOf(const Tensor& t) {
  const S* v = static_cast<const S*>(t.raw_data());
  return std::vector<int64_t>(v, v + t.NumElements());
}

Tensor F(float v) { return Literal<float>({}, {v}); }

// Every output of one run of k.
std::vector<Tensor> RunAll(KernelRunner& k, const std::vector<Tensor>& inputs) {
  absl::StatusOr<std::vector<Tensor>> out = k.Run(inputs);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *std::move(out) : std::vector<Tensor>(3);
}

// Runs `k` and checks output 0's shape and integers (of S) and the range.
template <typename S>
void ExpectQuantized(KernelRunner& k, const std::vector<Tensor>& inputs,
                     const std::vector<int64_t>& dims, const std::vector<int64_t>& values, float lo,
                     float hi) {
  const std::vector<Tensor> out = RunAll(k, inputs);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].shape(), TensorShape(dims));
  EXPECT_THAT(IntsOf<S>(out[0]), ElementsAreArray(values));
  EXPECT_THAT(out[1], TensorIs<float>({}, {lo}));
  EXPECT_THAT(out[2], TensorIs<float>({}, {hi}));
}

const std::vector<int32_t> kWide = {INT32_MIN, -19660800, -100000, 0, 5, 123456789, INT32_MAX};

TEST(RequantizeTest, IntoQuint8AndQint8MatchesTensorFlow) {
  const Tensor x = I32({7}, kWide);
  KernelRunner u8("Requantize");
  u8.Attr("out_type", DT_QUINT8);
  ExpectQuantized<uint8_t>(u8, {x, F(-10), F(10), F(-3), F(5)}, {7}, {0, 93, 96, 96, 96, 114, 255},
                           -3, 5);
  ExpectQuantized<uint8_t>(u8, {x, F(-10), F(10), F(0), F(0)}, {7}, {0, 0, 0, 0, 0, 0, 0}, 0, 0);
  KernelRunner i8("Requantize");
  i8.Attr("out_type", DT_QINT8);
  ExpectQuantized<int8_t>(i8, {x, F(-10), F(10), F(-4), F(4)}, {7}, {-128, -3, 0, 0, 0, 18, 127},
                          -4, 4);
  ExpectQuantized<int8_t>(i8, {x, F(-10), F(10), F(0), F(0)}, {7},
                          {-128, -128, -128, -128, -128, -128, -128}, 0, 0);
  // A requested range wholly below 0 is TF's too.
  ExpectQuantized<uint8_t>(u8, {x, F(-10), F(10), F(-1), F(-0.5f)}, {7},
                           {0, 255, 255, 255, 255, 255, 255}, -1, -0.5f);

  EXPECT_THAT(u8.Run({x, F(-10), F(10), F(0.5f), F(2)}),
              StatusIs(kInvalid, "requested_output_min must be <= 0, but got 0.5"));
  EXPECT_THAT(u8.Run({x, F(-10), F(10), F(-1), F(-2)}),
              StatusIs(kInvalid,
                       "requested_output_max must be >= "
                       "requested_output_min, but got -2 and -1"));
  EXPECT_THAT(u8.Run({x, Literal<float>({2}, {-10, 1}), F(10), F(-1), F(2)}),
              StatusIs(kInvalid, "`input_min` must be rank 0 but is rank 1"));
}

TEST(RequantizationRangeTest, RangeOfTheValuesMatchesTensorFlow) {
  KernelRunner k("RequantizationRange");
  std::vector<Tensor> out = RunAll(k, {I32({7}, kWide), F(-8), F(8)});
  EXPECT_THAT(out[0], TensorIs<float>({}, {-8}));
  EXPECT_THAT(out[1], TensorIs<float>({}, {8}));
  // The minimum is never above 0.
  out = RunAll(k, {I32({2}, {100000, 2000000}), F(-8), F(8)});
  EXPECT_THAT(out[0], TensorIs<float>({}, {0}));
  EXPECT_THAT(out[1], TensorIs<float>({}, {0.007450582459568977f}));
  out = RunAll(k, {I32({0}, {}), F(-8), F(8)});
  EXPECT_THAT(out[0], TensorIs<float>({}, {0}));
  EXPECT_THAT(out[1], TensorIs<float>({}, {-8}));
  EXPECT_THAT(k.Run({I32({1}, {1}), Literal<float>({0}, {}), F(8)}),
              StatusIs(kInvalid, "Input min must not be empty."));
}

TEST(QuantizeDownAndShrinkRangeTest, MatchesTensorFlow) {
  KernelRunner k("QuantizeDownAndShrinkRange");
  k.Attr("out_type", DT_QUINT8);
  ExpectQuantized<uint8_t>(k, {I32({7}, kWide), F(-8), F(8)}, {7},
                           {0, 126, 127, 128, 128, 135, 255}, -8, 8);
  ExpectQuantized<uint8_t>(k, {I32({4}, {-300000, 70000, 1234567, -5}), F(-50), F(50)}, {4},
                           {0, 61, 255, 50}, -0.006984907668083906f, 0.028744515031576157f);
}

TEST(QuantizedReluTest, ClampsAtTheIntegersForZeroAndSix) {
  const Tensor u = U8({6}, {0, 100, 128, 200, 255, 31});
  KernelRunner relu("QuantizedRelu");
  relu.Attr("out_type", DT_QUINT8);
  ExpectQuantized<uint8_t>(relu, {u, F(-1), F(1)}, {6}, {128, 128, 128, 200, 255, 128}, -1, 1);
  ExpectQuantized<uint8_t>(relu, {u, F(0.5f), F(1)}, {6}, {0, 100, 128, 200, 255, 31}, 0.5f, 1);
  KernelRunner relu6("QuantizedRelu6");
  relu6.Attr("out_type", DT_QUINT8);
  ExpectQuantized<uint8_t>(relu6, {u, F(-2), F(10)}, {6}, {43, 100, 128, 171, 171, 43}, -2, 10);

  const Tensor w = I32({6}, {-5, 0, 7, INT32_MIN, INT32_MAX, 90000000});
  KernelRunner relu32("QuantizedRelu");
  relu32.Attr("out_type", DT_QINT32);
  ExpectQuantized<int32_t>(relu32, {w, F(-100), F(100)}, {6}, {0, 0, 7, 0, INT32_MAX, 90000000},
                           -100, 100);
  KernelRunner relu6_32("QuantizedRelu6");
  relu6_32.Attr("out_type", DT_QINT32);
  ExpectQuantized<int32_t>(relu6_32, {w, F(-10), F(20)}, {6},
                           {-5, 0, 7, -715827883, 143165576, 90000000}, -10, 20);
  EXPECT_THAT(relu.Run({u, Literal<float>({0}, {}), F(1)}),
              StatusIs(kInvalid, "`min_features` must be rank 0 but is rank 1"));
}

TEST(QuantizedPoolTest, MaxAndAverageMatchTensorFlow) {
  const Tensor img = U8({1, 3, 3, 1}, {3, 200, 17, 45, 90, 255, 0, 128, 64});
  for (const auto& [padding, dims, max, avg] :
       {std::tuple{"SAME", std::vector<int64_t>{1, 2, 2, 1},
                   std::vector<int64_t>{200, 255, 128, 64}, std::vector<int64_t>{84, 136, 64, 64}},
        std::tuple{"VALID", std::vector<int64_t>{1, 1, 1, 1}, std::vector<int64_t>{200},
                   std::vector<int64_t>{84}}}) {
    SCOPED_TRACE(padding);
    KernelRunner m("QuantizedMaxPool");
    m.Attr("ksize", {1, 2, 2, 1}).Attr("strides", {1, 2, 2, 1}).Attr("padding", padding);
    ExpectQuantized<uint8_t>(m, {img, F(-1), F(3)}, dims, max, -1, 3);
    KernelRunner a("QuantizedAvgPool");
    a.Attr("ksize", {1, 2, 2, 1}).Attr("strides", {1, 2, 2, 1}).Attr("padding", padding);
    ExpectQuantized<uint8_t>(a, {img, F(-1), F(3)}, dims, avg, -1, 3);
  }
  // qint8, the average rounded toward zero.
  const Tensor img8 = I8({2, 2, 1, 2}, {3, -7, -128, 127, 50, -50, -3, -2});
  KernelRunner m8("QuantizedMaxPool");
  m8.Attr("ksize", {1, 2, 1, 1}).Attr("strides", {1, 1, 1, 1}).Attr("padding", "VALID");
  ExpectQuantized<int8_t>(m8, {img8, F(-1), F(3)}, {2, 1, 1, 2}, {3, 127, 50, -2}, -1, 3);
  KernelRunner a8("QuantizedAvgPool");
  a8.Attr("ksize", {1, 2, 1, 1}).Attr("strides", {1, 1, 1, 1}).Attr("padding", "VALID");
  ExpectQuantized<int8_t>(a8, {img8, F(-1), F(3)}, {2, 1, 1, 2}, {-62, 60, 23, -26}, -1, 3);
  // A window larger than the image gives an empty output, as TF.
  KernelRunner big("QuantizedMaxPool");
  big.Attr("ksize", {1, 4, 4, 1}).Attr("strides", {1, 1, 1, 1}).Attr("padding", "VALID");
  ExpectQuantized<uint8_t>(big, {img, F(-1), F(3)}, {1, 0, 0, 1}, {}, -1, 3);

  KernelRunner batch("QuantizedAvgPool");
  batch.Attr("ksize", {2, 1, 1, 1}).Attr("strides", {1, 1, 1, 1}).Attr("padding", "SAME");
  EXPECT_THAT(batch.Run({img, F(-1), F(3)}),
              StatusIs(absl::StatusCode::kUnimplemented,
                       "Pooling is not yet supported on the batch dimension."));
}

TEST(QuantizedBiasAddTest, SumInTheWideRangeMatchesTensorFlow) {
  KernelRunner u8("QuantizedBiasAdd");
  u8.Attr("out_type", DT_QINT32);
  ExpectQuantized<int32_t>(u8,
                           {U8({2, 3}, {0, 10, 255, 128, 77, 3}), U8({3}, {0, 128, 255}), F(-1),
                            F(2), F(-0.5f), F(0.25f)},
                           {2, 3}, {-12288, -8240, 18432, 48, -1783, -5855}, -262144, 262144);
  KernelRunner i8("QuantizedBiasAdd");
  i8.Attr("out_type", DT_QINT32);
  ExpectQuantized<int32_t>(i8,
                           {I8({2, 3}, {-128, 10, 127, 0, -77, 3}), I8({3}, {0, -128, 127}), F(-4),
                            F(3), F(-0.5f), F(1.5f)},
                           {2, 3}, {-14360, -2956, 18392, 32, -12738, 4449}, -524288, 524288);

  const Tensor b = U8({3}, {1, 2, 3});
  EXPECT_THAT(u8.Run({U8({2}, {1, 2}), b, F(-1), F(2), F(-0.5f), F(0.25f)}),
              StatusIs(kInvalid, "Input tensor must be at least 2D: [2]"));
  EXPECT_THAT(u8.Run({U8({1, 2}, {1, 2}), b, F(-1), F(2), F(-0.5f), F(0.25f)}),
              StatusIs(kInvalid,
                       "Must provide as many biases as the last dimension "
                       "of the input tensor: [3] vs. [1,2]"));
}

// QuantizedConv2D's input [1, 3, 4, 2] and filter [2, 2, 2, 3].
const std::vector<uint8_t> kConvInput = {12,  200, 3,  45, 255, 0,  77, 128, 9,   31, 64, 180,
                                         222, 5,   90, 17, 140, 60, 33, 250, 101, 88, 7,  160};
const std::vector<uint8_t> kConvFilter = {0,  255, 128, 64, 32, 200, 17, 99,  180, 250, 1,   140,
                                          77, 66,  55,  44, 33, 22,  11, 160, 240, 230, 220, 210};

TEST(QuantizedConv2DTest, MatchesTensorFlow) {
  const Tensor input = U8({1, 3, 4, 2}, kConvInput);
  const Tensor filter = U8({2, 2, 2, 3}, kConvFilter);
  KernelRunner same("QuantizedConv2D");
  same.Attr("strides", {1, 1, 1, 1}).Attr("padding", "SAME");
  ExpectQuantized<int32_t>(
      same, {input, filter, F(-1), F(2), F(-0.5f), F(1.5f)}, {1, 3, 4, 3},
      {18061, -3647, 11542, -41266, -5392,  11203, -10678, 24827, -5261, 1937,  -786,   8147,
       54882, 2125,  8069,  -24301, -431,   18180, -4919,  37337, -9748, -2834, 650,    -11376,
       29614, -910,  6628,  3134,   -14841, 21196, 16592,  -4495, -1916, 4992,  -17298, 5208},
      -198153.0625f, 198153.0625f);
  KernelRunner valid("QuantizedConv2D");
  valid.Attr("strides", {1, 2, 2, 1}).Attr("padding", "VALID");
  ExpectQuantized<int32_t>(valid, {input, filter, F(-1), F(2), F(-0.5f), F(1.5f)}, {1, 1, 2, 3},
                           {18061, -3647, 11542, -10678, 24827, -5261}, -198153.0625f,
                           198153.0625f);
  // A range without 0: the zero point is below the type, and the padding
  // adds nothing.
  KernelRunner strided("QuantizedConv2D");
  strided.Attr("strides", {1, 2, 2, 1}).Attr("padding", "SAME");
  ExpectQuantized<int32_t>(
      strided, {input, filter, F(0.5f), F(2), F(-0.5f), F(1.5f)}, {1, 2, 2, 3},
      {48831, 56533, 124252, 20092, 85007, 107449, 42364, 21360, 73268, 29342, 17775, 64724},
      -99076.53125f, 99076.53125f);
  // Reversed ranges, the filter's zero point (512) above quint8.
  std::vector<uint8_t> in18(18), f24(24);
  for (int i = 0; i < 24; ++i) {
    if (i < 18) in18[i] = static_cast<uint8_t>(i);
    f24[i] = static_cast<uint8_t>(i);
  }
  ExpectQuantized<int32_t>(
      same, {U8({1, 3, 3, 2}, in18), U8({2, 2, 2, 3}, f24), F(2), F(-1), F(-3), F(-1.5f)},
      {1, 3, 3, 3}, {661512, 660188, 658864, 653520, 652212, 650904, 326700, 326050, 325400,
                     637536, 636260, 634984, 629544, 628284, 627024, 314640, 314014, 313388,
                     316458, 315832, 315206, 312414, 311796, 311178, 156111, 155804, 155497},
      148614.796875f, -148614.796875f);
}

TEST(QuantizedConv2DTest, WindowPlacementIsTensorFlowsQuantizedOne) {
  // A 1x1 filter striding 3 over 6x6: VALID starts at 0, SAME (total
  // padding -2) one pixel in, unlike Conv2D.
  std::vector<uint8_t> image(36);
  for (int i = 0; i < 36; ++i) image[i] = static_cast<uint8_t>(7 * i);
  const Tensor input = U8({1, 6, 6, 1}, image);
  const Tensor filter = U8({1, 1, 1, 1}, {200});
  for (const auto& [padding, values] :
       {std::pair{"VALID", std::vector<int64_t>{-11560, -8704, 5576, 8432}},
        std::pair{"SAME", std::vector<int64_t>{-4896, -2040, 12240, 15096}}}) {
    SCOPED_TRACE(padding);
    KernelRunner k("QuantizedConv2D");
    k.Attr("strides", {1, 3, 3, 1}).Attr("padding", padding);
    ExpectQuantized<int32_t>(k, {input, filter, F(-1), F(2), F(-0.5f), F(1.5f)}, {1, 2, 2, 1},
                             values, -198153.0625f, 198153.0625f);
  }
}

TEST(QuantizedConv2DTest, BadInputsAreErrors) {
  const Tensor filter = U8({2, 2, 2, 3}, kConvFilter);
  KernelRunner k("QuantizedConv2D");
  k.Attr("strides", {1, 1, 1, 1}).Attr("padding", "VALID");
  EXPECT_THAT(k.Run({U8({3, 3, 2}, std::vector<uint8_t>(18)), filter, F(-1), F(2), F(-1), F(1)}),
              StatusIs(kInvalid, "input must be rank 4 but is rank 3"));
  EXPECT_THAT(k.Run({U8({1, 3, 4, 3}, std::vector<uint8_t>(36)), filter, F(-1), F(2), F(-1), F(1)}),
              StatusIs(kInvalid, "input and filter must have the same depth: 3 vs 2"));
  EXPECT_THAT(k.Run({U8({1, 3, 4, 2}, kConvInput), filter, Literal<float>({2}, {-1, 0}), F(2),
                     F(-1), F(1)}),
              StatusIs(kInvalid, "`min_input` must be rank 0 but is rank 1"));
  // TF's kernel CHECK-fails on an empty output; here it is empty.
  ExpectQuantized<int32_t>(k, {U8({1, 1, 1, 2}, {1, 2}), filter, F(-1), F(2), F(-1), F(1)},
                           {1, 0, 0, 3}, {}, -198153.0625f, 198153.0625f);
  // No input channels: empty sums.
  ExpectQuantized<int32_t>(k,
                           {U8({1, 3, 4, 0}, {}), U8({2, 2, 0, 3}, {}), F(-1), F(2), F(-1), F(1)},
                           {1, 2, 3, 3}, std::vector<int64_t>(18, 0), -198153.0625f, 198153.0625f);
  KernelRunner strides("QuantizedConv2D");
  strides.Attr("strides", {1, 1, 2, 1}).Attr("padding", "SAME");
  EXPECT_THAT(strides.Run({U8({1, 3, 4, 2}, kConvInput), filter, F(-1), F(2), F(-1), F(1)}),
              StatusIs(kInvalid, "only supports equal length strides"));
  KernelRunner dilated("QuantizedConv2D");
  dilated.Attr("strides", {1, 1, 1, 1}).Attr("padding", "VALID").Attr("dilations", {1, 2, 2, 1});
  EXPECT_THAT(dilated.Run({U8({1, 3, 4, 2}, kConvInput), filter, F(-1), F(2), F(-1), F(1)}),
              StatusIs(kInvalid, "only supports dilated rate as 1"));
}

TEST(QuantizedMatMulTest, EveryTransposeMatchesTensorFlow) {
  const Tensor a = U8({2, 3}, {12, 200, 3, 45, 255, 0});
  const Tensor b = U8({3, 2}, {77, 128, 9, 31, 64, 180});
  const Tensor at = U8({3, 2}, {12, 45, 200, 255, 3, 0});
  const Tensor bt = U8({2, 3}, {77, 9, 64, 128, 31, 180});
  const std::vector<int64_t> product = {-7274, -17979, -9870, -18030};
  for (const auto& [ta, tb] : {std::pair{false, false}, std::pair{true, false},
                               std::pair{false, true}, std::pair{true, true}}) {
    SCOPED_TRACE(absl::StrCat(ta, tb));
    KernelRunner k("QuantizedMatMul");
    k.Attr("transpose_a", ta).Attr("transpose_b", tb);
    ExpectQuantized<int32_t>(k, {ta ? at : a, tb ? bt : b, F(-1), F(2), F(-0.5f), F(1.5f)}, {2, 2},
                             product, -198153.0625f, 198153.0625f);
  }
  KernelRunner k("QuantizedMatMul");
  // TF leaves an empty sum's output unwritten; it is 0.
  ExpectQuantized<int32_t>(k, {U8({2, 0}, {}), U8({0, 3}, {}), F(-1), F(2), F(-0.5f), F(1.5f)},
                           {2, 3}, {0, 0, 0, 0, 0, 0}, -198153.0625f, 198153.0625f);
  EXPECT_THAT(k.Run({a, b, F(2), F(2), F(-0.5f), F(1.5f)}),
              StatusIs(kInvalid, "max_a must be larger than min_a."));
  EXPECT_THAT(k.Run({a, a, F(-1), F(2), F(-0.5f), F(1.5f)}),
              StatusIs(kInvalid, "Matrix size-incompatible: In[0]: [2,3], In[1]: [2,3]"));
  EXPECT_THAT(k.Run({U8({1, 2, 3}, std::vector<uint8_t>(6)), b, F(-1), F(2), F(-0.5f), F(1.5f)}),
              StatusIs(kInvalid, "In[0] is not a matrix"));
}

TEST(QuantizedAddTest, SumsInTheWideRangeMatchTensorFlow) {
  const Tensor x = U8({2, 3}, {0, 10, 255, 128, 77, 3});
  const Tensor row = U8({3}, {0, 128, 255});
  KernelRunner k("QuantizedAdd");
  ExpectQuantized<int32_t>(k,
                           {x, U8({2, 3}, {5, 250, 128, 1, 2, 3}), F(-1), F(2), F(-0.5f), F(0.25f)},
                           {2, 3}, {-97339, -42344, 123005, 577, -38551, -95412}, -32768, 32768);
  const std::vector<int64_t> row_sum = {-98304, -65890, 147516, 384, -14233, -46776};
  ExpectQuantized<int32_t>(k, {x, row, F(-1), F(2), F(-0.5f), F(0.25f)}, {2, 3}, row_sum, -32768,
                           32768);
  ExpectQuantized<int32_t>(k, {row, x, F(-0.5f), F(0.25f), F(-1), F(2)}, {2, 3}, row_sum, -32768,
                           32768);
  // A single element goes through float (TF's scalar path).
  ExpectQuantized<int32_t>(k, {x, U8({1}, {200}), F(-1), F(2), F(-3), F(0.5f)}, {2, 3},
                           {-55085, -49945, 75985, 10707, -15507, -53543}, -49152, 49152);
  ExpectQuantized<int32_t>(k, {U8({}, {9}), x, F(0.5f), F(3), F(-1), F(2)}, {2, 3},
                           {-17991, -12851, 113079, 47801, 21587, -16449}, -49152, 49152);
  ExpectQuantized<int32_t>(k, {x, row, F(-100), F(20), F(-0.001f), F(0.002f)}, {2, 3},
                           {-131381, -125221, 25699, -52533, -83949, -129533}, -1638400, 1638400);
  // A column broadcasts as NumPy's (TF's kernel repeats it as a row).
  const std::vector<Tensor> col =
      RunAll(k, {x, U8({2, 1}, {7, 9}), F(-1), F(2), F(-0.5f), F(0.25f)});
  const std::vector<Tensor> full =
      RunAll(k, {x, U8({2, 3}, {7, 7, 7, 9, 9, 9}), F(-1), F(2), F(-0.5f), F(0.25f)});
  EXPECT_EQ(IntsOf<int32_t>(col[0]), IntsOf<int32_t>(full[0]));

  EXPECT_THAT(k.Run({x, U8({2}, {1, 2}), F(-1), F(2), F(-0.5f), F(0.25f)}),
              StatusIs(kInvalid, "Incompatible shapes: [2,3] vs. [2]"));
  EXPECT_THAT(k.Run({x, row, F(2), F(2), F(-0.5f), F(0.25f)}),
              StatusIs(kInvalid, "max_x must be larger than min_x."));
  EXPECT_THAT(k.Run({x, row, F(-1), F(2), F(0.5f), F(0.25f)}),
              StatusIs(kInvalid, "max_y must be larger than min_y."));
  EXPECT_THAT(k.Run({x, row, Literal<float>({2}, {-1, 0}), F(2), F(-0.5f), F(0.25f)}),
              StatusIs(kInvalid, "`min_x` must be rank 0 but is rank 1"));
}

TEST(QuantizedMulTest, ProductsLessTheZeroPointsMatchTensorFlow) {
  const Tensor x = U8({2, 3}, {0, 10, 255, 128, 77, 3});
  const Tensor row = U8({3}, {0, 128, 255});
  KernelRunner k("QuantizedMul");
  ExpectQuantized<int32_t>(
      k, {x, U8({2, 3}, {5, 250, 128, 1, 2, 3}), F(-1), F(2), F(-0.5f), F(0.25f)}, {2, 3},
      {14025, -6000, -7140, -7267, 1344, 13694}, -74307.3984375f, 74307.3984375f);
  const std::vector<int64_t> row_product = {14450, 3150, 14450, -7310, 336, -6970};
  ExpectQuantized<int32_t>(k, {x, row, F(-1), F(2), F(-0.5f), F(0.25f)}, {2, 3}, row_product,
                           -74307.3984375f, 74307.3984375f);
  ExpectQuantized<int32_t>(k, {row, x, F(-0.5f), F(0.25f), F(-1), F(2)}, {2, 3}, row_product,
                           -74307.3984375f, 74307.3984375f);
  ExpectQuantized<int32_t>(k, {x, U8({1}, {200}), F(-1), F(2), F(-3), F(0.5f)}, {2, 3},
                           {1615, 1425, -3230, -817, 152, 1558}, -346767.84375f, 346767.84375f);
  ExpectQuantized<int32_t>(k, {U8({}, {9}), x, F(0.5f), F(3), F(-1), F(2)}, {2, 3},
                           {-5100, -4500, 10200, 2580, -480, -4920}, -247691.328125f,
                           247691.328125f);
  EXPECT_THAT(k.Run({x, row, F(2), F(2), F(-0.5f), F(0.25f)}),
              StatusIs(kInvalid, "max_x must be larger than min_a."));
  EXPECT_THAT(k.Run({x, row, F(-1), F(2), F(0.5f), F(0.25f)}),
              StatusIs(kInvalid, "max_x must be larger than min_b."));
  EXPECT_THAT(k.Run({x, row, Literal<float>({2}, {-1, 0}), F(2), F(-0.5f), F(0.25f)}),
              StatusIs(kInvalid, "min_x must be a scalar"));
}

TEST(QuantizedBatchNormTest, FixedPointMatchesTensorFlow) {
  const Tensor t = U8({1, 2, 2, 3}, {0, 10, 255, 128, 77, 3, 200, 31, 64, 99, 150, 250});
  const Tensor m = U8({3}, {100, 128, 20}), v = U8({3}, {50, 255, 1});
  const Tensor beta = U8({3}, {0, 128, 255}), gamma = U8({3}, {255, 64, 128});
  const auto inputs = [&](float t_lo, float t_hi, float v_hi, float gamma_hi, Tensor var) {
    return std::vector<Tensor>{t,       F(t_lo), F(t_hi), m,    F(-0.5f), F(1), var,        F(0),
                               F(v_hi), beta,    F(-1),   F(1), gamma,    F(0), F(gamma_hi)};
  };
  for (const auto& [scaled, values] :
       {std::pair{true, std::vector<int64_t>{-7847, -657, 45410, 188, -189, -8544, 4708, -510, 4518,
                                             -1633, 319, 44343}},
        std::pair{false, std::vector<int64_t>{-4943, -1325, 45241, -926, -394, -8502, 1334, -1033,
                                              4509, -1836, 620, 44178}}}) {
    KernelRunner k("QuantizedBatchNormWithGlobalNormalization");
    k.Attr("out_type", DT_QINT32)
        .Attr("variance_epsilon", 0.001f)
        .Attr("scale_after_normalization", scaled);
    ExpectQuantized<int32_t>(k, inputs(-1, 2, 3, 2, v), {1, 2, 2, 3}, values, -1048576, 1048576);
  }
  // Products past 2^31 wrap, as TF's qint32 arithmetic.
  KernelRunner k("QuantizedBatchNormWithGlobalNormalization");
  k.Attr("out_type", DT_QINT32)
      .Attr("variance_epsilon", 0.0001f)
      .Attr("scale_after_normalization", true);
  ExpectQuantized<int32_t>(k, inputs(-100, 200, 0.01f, 20, v), {1, 2, 2, 3},
                           {-132617, -662932, 1051494, -573861, -988582, 335270, 357228, -232877,
                            1656932, 99551, -592201, 1286998},
                           -1048576, 1048576);
  EXPECT_THAT(k.Run(inputs(-1, 2, 3, 2, U8({2}, {1, 2}))),
              StatusIs(kInvalid, "Mean and var tensors must have the same shape: [3] vs. [2]"));
}

// QuantizedResizeBilinear of kConvInput as quint8 and, less 128 and times
// 2^24 - 1, as qint32.
struct ResizeCase {
  std::string name;
  bool qint32;
  std::vector<int32_t> size;
  bool align_corners, half_pixel_centers;
  std::vector<int64_t> dims, values;
};

TEST(QuantizedResizeBilinearTest, FixedPointMatchesTensorFlow) {
  std::vector<int32_t> wide;
  for (uint8_t v : kConvInput) wide.push_back((int32_t{v} - 128) * 16777215);
  const std::vector<ResizeCase> cases = {
      {"RB u8 ac=False hp=False",
       false,
       {5, 7},
       false,
       false,
       {1, 5, 7, 2},
       {12,  200, 7,   112, 38,  39,  182, 13,  205, 36,  103, 109, 77,  128, 10, 100, 26,  114,
        66,  108, 179, 38,  193, 20,  107, 54,  85,  62,  35,  37,  48,  126, 78, 169, 158, 71,
        163, 28,  92,  41,  74,  45,  113, 54,  71,  157, 52,  212, 101, 119, 97, 87,  39,  122,
        24,  131, 140, 60,  79,  168, 43,  227, 81,  135, 75,  108, 21,  149, 7,  160}},
      {"RB u8 ac=True hp=False",
       false,
       {5, 7},
       true,
       false,
       {1, 5, 7, 2},
       {12,  200, 8,   123, 3,   45,  129, 23,  255, 0,   166, 64,  77,  128, 11,  116, 22,  114,
        34,  113, 136, 58,  239, 3,   161, 38,  84,  73,  9,   31,  37,  106, 64,  180, 143, 93,
        222, 5,   156, 11,  90,  17,  75,  46,  62,  130, 49,  215, 105, 131, 162, 47,  105, 68,
        49,  89,  140, 60,  87,  155, 33,  250, 67,  169, 101, 88,  54,  124, 7,   160}},
      {"RB u8 ac=False hp=True",
       false,
       {5, 7},
       false,
       true,
       {1, 5, 7, 2},
       {12,  200, 9,   146, 4,   57,  129, 23,  242, 9,   141, 82,  77, 128, 11,  133, 16,  121,
        26,  101, 135, 50,  231, 8,   140, 55,  82,  84,  9,   31,  28, 83,  60,  168, 143, 93,
        213, 6,   137, 13,  90,  17,  87,  48,  72,  109, 49,  208, 98, 138, 143, 58,  80,  85,
        41,  102, 140, 60,  102, 127, 41,  235, 67,  169, 94,  93,  41, 134, 7,   160}},
      {"RB u8 ac=True hp=True",
       false,
       {5, 7},
       true,
       true,
       {1, 5, 7, 2},
       {12,  200, 10,  161, 5,   84, 66,  34,  192, 11,  211, 32,  122, 96,  11,  158, 13,  138,
        17,  99,  75,  59,  190, 21, 205, 26,  122, 76,  10,  73,  20,  92,  39,  128, 94,  110,
        185, 39,  195, 14,  122, 35, 42,  38,  45,  78,  53,  158, 90,  155, 158, 69,  161, 33,
        100, 46,  107, 53,  90,  98, 57,  187, 64,  191, 109, 108, 106, 82,  54,  110}},
      {"RB u8 down",
       false,
       {2, 3},
       false,
       false,
       {1, 2, 3, 2},
       {12, 200, 86, 30, 137, 85, 75, 46, 86, 160, 87, 74}},
      {"RB u8 same", false, {3, 4}, false, false, {1, 3, 4, 2}, {12,  200, 3,   45, 255, 0,
                                                                 77,  128, 9,   31, 64,  180,
                                                                 222, 5,   90,  17, 140, 60,
                                                                 33,  250, 101, 88, 7,   160}},
      {"RB i32 ac=False hp=False",
       true,
       {5, 7},
       false,
       false,
       {1, 5, 7, 2},
       {-1946156927, 1207959424,  -2032439756, -278022484,  -1493171916, -1500362369, 922747401,
        -1931776559, 1277464783,  -1533916580, -429017546,  -306783213,  -855637951,  0,
        -1976355917, -493250191,  -1694498683, -230566850,  -1014302298, -328354113,  860911234,
        -1507552863, 1077576277,  -1817211964, -364305393,  -1257332388, -724775661,  -1117362552,
        -1556925440, -1530081947, -1340259756, -23008632,   -842216105,  694097254,   499961234,
        -958698326,  574739137,   -1670051784, -617881058,  -1439964247, -916035982,  -1382442387,
        -238236296,  -1238158377, -953425132,  504754657,   -1283696577, 1417434935,  -459216253,
        -160582183,  -533995090,  -661980730,  -1508032166, -86761933,   -1751541334, 57042706,
        201326576,   -1140850559, -824480308,  680675684,   -1430856677, 1658547399,  -778941956,
        105456425,   -903573020,  -325957178,  -1804749085, 364305326,   -2030043007, 536870880}},
      {"RB i32 ac=True hp=False",
       true,
       {5, 7},
       true,
       false,
       {1, 5, 7, 2},
       {-1946156927, 1207959424,  -2021654399, -92274687,   -2097151871, -1392508799, 16777216,
        -1769996159, 2130706304,  -2147483519, 637534176,   -1073741759, -855637951,  0,
        -1971322751, -209715199,  -1778384783, -234881007,  -1585446815, -260046815,  134217712,
        -1182793647, 1853882240,  -2105540479, 553648096,   -1518337951, -746586047,  -931135423,
        -1996488575, -1627389823, -1535115167, -377487327,  -1073741759, 872415168,   251658208,
        -595591135,  1577058176,  -2063597439, 469762016,   -1962934143, -637534143,  -1862270847,
        -897580999,  -1384120191, -1115684787, 37748752,    -1333788575, 1459617696,  -385875943,
        46137344,    562036688,   -1367343007, -385875943,  -1015021495, -1333788575, -662699983,
        201326576,   -1140850559, -696254407,  452984832,   -1593835391, 2046820224,  -1023410095,
        687865824,   -452984799,  -671088575,  -1241513903, -67108847,   -2030043007, 536870880}},
      {"RB i32 ac=False hp=True",
       true,
       {5, 7},
       false,
       true,
       {1, 5, 7, 2},
       {-1946156927, 1207959424,  -2000083703, 279220595,   -2086366523, -1206761157, 16777216,
        -1769996159, 1917395390,  -1994091400, 210913059,   -766958033,  -855637951,  0,
        -1966289588, 73819623,    -1866824641, -126308541,  -1707680766, -446513525,  110729621,
        -1300234107, 1717986239,  -2016141613, 187904357,   -1233844128, -768396420,  -744908405,
        -1996488575, -1627389823, -1666936078, -734602156,  -1139652214, 693857754,   251658208,
        -595591135,  1418872558,  -2049216927, 153391307,   -1934173167, -637534143,  -1862270847,
        -677799169,  -1335466195, -930655948,  -295278652,  -1335226690, 1369020999,  -513382956,
        174483224,   228169457,   -1170569867, -818728629,  -710394778,  -1473039661, -422785467,
        201326576,   -1140850559, -439802820,  -2396490,    -1465609597, 1819129562,  -1023410095,
        687865824,   -565632136,  -584805510,  -1466808201, 105456994,   -2030043007, 536870880}},
      {"RB i32 ac=True hp=True",
       true,
       {5, 7},
       true,
       true,
       {1, 5, 7, 2},
       {-1946156927, 1207959424,  -1983905663, 557842368,  -2059403135, -742391743,  -1040187327,
        -1581252479, 1073741760,  -1958739839, 1384120240, -1610612639, -109051887,  -536870879,
        -1958739839, 499122112,   -1929379715, 167772132,  -1870659467, -494927827,  -882900939,
        -1151336355, 1033895868,  -1801453451, 1293942704, -1711275927, -102760431,  -880803783,
        -1983905663, -918552511,  -1820327819, -612368339, -1493172131, 4,           -568328163,
        -291504107,  954204084,   -1486880675, 1113587632, -1912602503, -90177519,   -1568669591,
        -1447034787, -1505755007, -1386217382, -837812147, -1264582572, 498073572,   -635437017,
        445644768,   501219282,   -995098559,  555745234,  -1602224021, -471859161,  -1375731617,
        -348127211,  -1262485375, -627048404,  -508559291, -1184890790, 999292876,   -1084227501,
        1060110272,  -325058537,  -326107103,  -379584489, -780140481,  -1247805357, -301989861}},
      {"RB i32 down",
       true,
       {2, 3},
       false,
       false,
       {1, 2, 3, 2},
       {-1946156927, 1207959424, -687865644, -1644167069, 139809896, -715827668, -897580999,
        -1384120191, -701846745, 517297349, -701846971, -897580936}},
      {"RB i32 same",
       true,
       {3, 4},
       false,
       false,
       {1, 3, 4, 2},
       {-1946156940, 1207959480,  -2097151875, -1392508845, 2130706305,  -2147483520,
        -855637965,  0,           -1996488585, -1627389855, -1073741760, 872415180,
        1577058210,  -2063597445, -637534170,  -1862270865, 201326580,   -1140850620,
        -1593835425, 2046820230,  -452984805,  -671088600,  -2030043015, 536870880}},
  };
  for (const ResizeCase& c : cases) {
    SCOPED_TRACE(c.name);
    KernelRunner k("QuantizedResizeBilinear");
    k.Attr("align_corners", c.align_corners).Attr("half_pixel_centers", c.half_pixel_centers);
    const std::vector<Tensor> inputs = {
        c.qint32 ? I32({1, 3, 4, 2}, wide) : U8({1, 3, 4, 2}, kConvInput),
        Literal<int32_t>({2}, c.size), F(-1), F(2)};
    if (c.qint32) {
      ExpectQuantized<int32_t>(k, inputs, c.dims, c.values, -1, 2);
    } else {
      ExpectQuantized<uint8_t>(k, inputs, c.dims, c.values, -1, 2);
    }
  }
  KernelRunner k("QuantizedResizeBilinear");
  EXPECT_THAT(k.Run({U8({1, 3, 4, 2}, kConvInput), Literal<int32_t>({2}, {5, 7}),
                     Literal<float>({2}, {1, 2}), F(2)}),
              StatusIs(kInvalid, "min must be a scalar"));
  EXPECT_THAT(k.Run({U8({1, 3, 4, 2}, kConvInput), Literal<int32_t>({2}, {0, 7}), F(-1), F(2)}),
              StatusIs(kInvalid, "positive"));
}

TEST(QuantizedConcatTest, RequantizesIntoTheOverallRange) {
  KernelRunner k("QuantizedConcat");
  k.Attr("N", int64_t{2}).Attr("T", DT_QUINT8);
  KernelRunner k32("QuantizedConcat");
  k32.Attr("N", int64_t{2}).Attr("T", DT_QINT32);
  std::vector<Tensor> out = RunAll(k, {Literal<int32_t>({}, {1}), U8({2, 2}, {0, 255, 128, 7}),
                                       U8({2, 1}, {1, 254}), F(-1), F(0.5f), F(1), F(3)});
  EXPECT_EQ(out[0].shape(), TensorShape({2, 3}));
  EXPECT_THAT(IntsOf<uint8_t>(out[0]), ElementsAreArray({0, 128, 97, 64, 4, 255}));
  EXPECT_THAT(out[1], TensorIs<float>({}, {-1}));
  EXPECT_THAT(out[2], TensorIs<float>({}, {3}));
  // qint32's range is symmetric about 0.
  out = RunAll(k32, {Literal<int32_t>({}, {0}), I32({3}, {INT32_MIN, 0, INT32_MAX}),
                     I32({2}, {1000, -1000000000}), F(-1), F(-5), F(1), F(3)});
  EXPECT_THAT(IntsOf<int32_t>(out[0]),
              ElementsAreArray({-429496736, 0, 429496736, -429495936, -1229496704}));
  EXPECT_THAT(out[1], TensorIs<float>({}, {-5}));
  EXPECT_THAT(out[2], TensorIs<float>({}, {5}));
  // Inputs in the overall range are copied.
  out = RunAll(
      k, {Literal<int32_t>({}, {0}), U8({2}, {3, 4}), U8({1}, {5}), F(-1), F(-1), F(1), F(1)});
  EXPECT_THAT(IntsOf<uint8_t>(out[0]), ElementsAreArray({3, 4, 5}));

  EXPECT_THAT(
      k.Run({Literal<int32_t>({}, {2}), U8({2}, {3, 4}), U8({1}, {5}), F(-1), F(-1), F(1), F(1)}),
      StatusIs(kInvalid,
               "ConcatOp : Expected concatenating dimensions in the "
               "range [0, 1), but got 2"));
  EXPECT_THAT(k.Run({Literal<int32_t>({}, {0}), U8({1, 2}, {3, 4}), U8({1, 1}, {5}), F(-1), F(-1),
                     F(1), F(1)}),
              StatusIs(kInvalid,
                       "ConcatOp : Dimensions of inputs should match: "
                       "shape[0] = [1,2] vs. shape[1] = [1,1]"));
  EXPECT_THAT(
      k.Run({Literal<int32_t>({}, {0}), U8({1}, {3}), U8({1, 1}, {5}), F(-1), F(-1), F(1), F(1)}),
      StatusIs(kInvalid, "Ranks of all input tensors should match"));
  EXPECT_THAT(k.Run({Literal<int32_t>({}, {0}), U8({2}, {3, 4}), U8({1}, {5}),
                     Literal<float>({2}, {1, 2}), F(-1), F(1), F(1)}),
              StatusIs(kInvalid,
                       "input_mins each tensor's num elements must be 1, "
                       "given num elements 2 in index 0"));
}

TEST(QuantizedReshapeTest, ReshapesAndPassesTheRangeOn) {
  KernelRunner k("QuantizedReshape");
  ExpectQuantized<uint8_t>(
      k, {U8({6}, {1, 2, 3, 4, 5, 6}), Literal<int32_t>({2}, {3, -1}), F(-1), F(1)}, {3, 2},
      {1, 2, 3, 4, 5, 6}, -1, 1);
  EXPECT_THAT(k.Run({U8({6}, {1, 2, 3, 4, 5, 6}), Literal<int32_t>({2}, {4, -1}), F(-1), F(1)}),
              StatusIs(kInvalid,
                       "Input to reshape is a tensor with 6 values, but the "
                       "requested shape requires a multiple of 4"));
  EXPECT_THAT(k.Run({U8({6}, {1, 2, 3, 4, 5, 6}), Literal<int32_t>({2}, {3, -1}),
                     Literal<float>({2}, {1, 2}), F(1)}),
              StatusIs(kInvalid, "input_min must be a scalar or a vector of 1 element"));
}

}  // namespace
}  // namespace towerflow
