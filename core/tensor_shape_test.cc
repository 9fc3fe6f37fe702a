#include "core/tensor_shape.h"

#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::towerflow::testing::StatusIs;

TEST(TensorShapeTest, LiteralShapeCountsElements) {
  TensorShape s({5, 5, 3, 64});
  EXPECT_TRUE(s.IsValid());
  EXPECT_EQ(s.dims(), 4);
  EXPECT_EQ(s.num_elements(), 4800);
  EXPECT_EQ(s.DebugString(), "[5,5,3,64]");
  EXPECT_EQ(TensorShape().num_elements(), 1);
  EXPECT_EQ(TensorShape().DebugString(), "[]");
  EXPECT_EQ(TensorShape({3, 0, 2}).num_elements(), 0);
}

TEST(TensorShapeTest, NegativeLiteralDimIsInvalidNotACrash) {
  TensorShape s({-1, 3});
  EXPECT_FALSE(s.IsValid());
  EXPECT_EQ(s.num_elements(), -1);
  EXPECT_THAT(s.status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "Dimension 0 of the shape is -1"));
}

TEST(TensorShapeTest, OverflowingProductIsRefused) {
  // 2^32 * 2^32 overflows int64.
  EXPECT_THAT(TensorShape::FromDims({int64_t{1} << 32, int64_t{1} << 32}),
              StatusIs(absl::StatusCode::kInvalidArgument, "fit in int64"));
  // -1879048192 from TF's SpaceToBatchND advisory.
  EXPECT_THAT(TensorShape::FromDims({-1879048192, 2}),
              StatusIs(absl::StatusCode::kInvalidArgument, "-1879048192"));
  // 2^62 * 2 == 2^63 also overflows.
  EXPECT_THAT(
      TensorShape::FromDims({int64_t{1} << 62, 2}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument,
                        "Shape [4611686018427387904,2] has more elements than fit in int64"));
  TW_EXPECT_OK(TensorShape::FromDims({int64_t{1} << 62, 1}));
}

