// Shape, slicing, joining and gathering kernels (shape_ops.cc,
// slice_ops.cc, concat_ops.cc, scatter_nd_ops.cc).
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Tensor Iota(const TensorShape& shape) {
  Tensor t(DT_FLOAT, shape);
  for (int64_t i = 0; i < t.NumElements(); ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}

TEST(ShapeOpsTest, ShapeSizeRank) {
  const Tensor x = Iota({2, 3});
  KernelRunner shape("Shape");
  EXPECT_THAT(RunOk(shape, {x}), TensorIs<int32_t>({2}, {2, 3}));
  KernelRunner shape64("Shape");
  shape64.Attr("out_type", DT_INT64);
  EXPECT_THAT(RunOk(shape64, {x}), TensorIs<int64_t>({2}, {2, 3}));
  KernelRunner shape_n("ShapeN");
  EXPECT_THAT(RunOk(shape_n, {x, Scalar<float>(1)}, 1), TensorIs<int32_t>({0}, {}));
  KernelRunner size("Size");
  EXPECT_THAT(RunOk(size, {x}), TensorIs<int32_t>({}, {6}));
  KernelRunner rank("Rank");
  EXPECT_THAT(RunOk(rank, {x}), TensorIs<int32_t>({}, {2}));
}

TEST(ShapeOpsTest, ReshapeInfersOneDimension) {
  KernelRunner r("Reshape");
  const Tensor out = RunOk(r, {Iota({2, 3}), Literal<int32_t>({2}, {-1, 2})});
  EXPECT_THAT(out, TensorIs<float>({3, 2}, {0, 1, 2, 3, 4, 5}));
  EXPECT_THAT(r.Run({Iota({2, 3}), Literal<int32_t>({1}, {4})}).status().message(),
              HasSubstr("Input to reshape is a tensor with 6 values"));
  EXPECT_THAT(r.Run({Iota({2, 3}), Literal<int32_t>({2}, {-1, -1})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "only one input size may be -1, not both 0 and 1"));
  EXPECT_THAT(
      r.Run({Iota({2, 3}), Literal<int32_t>({2}, {-2, 3})}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument, "Size 0 must be non-negative, not -2"));
  EXPECT_THAT(RunOk(r, {Iota({0, 2}), Literal<int32_t>({2}, {2, 0})}), TensorIs<float>({2, 0}, {}));
}

// TF (since 1.13) infers a -1 beside a zero size from the non-zero sizes
// alone: TF 2.21's shapes.
TEST(ShapeOpsTest, ReshapeInfersBesideZeroSizesAsTensorFlow) {
  KernelRunner r("Reshape");
  EXPECT_EQ(RunOk(r, {Iota({0}), Literal<int32_t>({2}, {-1, 0})}).shape(), TensorShape({1, 0}));
  EXPECT_EQ(RunOk(r, {Iota({1, 2, 0}), Literal<int32_t>({3}, {2, 0, -1})}).shape(),
            TensorShape({2, 0, 1}));
  EXPECT_EQ(RunOk(r, {Iota({3, 0, 4}), Literal<int32_t>({3}, {-1, 0, 2})}).shape(),
            TensorShape({6, 0, 2}));
  EXPECT_EQ(RunOk(r, {Iota({0, 3}), Literal<int32_t>({2}, {-1, 3})}).shape(), TensorShape({0, 3}));
  EXPECT_EQ(RunOk(r, {Iota({0, 3}), Literal<int32_t>({2}, {-1, 2})}).shape(), TensorShape({0, 2}));
}

// Bitcast: the same bytes as another type (TF 2.21's values); a narrower
// type gains a last dimension, a wider one takes it.
// TF 2.21's message names the tensor (the node's input) and both shapes.
TEST(ShapeOpsTest, EnsureShapeChecksCompatibility) {
  KernelRunner r("EnsureShape");
  r.Attr("shape", PartialTensorShape({-1, 3}));
  EXPECT_THAT(RunOk(r, {Literal<float>({2, 3}, {1, 2, 3, 4, 5, 6})}),
              TensorIs<float>({2, 3}, {1, 2, 3, 4, 5, 6}));
  KernelRunner bad("EnsureShape");
  bad.Attr("shape", PartialTensorShape({2, 4}));
  EXPECT_THAT(bad.Run({Literal<float>({2, 3}, {1, 2, 3, 4, 5, 6})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "[2,3] is not compatible with expected shape [2,4]."));
  KernelRunner rank("EnsureShape");
  rank.Attr("shape", PartialTensorShape({-1}));
  EXPECT_FALSE(rank.Run({Scalar<float>(1)}).ok());
}

TEST(ShapeOpsTest, BitcastReinterpretsBytes) {
  KernelRunner to_int("Bitcast");
  to_int.Attr("type", DT_INT32);
  EXPECT_THAT(RunOk(to_int, {Literal<float>({3}, {1.0f, -2.5f, 3.0f})}),
              TensorIs<int32_t>({3}, {1065353216, -1071644672, 1077936128}));
  KernelRunner to_float("Bitcast");
  to_float.Attr("type", DT_FLOAT);
  EXPECT_THAT(RunOk(to_float, {Literal<uint8_t>({2, 4}, {0, 0, 128, 63, 0, 0, 32, 192})}),
              TensorIs<float>({2}, {1.0f, -2.5f}));
  KernelRunner narrow("Bitcast");
  narrow.Attr("type", DT_INT16);
  EXPECT_THAT(RunOk(narrow, {Literal<int32_t>({4}, {1, 2, 3, 4})}),
              TensorIs<int16_t>({4, 2}, {1, 0, 2, 0, 3, 0, 4, 0}));
  KernelRunner wide("Bitcast");
  wide.Attr("type", DT_INT64);
  EXPECT_THAT(
      wide.Run({Literal<int32_t>({3}, {1, 2, 3})}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument, "the last dimension must be 2"));
}

TEST(ShapeOpsTest, ExpandDimsAndSqueeze) {
  KernelRunner e("ExpandDims");
  EXPECT_EQ(RunOk(e, {Iota({2, 3}), Scalar<int32_t>(-1)}).shape(), TensorShape({2, 3, 1}));
  EXPECT_EQ(RunOk(e, {Iota({2, 3}), Scalar<int32_t>(0)}).shape(), TensorShape({1, 2, 3}));
  EXPECT_THAT(e.Run({Iota({2, 3}), Scalar<int32_t>(4)}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Tried to expand dim index 4 for tensor with 2 dimensions."));
  KernelRunner s("Squeeze");
  EXPECT_EQ(RunOk(s, {Iota({1, 2, 1, 3, 1})}).shape(), TensorShape({2, 3}));
  KernelRunner s2("Squeeze");
  s2.Attr("squeeze_dims", {2, 4});
  EXPECT_EQ(RunOk(s2, {Iota({1, 2, 1, 3, 1})}).shape(), TensorShape({1, 2, 3}));
  KernelRunner bad("Squeeze");
  bad.Attr("squeeze_dims", {1});
  EXPECT_THAT(bad.Run({Iota({1, 2})}).status().message(),
              HasSubstr("Can not squeeze dim[1], expected a dimension of 1, got 2"));
}

TEST(ShapeOpsTest, FillZerosOnesBroadcastTo) {
  KernelRunner f("Fill");
  EXPECT_THAT(RunOk(f, {Literal<int32_t>({2}, {2, 3}), Scalar<float>(9)}),
              TensorIs<float>({2, 3}, {9, 9, 9, 9, 9, 9}));
  EXPECT_THAT(f.Run({Literal<int32_t>({2}, {-1, 3}), Scalar<float>(9)}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Dimension 0 of the shape is -1; dims must be >= 0"));
  KernelRunner z("ZerosLike"), o("OnesLike");
  EXPECT_THAT(RunOk(z, {Literal<int32_t>({2}, {5, 6})}), TensorIs<int32_t>({2}, {0, 0}));
  EXPECT_THAT(RunOk(o, {Literal<double>({1}, {5})}), TensorIs<double>({1}, {1}));
  KernelRunner b("BroadcastTo");
  EXPECT_THAT(RunOk(b, {Literal<float>({3}, {1, 2, 3}), Literal<int32_t>({2}, {2, 3})}),
              TensorIs<float>({2, 3}, {1, 2, 3, 1, 2, 3}));
  EXPECT_THAT(RunOk(b, {Literal<int32_t>({2, 1}, {1, 2}), Literal<int64_t>({2}, {2, 2})}),
              TensorIs<int32_t>({2, 2}, {1, 1, 2, 2}));
  // Long rows: runs of 17 copied, one element repeated over rows of 20.
  std::vector<double> runs(2 * 17), want_runs;
  for (int i = 0; i < 34; ++i) runs[i] = i;
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 17; ++k) want_runs.push_back(i * 17 + k);
    }
  }
  EXPECT_THAT(RunOk(b, {Literal<double>({2, 1, 17}, runs), Literal<int32_t>({3}, {2, 3, 17})}),
              TensorIs<double>({2, 3, 17}, want_runs));
  std::vector<uint8_t> want_repeat;
  for (int i = 0; i < 2; ++i)
    want_repeat.insert(want_repeat.end(), 20, static_cast<uint8_t>(7 + i));
  EXPECT_THAT(RunOk(b, {Literal<uint8_t>({2, 1}, {7, 8}), Literal<int32_t>({2}, {2, 20})}),
              TensorIs<uint8_t>({2, 20}, want_repeat));
  EXPECT_THAT(b.Run({Literal<float>({3}, {1, 2, 3}), Literal<int32_t>({1}, {2})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Unable to broadcast tensor of shape [3] to tensor of shape [2]"));
}

TEST(ShapeOpsTest, BroadcastGradientArgs) {
  KernelRunner r("BroadcastGradientArgs");
  absl::StatusOr<std::vector<Tensor>> out =
      r.Run({Literal<int32_t>({3}, {2, 3, 5}), Literal<int32_t>({1}, {1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0], TensorIs<int32_t>({0}, {}));
  EXPECT_THAT((*out)[1], TensorIs<int32_t>({3}, {0, 1, 2}));
  EXPECT_THAT(
      r.Run({Literal<int32_t>({1}, {2}), Literal<int32_t>({1}, {3})}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument, "Incompatible shapes: [2] vs. [3]"));
}

TEST(ShapeOpsTest, CastSaturatesAndMapsNanToZero) {
  KernelRunner c("Cast");
  c.Attr("DstT", DT_INT32);
  EXPECT_THAT(RunOk(c, {Literal<float>({5}, {1.9f, -1.9f, NAN, 1e20f, -INFINITY})}),
              TensorIs<int32_t>({5}, {1, -1, 0, 2147483647, -2147483647 - 1}));
  KernelRunner b("Cast");
  b.Attr("DstT", DT_BOOL);
  EXPECT_THAT(RunOk(b, {Literal<int32_t>({3}, {0, 2, -1})}),
              TensorIs<bool>({3}, {false, true, true}));
  KernelRunner f("Cast");
  f.Attr("DstT", DT_FLOAT);
  EXPECT_THAT(RunOk(f, {Literal<bool>({2}, {true, false})}), TensorIs<float>({2}, {1, 0}));
}

TEST(ShapeOpsTest, RangeAndInvertPermutation) {
  KernelRunner r("Range");
  EXPECT_THAT(RunOk(r, {Scalar<int32_t>(3), Scalar<int32_t>(18), Scalar<int32_t>(3)}),
              TensorIs<int32_t>({5}, {3, 6, 9, 12, 15}));
  EXPECT_THAT(r.Run({Scalar<int32_t>(0), Scalar<int32_t>(5), Scalar<int32_t>(0)}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument, "Requires delta != 0: 0"));
  // The length in the inputs' type, as TF: three floats, not four.
  KernelRunner rf("Range");
  EXPECT_THAT(RunOk(rf, {Scalar<float>(0), Scalar<float>(0.3f), Scalar<float>(0.1f)}),
              TensorNear<float>({3}, {0, 0.1f, 0.2f}, 1e-7));
  // Integer lengths exactly, across the whole int64 range.
  KernelRunner ri("Range");
  const int64_t big = std::numeric_limits<int64_t>::max();
  EXPECT_THAT(RunOk(ri, {Scalar<int64_t>(big - 5), Scalar<int64_t>(big), Scalar<int64_t>(2)}),
              TensorIs<int64_t>({3}, {big - 5, big - 3, big - 1}));
  EXPECT_THAT(ri.Run({Scalar<int64_t>(-big), Scalar<int64_t>(big), Scalar<int64_t>(1)}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument, "too large"));
  KernelRunner p("InvertPermutation");
  EXPECT_THAT(RunOk(p, {Literal<int32_t>({5}, {3, 4, 0, 2, 1})}),
              TensorIs<int32_t>({5}, {2, 4, 3, 0, 1}));
  EXPECT_THAT(
      p.Run({Literal<int32_t>({2}, {0, 0})}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument, "0 is duplicated in the input."));
  EXPECT_THAT(p.Run({Literal<int32_t>({2}, {0, 7})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument, "7 is not between 0 and 2"));
}

TEST(SliceOpsTest, Transpose) {
  KernelRunner t("Transpose");
  EXPECT_THAT(RunOk(t, {Iota({2, 3}), Literal<int32_t>({2}, {1, 0})}),
              TensorIs<float>({3, 2}, {0, 3, 1, 4, 2, 5}));
  const Tensor y = RunOk(t, {Iota({2, 3, 4}), Literal<int32_t>({3}, {2, 0, 1})});
  ASSERT_EQ(y.shape(), TensorShape({4, 2, 3}));
  EXPECT_EQ(y.data<float>()[1 * 6 + 1 * 3 + 2], 1 * 12 + 2 * 4 + 1);  // y[1,1,2] = x[1,2,1]
  EXPECT_THAT(t.Run({Iota({2, 3}), Literal<int32_t>({2}, {0, 0})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument, "1 is missing from {0,0}."));
  EXPECT_THAT(t.Run({Iota({2, 3}), Literal<int32_t>({2}, {0, 2})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument, "2 is out of range [0 .. 2)"));
}

TEST(SliceOpsTest, StridedSliceGradScattersIntoZeros) {
  // The gradient of x[1:, ::-2] for x of shape [3, 4].
  KernelRunner g("StridedSliceGrad");
  g.Attr("end_mask", int64_t{3});
  EXPECT_THAT(RunOk(g, {Literal<int32_t>({2}, {3, 4}), Literal<int32_t>({2}, {1, -1}),
                        Literal<int32_t>({2}, {0, 0}), Literal<int32_t>({2}, {1, -2}),
                        Literal<float>({2, 2}, {1, 2, 3, 4})}),
              TensorIs<float>({3, 4}, {0, 0, 0, 0, 0, 2, 0, 1, 0, 4, 0, 3}));
  // dy of the wrong shape.
  EXPECT_FALSE(g.Run({Literal<int32_t>({2}, {3, 4}), Literal<int32_t>({2}, {1, -1}),
                      Literal<int32_t>({2}, {0, 0}), Literal<int32_t>({2}, {1, -2}),
                      Literal<float>({3}, {1, 2, 3})})
                   .ok());
}

TEST(SegmentOpsTest, UnsortedSegmentSum) {
  KernelRunner u("UnsortedSegmentSum");
  // Rows 0 and 2 go to segment 1, row 1 to segment 0; id -1 is dropped.
  EXPECT_THAT(RunOk(u, {Literal<float>({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8}),
                        Literal<int32_t>({4}, {1, 0, 1, -1}), Scalar<int32_t>(3)}),
              TensorIs<float>({3, 2}, {3, 4, 6, 8, 0, 0}));
  absl::Status st =
      u.Run({Literal<float>({2}, {1, 2}), Literal<int32_t>({2}, {0, 3}), Scalar<int32_t>(3)})
          .status();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), ::testing::HasSubstr("segment_ids[1] = 3 is out of range [0, 3)"));
  EXPECT_FALSE(
      u.Run({Literal<float>({2}, {1, 2}), Literal<int32_t>({3}, {0, 0, 0}), Scalar<int32_t>(1)})
          .ok());
}

TEST(ScanOpsTest, ListDiff) {
  // TF's setdiff1d example: x = [1, 2, 3, 4, 5, 6], y = [1, 3, 5].
  KernelRunner r("ListDiff");
  EXPECT_THAT(
      RunOk(r, {Literal<int32_t>({6}, {1, 2, 3, 4, 5, 6}), Literal<int32_t>({3}, {1, 3, 5})}),
      TensorIs<int32_t>({3}, {2, 4, 6}));
  EXPECT_THAT(
      RunOk(r, {Literal<int32_t>({6}, {1, 2, 3, 4, 5, 6}), Literal<int32_t>({3}, {1, 3, 5})}, 1),
      TensorIs<int32_t>({3}, {1, 3, 5}));
  EXPECT_THAT(r.Run({Literal<int32_t>({1, 1}, {1}), Literal<int32_t>({1}, {1})}).status().message(),
              HasSubstr("x must be a vector"));
  // Floats too, as TF: NaN is never in y.
  KernelRunner f("ListDiff");
  TW_ASSERT_OK_AND_ASSIGN(
      std::vector<Tensor> out,
      f.Run({Literal<float>({4}, {NAN, 1.5f, -0.0f, 2}), Literal<float>({2}, {0.0f, NAN})}));
  ASSERT_EQ(out[0].NumElements(), 3);
  EXPECT_TRUE(std::isnan(out[0].data<float>()[0]));
  EXPECT_THAT(out[1], TensorIs<int32_t>({3}, {0, 1, 3}));
}

TEST(ScanOpsTest, Unique) {
  // TF's tf.unique example.
  const Tensor x = Literal<int32_t>({9}, {1, 1, 2, 4, 4, 4, 7, 8, 8});
  KernelRunner r("Unique");
  EXPECT_THAT(RunOk(r, {x}), TensorIs<int32_t>({5}, {1, 2, 4, 7, 8}));
  EXPECT_THAT(RunOk(r, {x}, 1), TensorIs<int32_t>({9}, {0, 0, 1, 2, 2, 2, 3, 4, 4}));
  KernelRunner wide("Unique");
  wide.Attr("out_idx", DT_INT64);
  EXPECT_THAT(RunOk(wide, {Literal<float>({4}, {2.5f, -1, 2.5f, 0})}, 0),
              TensorIs<float>({3}, {2.5f, -1, 0}));
  EXPECT_THAT(RunOk(wide, {Literal<float>({4}, {2.5f, -1, 2.5f, 0})}, 1),
              TensorIs<int64_t>({4}, {0, 1, 0, 2}));
  EXPECT_THAT(RunOk(r, {Literal<int64_t>({0}, {})}), TensorIs<int64_t>({0}, {}));
  EXPECT_THAT(r.Run({Literal<int32_t>({1, 2}, {1, 1})}).status().message(),
              HasSubstr("unique expects a 1D vector, got shape [1,2]"));
}

TEST(SliceOpsTest, SliceAndStridedSlice) {
  KernelRunner s("Slice");
  EXPECT_THAT(
      RunOk(s, {Iota({3, 4}), Literal<int32_t>({2}, {1, 1}), Literal<int32_t>({2}, {2, -1})}),
      TensorIs<float>({2, 3}, {5, 6, 7, 9, 10, 11}));
  EXPECT_FALSE(
      s.Run({Iota({3, 4}), Literal<int32_t>({2}, {2, 0}), Literal<int32_t>({2}, {2, 1})}).ok());
  EXPECT_FALSE(
      s.Run({Iota({3, 4}), Literal<int32_t>({2}, {-1, 0}), Literal<int32_t>({2}, {1, 1})}).ok());
  // x[1:, ::-2] and x[:, 0] (shrink).
  KernelRunner ss("StridedSlice");
  ss.Attr("end_mask", int64_t{3});
  EXPECT_THAT(RunOk(ss, {Iota({3, 4}), Literal<int32_t>({2}, {1, -1}),
                         Literal<int32_t>({2}, {0, 0}), Literal<int32_t>({2}, {1, -2})}),
              TensorIs<float>({2, 2}, {7, 5, 11, 9}));
  KernelRunner shrink("StridedSlice");
  shrink.Attr("begin_mask", int64_t{1})
      .Attr("end_mask", int64_t{1})
      .Attr("shrink_axis_mask", int64_t{2});
  EXPECT_THAT(RunOk(shrink, {Iota({3, 4}), Literal<int32_t>({2}, {0, 0}),
                             Literal<int32_t>({2}, {0, 1}), Literal<int32_t>({2}, {1, 1})}),
              TensorIs<float>({3}, {0, 4, 8}));
  KernelRunner zero("StridedSlice");
  EXPECT_FALSE(zero.Run({Iota({3}), Literal<int32_t>({1}, {0}), Literal<int32_t>({1}, {3}),
                         Literal<int32_t>({1}, {0})})
                   .ok());
}

// Slices with every stride 1 copy contiguous runs: the trailing dims taken
// whole join the innermost cut one. Each case against the element-by-element
// definition, for cuts at every depth, several dtypes' sizes and the
// gradient of a Pad (an image's border cut off).
TEST(SliceOpsTest, UnitStrideSlicesCopyRunsOfEveryShape) {
  const std::vector<int64_t> dims = {3, 4, 5, 6};
  const Tensor x = Iota({3, 4, 5, 6});
  struct Case {
    std::vector<int32_t> begin, size;
  };
  for (const Case& c : std::vector<Case>{{{0, 0, 0, 0}, {3, 4, 5, 6}},
                                         {{1, 0, 0, 0}, {2, 4, 5, 6}},
                                         {{0, 1, 1, 0}, {3, 2, 3, 6}},  // a Pad's gradient
                                         {{2, 3, 4, 5}, {1, 1, 1, 1}},
                                         {{0, 0, 0, 2}, {3, 4, 5, 3}},  // the innermost cut
                                         {{1, 2, 0, 0}, {2, 1, 5, 6}},
                                         {{0, 0, 0, 0}, {3, 4, 0, 6}}}) {
    KernelRunner s("Slice");
    const Tensor out = RunOk(s, {x, Literal<int32_t>({4}, c.begin), Literal<int32_t>({4}, c.size)});
    std::vector<float> expected;
    for (int a = 0; a < c.size[0]; ++a)
      for (int b = 0; b < c.size[1]; ++b)
        for (int d = 0; d < c.size[2]; ++d)
          for (int e = 0; e < c.size[3]; ++e)
            expected.push_back(
                ((((c.begin[0] + a) * dims[1] + c.begin[1] + b) * dims[2] + c.begin[2] + d) *
                     dims[3] +
                 c.begin[3] + e));
    EXPECT_THAT(out, TensorIs<float>({c.size[0], c.size[1], c.size[2], c.size[3]}, expected))
        << c.begin[0] << c.begin[1] << c.begin[2] << c.begin[3];
  }
  // One-byte and eight-byte elements, and StridedSlice with unit strides.
  KernelRunner bytes("Slice");
  EXPECT_THAT(RunOk(bytes, {Literal<uint8_t>({2, 3}, {1, 2, 3, 4, 5, 6}),
                            Literal<int32_t>({2}, {0, 1}), Literal<int32_t>({2}, {2, 2})}),
              TensorIs<uint8_t>({2, 2}, {2, 3, 5, 6}));
  KernelRunner wide("StridedSlice");
  EXPECT_THAT(
      RunOk(wide, {Literal<int64_t>({2, 3}, {1, 2, 3, 4, 5, 6}), Literal<int32_t>({2}, {1, 0}),
                   Literal<int32_t>({2}, {2, 2}), Literal<int32_t>({2}, {1, 1})}),
      TensorIs<int64_t>({1, 2}, {4, 5}));
}

TEST(SliceOpsTest, PadAndTile) {
  KernelRunner p("Pad");
  EXPECT_THAT(RunOk(p, {Literal<float>({1, 2}, {1, 2}), Literal<int32_t>({2, 2}, {1, 0, 0, 1})}),
              TensorIs<float>({2, 3}, {0, 0, 0, 1, 2, 0}));
  EXPECT_THAT(
      p.Run({Literal<float>({2}, {1, 2}), Literal<int32_t>({1, 2}, {-1, 0})}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument, "Paddings must be non-negative: -1 0"));
  EXPECT_THAT(
      p.Run({Literal<float>({2}, {1, 2}), Literal<int32_t>({2, 2}, {0, 0, 0, 0})}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument,
                        "The first dimension of paddings must be the rank of inputs[1, 2], got"));
  KernelRunner p2("PadV2");
  EXPECT_THAT(
      RunOk(p2, {Literal<int32_t>({1}, {5}), Literal<int64_t>({1, 2}, {1, 1}), Scalar<int32_t>(7)}),
      TensorIs<int32_t>({3}, {7, 5, 7}));
  KernelRunner t("Tile");
  EXPECT_THAT(RunOk(t, {Literal<float>({2}, {1, 2}), Literal<int32_t>({1}, {3})}),
              TensorIs<float>({6}, {1, 2, 1, 2, 1, 2}));
  EXPECT_THAT(RunOk(t, {Literal<float>({2, 3}, {1, 2, 3, 4, 5, 6}), Literal<int32_t>({2}, {2, 2})}),
              TensorIs<float>({4, 6}, {1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6,  //
                                       1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6}));
  EXPECT_THAT(RunOk(t, {Literal<int64_t>({2, 1, 1}, {7, 8}), Literal<int32_t>({3}, {1, 2, 3})}),
              TensorIs<int64_t>({2, 2, 3}, {7, 7, 7, 7, 7, 7, 8, 8, 8, 8, 8, 8}));
  EXPECT_THAT(RunOk(t, {Literal<uint8_t>({1, 2}, {1, 2}), Literal<int64_t>({2}, {3, 1})}),
              TensorIs<uint8_t>({3, 2}, {1, 2, 1, 2, 1, 2}));
  EXPECT_THAT(RunOk(t, {Literal<float>({1, 2}, {1, 2}), Literal<int32_t>({2}, {2, 0})}),
              TensorIs<float>({2, 0}, {}));
  EXPECT_THAT(t.Run({Literal<float>({2}, {1, 2}), Literal<int32_t>({1}, {-1})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Expected multiples[0] >= 0, but got -1"));
}

TEST(ConcatOpsTest, ConcatsAndFillsStrings) {
  KernelRunner c("ConcatV2");
  const Tensor ab = Literal<std::string>({1, 2}, {"a", "b"});
  const Tensor cdef = Literal<std::string>({2, 2}, {"c", "d", "e", "f"});
  Tensor rows = RunOk(c, {ab, cdef, Scalar<int32_t>(0)});
  EXPECT_EQ(rows.shape(), TensorShape({3, 2}));
  EXPECT_EQ(Values<std::string>(rows), (std::vector<std::string>{"a", "b", "c", "d", "e", "f"}));
  Tensor columns = RunOk(c, {Literal<std::string>({2, 1}, {"x", "y"}), cdef, Scalar<int32_t>(1)});
  EXPECT_EQ(columns.shape(), TensorShape({2, 3}));
  EXPECT_EQ(Values<std::string>(columns), (std::vector<std::string>{"x", "c", "d", "y", "e", "f"}));
  KernelRunner f("Fill");
  Tensor filled = RunOk(f, {Literal<int32_t>({2}, {2, 1}), Literal<std::string>({}, {"class"})});
  EXPECT_EQ(filled.shape(), TensorShape({2, 1}));
  EXPECT_EQ(Values<std::string>(filled), (std::vector<std::string>{"class", "class"}));
}

// The kernels that only move elements take strings, as TF's (a text model's
// x[0], tf.transpose, tf.pad, tf.reverse and tf.tile of words).
TEST(SliceOpsTest, ElementMovingKernelsTakeStrings) {
  const Tensor words = Literal<std::string>({2, 3}, {"a", "b", "c", "d", "e", "f"});
  const auto values = [](KernelRunner& r, const std::vector<Tensor>& in) {
    return Values<std::string>(RunOk(r, in));
  };
  KernelRunner strided("StridedSlice");
  strided.Attr("shrink_axis_mask", int64_t{1}).Attr("end_mask", int64_t{2});
  EXPECT_THAT(values(strided, {words, Literal<int32_t>({2}, {1, 2}), Literal<int32_t>({2}, {2, 0}),
                               Literal<int32_t>({2}, {1, -1})}),
              ElementsAre("f", "e", "d"));
  KernelRunner slice("Slice");
  EXPECT_THAT(values(slice, {words, Literal<int32_t>({2}, {0, 1}), Literal<int32_t>({2}, {2, 2})}),
              ElementsAre("b", "c", "e", "f"));
  KernelRunner transpose("Transpose");
  EXPECT_THAT(values(transpose, {words, Literal<int32_t>({2}, {1, 0})}),
              ElementsAre("a", "d", "b", "e", "c", "f"));
  KernelRunner pad("Pad");
  EXPECT_THAT(
      values(pad, {Literal<std::string>({2}, {"x", "y"}), Literal<int32_t>({1, 2}, {1, 2})}),
      ElementsAre("", "x", "y", "", ""));
  KernelRunner pad_v2("PadV2");
  EXPECT_THAT(values(pad_v2, {Literal<std::string>({1}, {"x"}), Literal<int32_t>({1, 2}, {1, 1}),
                              Scalar<std::string>("<pad>")}),
              ElementsAre("<pad>", "x", "<pad>"));
  KernelRunner reverse("ReverseV2");
  EXPECT_THAT(values(reverse, {words, Literal<int32_t>({1}, {1})}),
              ElementsAre("c", "b", "a", "f", "e", "d"));
  KernelRunner tile("Tile");
  EXPECT_THAT(
      values(tile, {Literal<std::string>({1, 2}, {"p", "q"}), Literal<int32_t>({2}, {2, 2})}),
      ElementsAre("p", "q", "p", "q", "p", "q", "p", "q"));
}

TEST(ConcatOpsTest, ConcatPackSplitUnpack) {
  KernelRunner c("ConcatV2");
  EXPECT_THAT(RunOk(c, {Literal<float>({2, 1}, {1, 2}), Literal<float>({2, 2}, {3, 4, 5, 6}),
                        Scalar<int32_t>(1)}),
              TensorIs<float>({2, 3}, {1, 3, 4, 2, 5, 6}));
  EXPECT_THAT(
      RunOk(c, {Literal<float>({1, 2}, {1, 2}), Literal<float>({0, 2}, {}), Scalar<int32_t>(-2)}),
      TensorIs<float>({1, 2}, {1, 2}));
  EXPECT_THAT(
      c.Run({Literal<float>({2, 1}, {1, 2}), Literal<float>({3, 1}, {1, 2, 3}), Scalar<int32_t>(1)})
          .status()
          .message(),
      HasSubstr("Dimension 0 in both shapes must be equal"));
  KernelRunner p("Pack");
  p.Attr("axis", int64_t{1});
  EXPECT_THAT(RunOk(p, {Literal<int32_t>({2}, {1, 2}), Literal<int32_t>({2}, {3, 4})}),
              TensorIs<int32_t>({2, 2}, {1, 3, 2, 4}));
  // Strings too (TF's sharded saver packs its checkpoint prefixes).
  Tensor ab(DT_STRING, TensorShape({2})), cd(DT_STRING, TensorShape({2}));
  ab.data<std::string>()[0] = "a";
  ab.data<std::string>()[1] = "b";
  cd.data<std::string>()[0] = "c";
  cd.data<std::string>()[1] = "d";
  const Tensor packed = RunOk(p, {ab, cd});
  ASSERT_EQ(packed.shape(), TensorShape({2, 2}));
  EXPECT_EQ(std::vector<std::string>(packed.data<std::string>(), packed.data<std::string>() + 4),
            (std::vector<std::string>{"a", "c", "b", "d"}));
  KernelRunner s("Split");
  s.Attr("num_split", int64_t{2});
  absl::StatusOr<std::vector<Tensor>> parts = s.Run({Scalar<int32_t>(1), Iota({2, 4})});
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_THAT((*parts)[1], TensorIs<float>({2, 2}, {2, 3, 6, 7}));
  EXPECT_THAT(
      s.Run({Scalar<int32_t>(0), Iota({3, 4})}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument,
                        "Number of ways to split should evenly divide the split dimension, but"));
  KernelRunner sv("SplitV");
  sv.Attr("num_split", int64_t{2});
  parts = sv.Run({Iota({5}), Literal<int32_t>({2}, {-1, 2}), Scalar<int32_t>(0)});
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_THAT((*parts)[0], TensorIs<float>({3}, {0, 1, 2}));
  EXPECT_THAT(
      sv.Run({Iota({5}), Literal<int32_t>({2}, {4, 2}), Scalar<int32_t>(0)}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument,
                        "Determined shape must either match input shape along split_dim exactly"));
  KernelRunner u("Unpack");
  u.Attr("num", int64_t{3});
  EXPECT_THAT(u.Run({Iota({2, 3})}),
              testing::StatusIs(
                  absl::StatusCode::kInvalidArgument,
                  "Input shape axis 0 must equal 3, got shape [2,3]"));  // axis 0 has 2, not 3
  u.Attr("axis", int64_t{1});
  parts = u.Run({Iota({2, 3})});
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_THAT((*parts)[2], TensorIs<float>({2}, {2, 5}));
}

TEST(ConcatOpsTest, GatherAndOneHot) {
  KernelRunner g("GatherV2");
  EXPECT_THAT(RunOk(g, {Iota({3, 2}), Literal<int32_t>({2}, {2, 0}), Scalar<int32_t>(0)}),
              TensorIs<float>({2, 2}, {4, 5, 0, 1}));
  EXPECT_THAT(RunOk(g, {Iota({2, 3}), Literal<int64_t>({2, 1}, {2, 1}), Scalar<int32_t>(1)}),
              TensorIs<float>({2, 2, 1}, {2, 1, 5, 4}));
  EXPECT_THAT(
      g.Run({Iota({3, 2}), Literal<int32_t>({1}, {3}), Scalar<int32_t>(0)}).status().message(),
      HasSubstr("indices[0] = 3 is not in [0, 3)"));
  EXPECT_THAT(
      g.Run({Iota({3, 2}), Literal<int32_t>({1}, {-1}), Scalar<int32_t>(0)}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument, "indices[0] = -1 is not in [0, 3)"));
  // batch_dims: each batch row gathers with its own indices.
  KernelRunner batched("GatherV2");
  batched.Attr("batch_dims", int64_t{1});
  const Tensor batch_indices = Literal<int32_t>({2, 2}, {2, 0, 1, 1});
  EXPECT_THAT(RunOk(batched, {Iota({2, 3}), batch_indices, Scalar<int32_t>(1)}),
              TensorIs<float>({2, 2}, {2, 0, 4, 4}));
  EXPECT_THAT(RunOk(batched, {Iota({2, 2, 3}), batch_indices, Scalar<int32_t>(2)}),
              TensorIs<float>({2, 2, 2}, {2, 0, 5, 3, 7, 7, 10, 10}));
  EXPECT_THAT(batched.Run({Iota({2, 3}), Literal<int32_t>({3, 1}, {0, 0, 0}), Scalar<int32_t>(1)}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "params.shape[0]: 2 should be equal to indices.shape[0]: 3"));
  EXPECT_THAT(
      batched.Run({Iota({2, 3}), batch_indices, Scalar<int32_t>(0)}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument, "batch_dims (1) must be <= axis (0)"));
  KernelRunner o("OneHot");
  EXPECT_THAT(RunOk(o, {Literal<int32_t>({3}, {0, 2, -1}), Scalar<int32_t>(3), Scalar<float>(5),
                        Scalar<float>(0)}),
              TensorIs<float>({3, 3}, {5, 0, 0, 0, 0, 5, 0, 0, 0}));
  KernelRunner o0("OneHot");
  o0.Attr("axis", int64_t{0});
  EXPECT_THAT(RunOk(o0, {Literal<int64_t>({2}, {1, 0}), Scalar<int32_t>(2), Scalar<float>(1),
                         Scalar<float>(0)}),
              TensorIs<float>({2, 2}, {0, 1, 1, 0}));
  EXPECT_FALSE(
      o.Run({Literal<int32_t>({1}, {0}), Scalar<int32_t>(-1), Scalar<float>(1), Scalar<float>(0)})
          .ok());
}

}  // namespace
}  // namespace towerflow

namespace towerflow {
namespace {

TEST(SliceOpsTest, ReverseV2) {
  KernelRunner r("ReverseV2");
  EXPECT_THAT(RunOk(r, {Iota({2, 3}), Literal<int32_t>({1}, {1})}),
              TensorIs<float>({2, 3}, {2, 1, 0, 5, 4, 3}));
  EXPECT_THAT(RunOk(r, {Iota({2, 3}), Literal<int32_t>({2}, {0, -1})}),
              TensorIs<float>({2, 3}, {5, 4, 3, 2, 1, 0}));
  EXPECT_THAT(RunOk(r, {Iota({2, 3}), Literal<int32_t>({0}, {})}),
              TensorIs<float>({2, 3}, {0, 1, 2, 3, 4, 5}));
  EXPECT_THAT(
      r.Run({Iota({2, 3}), Literal<int32_t>({2}, {1, -1})}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument, "axis 1 specified more than once"));
  EXPECT_THAT(r.Run({Iota({2, 3}), Literal<int32_t>({1}, {2})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "'axis'[0] = 2 is out of valid range [-2, 1]"));
}

TEST(SliceOpsTest, DepthToSpaceAndSpaceToDepth) {
  // TF's documented example: [1, 1, 1, 4] [[[[1, 2, 3, 4]]]] with block 2
  // becomes [1, 2, 2, 1] [[[[1], [2]], [[3], [4]]]].
  KernelRunner d2s("DepthToSpace");
  d2s.Attr("block_size", int64_t{2});
  EXPECT_THAT(RunOk(d2s, {Literal<float>({1, 1, 1, 4}, {1, 2, 3, 4})}),
              TensorIs<float>({1, 2, 2, 1}, {1, 2, 3, 4}));
  // [1, 1, 2, 4] -> [1, 2, 4, 1]: each pixel's four values fill its block.
  EXPECT_THAT(RunOk(d2s, {Literal<float>({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8})}),
              TensorIs<float>({1, 2, 4, 1}, {1, 2, 5, 6, 3, 4, 7, 8}));
  KernelRunner s2d("SpaceToDepth");
  s2d.Attr("block_size", int64_t{2});
  EXPECT_THAT(RunOk(s2d, {Literal<float>({1, 2, 4, 1}, {1, 2, 5, 6, 3, 4, 7, 8})}),
              TensorIs<float>({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_THAT(s2d.Run({Literal<float>({1, 3, 2, 1}, {1, 2, 3, 4, 5, 6})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "should be divisible by block_size: 2"));
  KernelRunner nchw("DepthToSpace");
  nchw.Attr("block_size", int64_t{2}).Attr("data_format", "NCHW");
  EXPECT_THAT(nchw.Run({Literal<float>({1, 4, 1, 1}, {1, 2, 3, 4})}),
              testing::StatusIs(
                  absl::StatusCode::kInvalidArgument,
                  "DepthToSpace supports only NHWC data_format, as TF's CPU kernels. Got NCHW"));
}

TEST(ConcatOpsTest, WhereGivesCoordinatesOfTrueElements) {
  KernelRunner w("Where");
  EXPECT_THAT(RunOk(w, {Literal<bool>({2, 2}, {true, false, false, true})}),
              TensorIs<int64_t>({2, 2}, {0, 0, 1, 1}));
  EXPECT_THAT(RunOk(w, {Literal<float>({3}, {0, -1.5f, 2})}), TensorIs<int64_t>({2, 1}, {1, 2}));
  EXPECT_THAT(RunOk(w, {Literal<int32_t>({2}, {0, 0})}), TensorIs<int64_t>({0, 1}, {}));
}

TEST(PadOpsTest, MirrorPadReflectsOrRepeatsTheEdge) {
  // TF's documented example: [[1, 2, 3], [4, 5, 6]], paddings [[1, 1], [2, 2]].
  const Tensor x = Literal<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor paddings = Literal<int32_t>({2, 2}, {1, 1, 2, 2});
  KernelRunner reflect("MirrorPad");
  reflect.Attr("mode", "REFLECT");
  EXPECT_THAT(RunOk(reflect, {x, paddings}),
              TensorIs<float>({4, 7}, {6, 5, 4, 5, 6, 5, 4, 3, 2, 1, 2, 3, 2, 1,
                                       6, 5, 4, 5, 6, 5, 4, 3, 2, 1, 2, 3, 2, 1}));
  KernelRunner symmetric("MirrorPad");
  symmetric.Attr("mode", "SYMMETRIC");
  EXPECT_THAT(RunOk(symmetric, {x, paddings}),
              TensorIs<float>({4, 7}, {2, 1, 1, 2, 3, 3, 2, 2, 1, 1, 2, 3, 3, 2,
                                       5, 4, 4, 5, 6, 6, 5, 5, 4, 4, 5, 6, 6, 5}));
  // REFLECT pads at most dim - 1, SYMMETRIC at most dim.
  EXPECT_THAT(reflect.Run({x, Literal<int32_t>({2, 2}, {2, 0, 0, 0})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "paddings must be less than the dimension size: 2, 0"));
  EXPECT_THAT(RunOk(symmetric, {x, Literal<int32_t>({2, 2}, {2, 0, 0, 0})}),
              TensorIs<float>({4, 3}, {4, 5, 6, 1, 2, 3, 1, 2, 3, 4, 5, 6}));
  // The gradient sums each padded element into the element it mirrors.
  KernelRunner grad("MirrorPadGrad");
  grad.Attr("mode", "REFLECT");
  EXPECT_THAT(RunOk(grad, {Literal<float>({5}, {1, 2, 3, 4, 5}), Literal<int32_t>({1, 2}, {1, 1})}),
              TensorIs<float>({3}, {2, 1 + 3 + 5, 4}));
}

TEST(DataFlowOpsTest, DynamicPartitionRoutesRowsInOrder) {
  KernelRunner p("DynamicPartition");
  p.Attr("num_partitions", int64_t{3});
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out,
                          p.Run({Iota({4, 2}), Literal<int32_t>({4}, {1, 0, 1, 2})}));
  EXPECT_THAT(out[0], TensorIs<float>({1, 2}, {2, 3}));
  EXPECT_THAT(out[1], TensorIs<float>({2, 2}, {0, 1, 4, 5}));
  EXPECT_THAT(out[2], TensorIs<float>({1, 2}, {6, 7}));
  EXPECT_THAT(
      p.Run({Iota({2}), Literal<int32_t>({2}, {0, 3})}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument, "partitions[1] = 3 is not in [0, 3)"));
  EXPECT_THAT(p.Run({Iota({2}), Literal<int32_t>({3}, {0, 0, 0})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "data.shape must start with partitions.shape"));
}

TEST(DataFlowOpsTest, DynamicStitchMergesLaterIndicesLast) {
  KernelRunner s("DynamicStitch");
  s.Attr("N", int64_t{2});
  EXPECT_THAT(RunOk(s, {Literal<int32_t>({2}, {0, 2}), Literal<int32_t>({1}, {1}),
                        Literal<float>({2, 1}, {10, 30}), Literal<float>({1, 1}, {20})}),
              TensorIs<float>({3, 1}, {10, 20, 30}));
  // Index 1 twice: data[1] wins.
  EXPECT_THAT(RunOk(s, {Literal<int32_t>({2}, {0, 1}), Literal<int32_t>({1}, {1}),
                        Literal<float>({2}, {1, 2}), Literal<float>({1}, {9})}),
              TensorIs<float>({2}, {1, 9}));
  EXPECT_THAT(
      s.Run({Literal<int32_t>({1}, {-1}), Literal<int32_t>({1}, {0}), Literal<float>({1}, {1}),
             Literal<float>({1}, {2})}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument, "indices[0][0] = -1 is negative"));
  EXPECT_THAT(s.Run({Literal<int32_t>({1}, {0}), Literal<int32_t>({1}, {1}),
                     Literal<float>({1, 2}, {1, 2}), Literal<float>({1, 3}, {1, 2, 3})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "does not start with indices[1].shape"));
}

TEST(ScatterNdOpsTest, GatherNdPicksElementsOrSlices) {
  const Tensor params = Literal<float>({2, 2}, {1, 2, 3, 4});
  KernelRunner g("GatherNd");
  EXPECT_THAT(RunOk(g, {params, Literal<int32_t>({2, 2}, {0, 0, 1, 1})}),
              TensorIs<float>({2}, {1, 4}));
  EXPECT_THAT(RunOk(g, {params, Literal<int64_t>({2, 1}, {1, 0})}),
              TensorIs<float>({2, 2}, {3, 4, 1, 2}));
  // An empty index picks all of params.
  EXPECT_THAT(RunOk(g, {params, Literal<int32_t>({1, 0}, {})}),
              TensorIs<float>({1, 2, 2}, {1, 2, 3, 4}));
  EXPECT_THAT(g.Run({params, Literal<int32_t>({2, 2}, {0, 0, 2, 0})}).status(),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "indices[1] = [2, 0] does not index into params shape [2,2]"));
  EXPECT_THAT(g.Run({params, Literal<int32_t>({1, 3}, {0, 0, 0})}).status(),
              testing::StatusIs(absl::StatusCode::kInvalidArgument, "must be <= params.rank"));
}

TEST(ScatterNdOpsTest, ScatterNdAndTensorScatterUpdateAsTensorFlowDocumentsThem) {
  const Tensor indices = Literal<int32_t>({4, 1}, {4, 3, 1, 7});
  const Tensor updates = Literal<float>({4}, {9, 10, 11, 12});
  KernelRunner s("ScatterNd");
  EXPECT_THAT(RunOk(s, {indices, updates, Literal<int32_t>({1}, {8})}),
              TensorIs<float>({8}, {0, 11, 0, 10, 9, 0, 0, 12}));
  // Duplicate indices add.
  EXPECT_THAT(RunOk(s, {Literal<int32_t>({2, 1}, {1, 1}), Literal<float>({2}, {1, 2}),
                        Literal<int32_t>({1}, {3})}),
              TensorIs<float>({3}, {0, 3, 0}));
  EXPECT_THAT(s.Run({indices, Literal<float>({3}, {1, 2, 3}), Literal<int32_t>({1}, {8})}).status(),
              testing::StatusIs(absl::StatusCode::kInvalidArgument, "updates must have shape [4]"));
  EXPECT_THAT(s.Run({indices, updates, Literal<int32_t>({1}, {5})}).status(),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "indices[3] = [7] does not index into output shape [5]"));
  KernelRunner u("TensorScatterUpdate");
  EXPECT_THAT(RunOk(u, {Literal<float>({8}, {1, 2, 3, 4, 5, 6, 7, 8}), indices, updates}),
              TensorIs<float>({8}, {1, 11, 3, 10, 9, 6, 7, 12}));
  // Rows of a matrix, any element type.
  EXPECT_THAT(RunOk(u, {Literal<int64_t>({2, 2}, {1, 2, 3, 4}), Literal<int64_t>({1, 1}, {1}),
                        Literal<int64_t>({1, 2}, {7, 8})}),
              TensorIs<int64_t>({2, 2}, {1, 2, 7, 8}));
}

// TF 2.21's values: params [[0, 1], [2, 3], [4, 5]], a bad row in each
// index list; "", DEFAULT and ERROR refuse it, IGNORE skips it (a gather
// gives zeros for it), and the arithmetic scatters apply duplicates in turn.
TEST(ScatterNdOpsTest, BadIndicesPolicyAndTheArithmeticScattersAsTensorFlow) {
  const Tensor params = Literal<float>({3, 2}, {0, 1, 2, 3, 4, 5});
  const auto run = [&](const char* op, const std::string& policy,
                       const std::vector<Tensor>& inputs) {
    KernelRunner r(op);
    r.Attr("bad_indices_policy", policy);
    return r.Run(inputs);
  };
  const Tensor bad_gather = Literal<int32_t>({3, 1}, {1, 5, 0});
  for (const std::string policy : {"", "DEFAULT", "ERROR"}) {
    EXPECT_THAT(run("GatherNd", policy, {params, bad_gather}),
                testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                  "indices[1] = [5] does not index into params shape [3,2]"));
  }
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, run("GatherNd", "IGNORE", {params, bad_gather}));
  EXPECT_THAT(out[0], TensorIs<float>({3, 2}, {2, 3, 0, 0, 0, 1}));
  TW_ASSERT_OK_AND_ASSIGN(
      out, run("ScatterNd", "IGNORE",
               {Literal<int32_t>({3, 1}, {1, 5, 1}), Literal<float>({3, 2}, {1, 2, 3, 4, 5, 6}),
                Literal<int32_t>({2}, {3, 2})}));
  EXPECT_THAT(out[0], TensorIs<float>({3, 2}, {0, 0, 6, 8, 0, 0}));
  TW_ASSERT_OK_AND_ASSIGN(
      out, run("TensorScatterUpdate", "IGNORE",
               {params, Literal<int32_t>({2, 1}, {1, -1}), Literal<float>({2, 2}, {9, 9, 8, 8})}));
  EXPECT_THAT(out[0], TensorIs<float>({3, 2}, {0, 1, 9, 9, 4, 5}));
  EXPECT_THAT(run("TensorScatterUpdate", "FOO",
                  {params, Literal<int32_t>({1, 1}, {1}), Literal<float>({1, 2}, {9, 9})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Unknown bad indices handling attribute: FOO"));
  const Tensor with_bad = Literal<int32_t>({3, 1}, {1, 7, 1});
  const Tensor with_dup = Literal<int32_t>({3, 1}, {1, 0, 1});
  const Tensor updates = Literal<float>({3, 2}, {9, -9, 8, 8, 1, 10});
  const std::vector<std::pair<const char*, std::vector<float>>> ignoring = {
      {"TensorScatterAdd", {0, 1, 12, 4, 4, 5}}, {"TensorScatterMax", {0, 1, 9, 10, 4, 5}}};
  for (const auto& [op, expected] : ignoring) {
    TW_ASSERT_OK_AND_ASSIGN(out, run(op, "IGNORE", {params, with_bad, updates}));
    EXPECT_THAT(out[0], TensorIs<float>({3, 2}, expected)) << op;
    EXPECT_THAT(run(op, "", {params, with_bad, updates}),
                testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                  "indices[1] = [7] does not index into tensor shape [3,2]"));
  }
  const std::vector<std::pair<const char*, std::vector<float>>> duplicates = {
      {"TensorScatterMin", {0, 1, 1, -9, 4, 5}}, {"TensorScatterSub", {-8, -7, -8, 2, 4, 5}}};
  for (const auto& [op, expected] : duplicates) {
    TW_ASSERT_OK_AND_ASSIGN(out, run(op, "", {params, with_dup, updates}));
    EXPECT_THAT(out[0], TensorIs<float>({3, 2}, expected)) << op;
  }
}

// The first versions of ReverseV2 and SpaceToBatchND/BatchToSpaceND, with
// TF 2.21's values and messages.
TEST(ConcatOpsTest, ReverseAndSpaceToBatchFirstVersions) {
  const Tensor x = Literal<float>({2, 3, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  KernelRunner r("Reverse");
  EXPECT_THAT(RunOk(r, {x, Literal<bool>({3}, {true, false, true})}),
              TensorIs<float>({2, 3, 2}, {7, 6, 9, 8, 11, 10, 1, 0, 3, 2, 5, 4}));
  EXPECT_THAT(r.Run({x, Literal<bool>({2}, {true, false})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "'dims' must have the same number of values as 'input' has "
                                "dimensions. 'input' has 3'dims' has 2 values"));
  KernelRunner to_batch("SpaceToBatch");
  to_batch.Attr("block_size", int64_t{2});
  const Tensor image = Literal<float>({1, 2, 4, 1}, {0, 1, 2, 3, 4, 5, 6, 7});
  const Tensor pads = Literal<int32_t>({2, 2}, {0, 0, 1, 1});
  const Tensor batch = RunOk(to_batch, {image, pads});
  EXPECT_THAT(batch, TensorIs<float>({4, 1, 3, 1}, {0, 1, 3, 0, 2, 0, 0, 5, 7, 4, 6, 0}));
  KernelRunner to_space("BatchToSpace");
  to_space.Attr("block_size", int64_t{2});
  EXPECT_THAT(RunOk(to_space, {batch, pads}), TensorEq(image));
  EXPECT_THAT(to_batch.Run({Literal<float>({2, 3}, {0, 0, 0, 0, 0, 0}),
                            Literal<int32_t>({2, 2}, {0, 0, 0, 0})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Input rank should be: 4 instead of: 2"));
}

TEST(ConcatOpsTest, V1GatherAndConcat) {
  KernelRunner g("Gather");
  EXPECT_THAT(RunOk(g, {Literal<int32_t>({3}, {10, 20, 30}), Literal<int64_t>({2}, {2, 2})}),
              TensorIs<int32_t>({2}, {30, 30}));
  KernelRunner c("Concat");
  EXPECT_THAT(RunOk(c, {Scalar<int32_t>(0), Literal<float>({1}, {1}), Literal<float>({2}, {2, 3})}),
              TensorIs<float>({3}, {1, 2, 3}));
}

}  // namespace
}  // namespace towerflow
