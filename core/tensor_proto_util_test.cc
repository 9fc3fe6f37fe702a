#include "core/tensor_proto_util.h"

#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::testing::ElementsAre;
using ::towerflow::testing::StatusIs;

TensorProto FloatProto(std::initializer_list<float> vals, std::initializer_list<int64_t> dims) {
  TensorProto p;
  p.set_dtype(DT_FLOAT);
  for (int64_t d : dims) p.mutable_tensor_shape()->add_dim()->set_size(d);
  for (float v : vals) p.add_float_val(v);
  return p;
}

TEST(TensorProtoTest, ShortValueListRepeatsLastValue) {
  // tf.constant(0.1, shape=[3]) is written as one float_val.
  TW_ASSERT_OK_AND_ASSIGN(std::vector<double> v,
                          TensorProtoAsDoubles(FloatProto({1.5f, 2.5f}, {4})));
  EXPECT_THAT(v, ElementsAre(1.5, 2.5, 2.5, 2.5));
}

TEST(TensorProtoTest, EmptyValuesMeanZeros) {
  TW_ASSERT_OK_AND_ASSIGN(std::vector<double> v, TensorProtoAsDoubles(FloatProto({}, {2, 2})));
  EXPECT_THAT(v, ElementsAre(0, 0, 0, 0));
}

TEST(TensorProtoTest, TensorContentIsLittleEndianRowMajor) {
  // The bytes TensorFlow writes for [[1,2],[3,4]] as float.
  TensorProto p;
  p.set_dtype(DT_FLOAT);
  p.mutable_tensor_shape()->add_dim()->set_size(2);
  p.mutable_tensor_shape()->add_dim()->set_size(2);
  p.set_tensor_content(std::string("\000\000\200?\000\000\000@\000\000@@\000\000\200@", 16));
  TW_ASSERT_OK_AND_ASSIGN(std::vector<double> v, TensorProtoAsDoubles(p));
  EXPECT_THAT(v, ElementsAre(1, 2, 3, 4));
}

// As TF's Python writes them: several values as tensor_content, a scalar's
// bits in half_val (for bfloat16 too).
TEST(TensorProtoTest, SixteenBitFloatsAsTensorFlowWritesThem) {
  const half pair[] = {half(1.5f), half(-2.0f)};
  const TensorProto p = MakeTensorProto<half>(absl::MakeConstSpan(pair), TensorShape({2}));
  EXPECT_EQ(p.dtype(), DT_HALF);
  EXPECT_EQ(p.tensor_content(), std::string("\x00\x3e\x00\xc0", 4));
  const TensorProto s = MakeScalarTensorProto(bfloat16(0.1f));
  EXPECT_EQ(s.dtype(), DT_BFLOAT16);
  ASSERT_EQ(s.half_val_size(), 1);
  EXPECT_EQ(s.half_val(0), 0x3dcd);
  TW_ASSERT_OK_AND_ASSIGN(std::vector<double> values, TensorProtoAsDoubles(p));
  EXPECT_EQ(values, (std::vector<double>{1.5, -2.0}));
  TW_ASSERT_OK_AND_ASSIGN(values, TensorProtoAsDoubles(s));
  EXPECT_EQ(values, (std::vector<double>{0.10009765625}));
}

TEST(TensorProtoTest, ContentSizeMustMatchShape) {
  TensorProto p;
  p.set_dtype(DT_FLOAT);
  p.mutable_tensor_shape()->add_dim()->set_size(2);
  p.mutable_tensor_shape()->add_dim()->set_size(2);
  p.set_tensor_content(std::string(12, '\0'));
  EXPECT_THAT(ValidateTensorProto(p),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "tensor_content has 12 bytes, but shape [2,2] of float "
                       "needs 16"));
}

TEST(TensorProtoTest, StricterThanTensorFlowOnNonsense) {
  EXPECT_THAT(ValidateTensorProto(FloatProto({1, 2, 3}, {2})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "float_val has 3 values, but shape [2] has only 2"));
  TensorProto wrong_field = FloatProto({}, {2});
  wrong_field.add_int_val(3);
  EXPECT_THAT(ValidateTensorProto(wrong_field),
              StatusIs(absl::StatusCode::kInvalidArgument, "carries int_val"));
  TensorProto both = FloatProto({1}, {1});
  both.set_tensor_content(std::string(4, '\0'));
  EXPECT_THAT(ValidateTensorProto(both),
              StatusIs(absl::StatusCode::kInvalidArgument, "both tensor_content"));
}

TEST(TensorProtoTest, RejectsRefResourceAndBadShapes) {
  TensorProto ref = FloatProto({1}, {});
  ref.set_dtype(DT_FLOAT_REF);
  EXPECT_THAT(ValidateTensorProto(ref),
              StatusIs(absl::StatusCode::kInvalidArgument, "invalid dtype float_ref"));
  TensorProto res;
  res.set_dtype(DT_RESOURCE);
  EXPECT_THAT(ValidateTensorProto(res),
              StatusIs(absl::StatusCode::kInvalidArgument, "resource cannot hold a constant"));
  TensorProto neg = FloatProto({}, {-5});
  EXPECT_THAT(ValidateTensorProto(neg), StatusIs(absl::StatusCode::kInvalidArgument, "bad shape"));
  TensorProto huge = FloatProto({1}, {int64_t{1} << 62, 4});
  EXPECT_THAT(ValidateTensorProto(huge), StatusIs(absl::StatusCode::kInvalidArgument, "int64"));
  TensorProto string_content;
  string_content.set_dtype(DT_STRING);
  string_content.set_tensor_content("abc");
  EXPECT_THAT(ValidateTensorProto(string_content),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "TensorProto of dtype string must not use tensor_content"));
}