TEST(TensorShapeTest, RankIsCappedAt254) {
  std::vector<int64_t> dims254(254, 1), dims255(255, 1);
  TW_EXPECT_OK(TensorShape::FromDims(dims254));
  EXPECT_THAT(TensorShape::FromDims(dims255),
              StatusIs(absl::StatusCode::kInvalidArgument, "rank 255"));
  // 255 zero dims (TF's Reshape advisory) too.
  std::vector<int64_t> zeros255(255, 0);
  EXPECT_THAT(TensorShape::FromDims(zeros255),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Shape has rank 255, more than the maximum rank 254"));
}

TEST(TensorShapeTest, FromProtoRejectsUnknown) {
  TensorShapeProto p;
  p.set_unknown_rank(true);
  EXPECT_THAT(TensorShape::FromProto(p),
              StatusIs(absl::StatusCode::kInvalidArgument, "unknown rank"));
  TensorShapeProto q;
  q.add_dim()->set_size(-1);
  EXPECT_THAT(TensorShape::FromProto(q),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Dimension 0 of the shape is -1; dims must be >= 0"));
}

TEST(TensorShapeTest, AddDimChecksOverflowAndKeepsShapeOnError) {
  TensorShape s({int64_t{1} << 40});
  EXPECT_THAT(s.AddDim(int64_t{1} << 40),
              StatusIs(absl::StatusCode::kInvalidArgument, "overflows"));
  EXPECT_EQ(s.dims(), 1);
  TW_EXPECT_OK(s.AddDim(4));
  EXPECT_EQ(s.num_elements(), int64_t{1} << 42);
  s.RemoveDim(0);
  EXPECT_EQ(s.DebugString(), "[4]");
  EXPECT_EQ(s.num_elements(), 4);
}

TEST(PartialTensorShapeTest, UnknownDimsPrintAsQuestionMarks) {
  PartialTensorShape p({-1, 784});
  EXPECT_EQ(p.DebugString(), "[?,784]");
  EXPECT_EQ(p.dims(), 2);
  EXPECT_FALSE(p.IsFullyDefined());
  EXPECT_EQ(p.num_elements(), -1);
  EXPECT_EQ(PartialTensorShape().DebugString(), "<unknown>");
  EXPECT_EQ(PartialTensorShape().dims(), -1);
  EXPECT_EQ(PartialTensorShape::Scalar().DebugString(), "[]");
}

TEST(PartialTensorShapeTest, MergeKeepsTheKnownDims) {
  TW_ASSERT_OK_AND_ASSIGN(PartialTensorShape m, PartialTensorShape({-1, 3}).MergeWith({2, -1}));
  EXPECT_EQ(m.DebugString(), "[2,3]");
  TW_ASSERT_OK_AND_ASSIGN(PartialTensorShape u, PartialTensorShape().MergeWith({4}));
  EXPECT_EQ(u.DebugString(), "[4]");
  EXPECT_THAT(PartialTensorShape({2, 3}).MergeWith({2, 4}),
              StatusIs(absl::StatusCode::kInvalidArgument, "dimension 1 is 3 vs 4"));
  EXPECT_THAT(PartialTensorShape({2}).MergeWith({2, 4}),
              StatusIs(absl::StatusCode::kInvalidArgument, "different ranks"));
}

TEST(PartialTensorShapeTest, Compatibility) {
  EXPECT_TRUE(PartialTensorShape({-1, 3}).IsCompatibleWith({5, 3}));
  EXPECT_FALSE(PartialTensorShape({-1, 3}).IsCompatibleWith({5, 4}));
  EXPECT_TRUE(PartialTensorShape().IsCompatibleWith({1, 2, 3}));
  EXPECT_FALSE(PartialTensorShape({1}).IsCompatibleWith({1, 1}));
}

TEST(PartialTensorShapeTest, ProtoRoundTrip) {
  TensorShapeProto proto = PartialTensorShape({-1, 28, 28, 1}).AsProto();
  ASSERT_EQ(proto.dim_size(), 4);
  EXPECT_EQ(proto.dim(0).size(), -1);
  TW_ASSERT_OK_AND_ASSIGN(PartialTensorShape back, PartialTensorShape::FromProto(proto));
  EXPECT_EQ(back, PartialTensorShape({-1, 28, 28, 1}));
  EXPECT_TRUE(PartialTensorShape().AsProto().unknown_rank());
}

TEST(PartialTensorShapeTest, FromProtoRejectsBadDimsAndMixedUnknownRank) {
  TensorShapeProto bad;
  bad.add_dim()->set_size(-2);
  EXPECT_THAT(PartialTensorShape::FromProto(bad),
              StatusIs(absl::StatusCode::kInvalidArgument, ">= -1"));
  TensorShapeProto mixed;
  mixed.set_unknown_rank(true);
  mixed.add_dim()->set_size(3);
  EXPECT_THAT(PartialTensorShape::FromProto(mixed),
              StatusIs(absl::StatusCode::kInvalidArgument, "unknown_rank"));
}

TEST(PartialTensorShapeTest, ConcatenateAndConvert) {
  PartialTensorShape p = PartialTensorShape({2}).Concatenate(3);
  EXPECT_EQ(p.DebugString(), "[2,3]");
  TW_ASSERT_OK_AND_ASSIGN(TensorShape t, p.AsTensorShape());
  EXPECT_EQ(t.num_elements(), 6);
  EXPECT_THAT(PartialTensorShape({-1}).AsTensorShape(),
              StatusIs(absl::StatusCode::kInvalidArgument, "not fully defined"));
  EXPECT_TRUE(PartialTensorShape({2}).Concatenate(PartialTensorShape()).unknown_rank());
}

TEST(MultiplyWithoutOverflowTest, Boundaries) {
  EXPECT_EQ(MultiplyWithoutOverflow(0, INT64_MAX), 0);
  EXPECT_EQ(MultiplyWithoutOverflow(INT64_MAX, 1), INT64_MAX);
  EXPECT_EQ(MultiplyWithoutOverflow(INT64_MAX, 2), -1);
  EXPECT_EQ(MultiplyWithoutOverflow(-1, 2), -1);
  EXPECT_EQ(MultiplyWithoutOverflow(3037000499, 3037000499), 9223372030926249001);
  EXPECT_EQ(MultiplyWithoutOverflow(3037000500, 3037000500), -1);
}

}  // namespace
}  // namespace towerflow