TEST(TensorProtoTest, ZeroElementTensorNeedsNoValues) {
  TW_ASSERT_OK_AND_ASSIGN(std::vector<double> v, TensorProtoAsDoubles(FloatProto({}, {0, 3})));
  EXPECT_TRUE(v.empty());
  EXPECT_THAT(ValidateTensorProto(FloatProto({1}, {0})),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "float_val has 1 values, but shape [0] has only 0 elements"));
}

TEST(TensorProtoTest, IntegerDecoding) {
  TensorProto p = MakeTensorProto<int32_t>({-1, 784}, TensorShape({2}));
  EXPECT_FALSE(p.tensor_content().empty());
  TW_ASSERT_OK_AND_ASSIGN(std::vector<int64_t> v, TensorProtoAsInt64s(p));
  EXPECT_THAT(v, ElementsAre(-1, 784));
  TensorProto u8;
  u8.set_dtype(DT_UINT8);
  u8.mutable_tensor_shape()->add_dim()->set_size(2);
  u8.add_int_val(255);
  TW_ASSERT_OK_AND_ASSIGN(std::vector<int64_t> w, TensorProtoAsInt64s(u8));
  EXPECT_THAT(w, ElementsAre(255, 255));
  EXPECT_THAT(TensorProtoAsInt64s(FloatProto({1}, {})),
              StatusIs(absl::StatusCode::kInvalidArgument, "integer tensor"));
  TensorProto big = MakeScalarTensorProto<uint64_t>(~uint64_t{0});
  EXPECT_THAT(TensorProtoAsInt64s(big),
              StatusIs(absl::StatusCode::kInvalidArgument, "does not fit"));
}

TEST(TensorProtoTest, HalfAndBfloat16Patterns) {
  TensorProto h;
  h.set_dtype(DT_HALF);
  h.add_half_val(0x3C00);  // 1.0
  h.mutable_tensor_shape();
  TW_ASSERT_OK_AND_ASSIGN(std::vector<double> hv, TensorProtoAsDoubles(h));
  EXPECT_THAT(hv, ElementsAre(1.0));
  TensorProto b;
  b.set_dtype(DT_BFLOAT16);
  b.add_half_val(0xC000);  // -2.0
  b.mutable_tensor_shape();
  TW_ASSERT_OK_AND_ASSIGN(std::vector<double> bv, TensorProtoAsDoubles(b));
  EXPECT_THAT(bv, ElementsAre(-2.0));
}

TEST(TensorProtoTest, BuildersFollowPythonLayout) {
  TensorProto scalar = MakeScalarTensorProto<float>(0.5f);
  EXPECT_EQ(scalar.float_val_size(), 1);
  EXPECT_TRUE(scalar.tensor_content().empty());
  EXPECT_EQ(scalar.tensor_shape().dim_size(), 0);
  TensorProto matrix = MakeTensorProto<float>({1, 2, 3, 4}, TensorShape({2, 2}));
  EXPECT_EQ(matrix.tensor_content().size(), 16u);
  TensorProto bools = MakeTensorProto<bool>({true, false}, TensorShape({2}));
  EXPECT_EQ(bools.bool_val_size(), 2);
  TensorProto fill = MakeFilledTensorProto<float>(0.1f, TensorShape({784, 10}));
  EXPECT_EQ(fill.float_val_size(), 1);
  TW_EXPECT_OK(ValidateTensorProto(fill));
  TensorProto strings = MakeTensorProto<std::string>({"a", "bc"}, TensorShape({2}));
  TW_ASSERT_OK_AND_ASSIGN(std::vector<std::string> sv, TensorProtoAsStrings(strings));
  EXPECT_THAT(sv, ElementsAre("a", "bc"));
}

TEST(TensorProtoTest, ConvertIsExactForIntegers) {
  TW_ASSERT_OK_AND_ASSIGN(TensorProto f,
                          ConvertTensorProto(MakeScalarTensorProto<double>(0.5), DT_FLOAT));
  EXPECT_EQ(f.dtype(), DT_FLOAT);
  EXPECT_FLOAT_EQ(f.float_val(0), 0.5f);
  TW_ASSERT_OK_AND_ASSIGN(TensorProto i,
                          ConvertTensorProto(MakeScalarTensorProto<double>(2.0), DT_INT32));
  EXPECT_EQ(i.int_val(0), 2);
  EXPECT_THAT(ConvertTensorProto(MakeScalarTensorProto<double>(2.5), DT_INT32),
              StatusIs(absl::StatusCode::kInvalidArgument, "not an exact int32"));
  EXPECT_THAT(ConvertTensorProto(MakeScalarTensorProto<int32_t>(300), DT_UINT8),
              StatusIs(absl::StatusCode::kInvalidArgument, "does not fit in uint8"));
  TW_ASSERT_OK_AND_ASSIGN(
      TensorProto i64,
      ConvertTensorProto(MakeTensorProto<int32_t>({1, 2}, TensorShape({2})), DT_INT64));
  TW_ASSERT_OK_AND_ASSIGN(std::vector<int64_t> v, TensorProtoAsInt64s(i64));
  EXPECT_THAT(v, ElementsAre(1, 2));
  EXPECT_THAT(ConvertTensorProto(MakeScalarTensorProto<std::string>("x"), DT_FLOAT),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Cannot convert a string constant to float"));
}

}  // namespace
}  // namespace towerflow
