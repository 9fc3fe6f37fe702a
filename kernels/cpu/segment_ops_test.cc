// The segment reductions (segment_ops.cc, sparse_segment_ops.cc) and
// Bucketize against TensorFlow 2.21's values (tf.raw_ops on these inputs):
// empty segments, dropped negative ids, and TF's errors. Gradients are in ops/gradients (finite
// differences); here SegmentProd's gradient with zeros, against TF's three cases.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "ops/const_op.h"
#include "ops/gen/math_ops.h"
#include "ops/gradients.h"
#include "runtime/client_session.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

const Tensor kData = Literal<float>({5, 3}, {1, -2, 3, 4, 5, -6, 0, 8, 9, -1, 0, 2, 7, -3, 5});

Tensor Sorted(const char* op, const Tensor& data, const std::vector<int32_t>& ids) {
  KernelRunner r(op);
  return RunOk(r, {data, Literal<int32_t>({static_cast<int64_t>(ids.size())}, ids)});
}

Tensor Unsorted(const char* op, const Tensor& data) {
  KernelRunner r(op);
  return RunOk(r, {data, Literal<int32_t>({5}, {2, 0, -1, 2, 0}), Literal<int32_t>({}, {4})});
}

TEST(SegmentTest, SortedMatchTensorFlow) {
  const std::vector<int32_t> ids = {0, 0, 2, 2, 3};
  EXPECT_THAT(Sorted("SegmentSum", kData, ids),
              TensorIs<float>({4, 3}, {5, 3, -3, 0, 0, 0, -1, 8, 11, 7, -3, 5}));
  EXPECT_THAT(Sorted("SegmentMean", kData, ids),
              TensorIs<float>({4, 3}, {2.5, 1.5, -1.5, 0, 0, 0, -0.5, 4, 5.5, 7, -3, 5}));
  EXPECT_THAT(Sorted("SegmentMax", kData, ids),
              TensorIs<float>({4, 3}, {4, 5, 3, 0, 0, 0, 0, 8, 9, 7, -3, 5}));
  EXPECT_THAT(Sorted("SegmentMin", kData, ids),
              TensorIs<float>({4, 3}, {1, -2, -6, 0, 0, 0, -1, 0, 2, 7, -3, 5}));
  EXPECT_THAT(Sorted("SegmentProd", kData, ids),
              TensorIs<float>({4, 3}, {4, -10, -18, 1, 1, 1, -0.0f, 0, 18, 7, -3, 5}));
  // Integers: the mean truncates.
  KernelRunner r("SegmentMean");
  EXPECT_THAT(RunOk(r, {Literal<int32_t>({3}, {1, 2, 7}), Literal<int64_t>({3}, {0, 0, 1})}),
              TensorIs<int32_t>({2}, {1, 7}));
}

TEST(SegmentTest, UnsortedMatchTensorFlow) {
  constexpr float kLowest = std::numeric_limits<float>::lowest();
  constexpr float kMax = std::numeric_limits<float>::max();
  EXPECT_THAT(Unsorted("UnsortedSegmentSum", kData),
              TensorIs<float>({4, 3}, {11, 2, -1, 0, 0, 0, 0, -2, 5, 0, 0, 0}));
  EXPECT_THAT(Unsorted("UnsortedSegmentMax", kData),
              TensorIs<float>({4, 3}, {7, 5, 5, kLowest, kLowest, kLowest, 1, 0, 3, kLowest,
                                       kLowest, kLowest}));
  EXPECT_THAT(Unsorted("UnsortedSegmentMin", kData),
              TensorIs<float>({4, 3}, {4, -3, -6, kMax, kMax, kMax, -1, -2, 2, kMax, kMax, kMax}));
  EXPECT_THAT(Unsorted("UnsortedSegmentProd", kData),
              TensorIs<float>({4, 3}, {28, -15, -30, 1, 1, 1, -1, -0.0f, 6, 1, 1, 1}));
  constexpr int32_t kIntLowest = std::numeric_limits<int32_t>::lowest();
  KernelRunner r("UnsortedSegmentMax");
  EXPECT_THAT(RunOk(r, {Literal<int32_t>({3}, {1, 2, 7}), Literal<int32_t>({3}, {0, 0, 2}),
                        Literal<int32_t>({}, {3})}),
              TensorIs<int32_t>({3}, {2, kIntLowest, 7}));
}

TEST(SegmentTest, BadIdsAreTensorFlowsErrors) {
  const auto sorted_error = [](std::vector<int32_t> ids) {
    KernelRunner r("SegmentSum");
    return r.Run({kData, Literal<int32_t>({static_cast<int64_t>(ids.size())}, ids)}).status();
  };
  EXPECT_THAT(sorted_error({0, 2, 1, 2, 3}), testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                                               "segment ids are not increasing"));
  EXPECT_THAT(sorted_error({-1, 0, 1, 2, 3}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Segment id -1 out of range [0, 4), possibly because "
                                "'segment_ids' input is not sorted."));
  EXPECT_THAT(sorted_error({0, 0, 1}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "segment_ids should be the same size as dimension 0 of input."));
  KernelRunner m("SegmentMax");
  EXPECT_THAT(
      m.Run({kData, Literal<int32_t>({1, 5}, {0, 0, 1, 1, 2})}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument, "segment_ids should be a vector."));
  KernelRunner u("UnsortedSegmentMax");
  EXPECT_THAT(u.Run({kData, Literal<int32_t>({5}, {0, 5, 1, 1, 2}), Literal<int32_t>({}, {4})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "segment_ids[1] = 5 is out of range [0, 4)"));
  EXPECT_THAT(u.Run({kData, Literal<int32_t>({2}, {0, 0}), Literal<int32_t>({}, {4})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "data.shape = [5,3] does not start with segment_ids.shape = [2]"));
}

// d/d(data) of sum(SegmentProd(data, ids)), TF's three cases: a segment
// with no zero (each row gets the product of the others), one zero (that
// row gets the product of the others, the rest 0), two zeros (all 0).
Tensor ProdGradient(bool sorted) {
  Scope s = Scope::NewRootScope();
  const Output data = ops::Const(s, {2.f, 3.f, 0.f, 4.f, 0.f, 0.f, 5.f});
  // Unsorted: segment 2 holds rows 4 and 6 (one zero), row 5 is dropped.
  const Output y = sorted ? Output(ops::SegmentProd(s, data, {0, 0, 1, 1, 2, 2, 2}))
                          : Output(ops::UnsortedSegmentProd(s, data, {0, 0, 1, 1, 2, -1, 2}, 3));
  std::vector<Output> grads;
  EXPECT_TRUE(AddSymbolicGradients(s, {ops::Sum(s, y, 0)}, {data}, &grads).ok());
  ClientSession session(s);
  std::vector<Tensor> out;
  EXPECT_TRUE(session.Run({grads[0]}, &out).ok());
  return out.empty() ? Tensor() : out[0];
}

TEST(SegmentTest, ProdGradientWithZeros) {
  EXPECT_THAT(ProdGradient(true), TensorIs<float>({7}, {3, 2, 4, 0, 0, 0, 0}));
  EXPECT_THAT(ProdGradient(false), TensorIs<float>({7}, {3, 2, 4, 0, 5, 0, 0}));
}

// data rows 0..3, rows [0, 2] into segment 0, [1, 3, 3] into segment 2,
// segment 1 empty.
TEST(SegmentTest, SparseSegmentsMatchTensorFlow) {
  const Tensor data = Literal<float>({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  const Tensor indices = Literal<int32_t>({5}, {0, 2, 1, 3, 3});
  const Tensor ids = Literal<int32_t>({5}, {0, 0, 2, 2, 2});
  const auto run = [&](const char* op, std::vector<Tensor> inputs) {
    KernelRunner r(op);
    return r.Run(inputs);
  };
  const std::vector<std::pair<const char*, std::vector<float>>> forward = {
      {"Sum", {6, 8, 0, 0, 17, 20}},
      {"Mean", {3, 4, 0, 0, 5.666667f, 6.666667f}},
      {"SqrtN", {4.2426405f, 5.6568542f, 0, 0, 9.8149548f, 11.547005f}}};
  for (const auto& [reduction, values] : forward) {
    const std::string op = absl::StrCat("SparseSegment", reduction);
    TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, run(op.c_str(), {data, indices, ids}));
    EXPECT_THAT(out[0], TensorNear<float>({3, 2}, values, 2e-6)) << op;
    // num_segments adds the empty segment 3.
    std::vector<float> padded = values;
    padded.insert(padded.end(), {0, 0});
    TW_ASSERT_OK_AND_ASSIGN(
        out, run((op + "WithNumSegments").c_str(), {data, indices, ids, Scalar<int32_t>(4)}));
    EXPECT_THAT(out[0], TensorNear<float>({4, 2}, padded, 2e-6)) << op;
  }
  const Tensor grad = Literal<float>({3, 2}, {1, -1, 0.5f, 2, 3, 4});
  const std::vector<std::pair<const char*, std::vector<float>>> backward = {
      {"SparseSegmentSumGrad", {1, -1, 3, 4, 1, -1, 6, 8, 0, 0}},
      {"SparseSegmentMeanGrad", {0.5f, -0.5f, 1, 1.3333334f, 0.5f, -0.5f, 2, 2.6666667f, 0, 0}},
      {"SparseSegmentSqrtNGrad",
       {0.70710677f, -0.70710677f, 1.7320508f, 2.309401f, 0.70710677f, -0.70710677f, 3.4641016f,
        4.618802f, 0, 0}}};
  for (const auto& [op, values] : backward) {
    TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out,
                            run(op, {grad, indices, ids, Scalar<int32_t>(5)}));
    EXPECT_THAT(out[0], TensorNear<float>({5, 2}, values, 2e-6)) << op;
  }
  const auto ints = [](std::vector<int32_t> v) {
    return Literal<int32_t>({static_cast<int64_t>(v.size())}, v);
  };
  EXPECT_THAT(run("SparseSegmentSum", {data, ints({0, 4}), ints({0, 1})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "Bad: indices[1] == 4 out of range [0, 4)"));
  EXPECT_THAT(
      run("SparseSegmentSum", {data, ints({0, 1}), ints({1, 0})}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument, "segment ids are not increasing"));
  EXPECT_THAT(run("SparseSegmentSum", {data, ints({0, 1, 2}), ints({0, 1})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                "segment_ids and indices should have same size."));
  EXPECT_THAT(
      run("SparseSegmentSumWithNumSegments",
          {data, ints({0, 1}), ints({0, 3}), Scalar<int32_t>(3)}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument, "segment ids must be < num_segments"));
  EXPECT_THAT(
      run("SparseSegmentMeanGrad", {grad, ints({0, 9}), ints({0, 1}), Scalar<int32_t>(5)}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument, "Index 9 out of range [0, 5)."));
  EXPECT_THAT(run("SparseSegmentMeanGrad", {grad, ints({0, 1}), ints({0, 5}), Scalar<int32_t>(5)}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument, "Invalid number of segments"));
  // TF 2's V2 gradients: the rows of the sorted unique indices only
  // (tf.raw_ops.SparseSegment*GradV2, TF 2.21's values).
  const Tensor g2 = Literal<float>({2, 2}, {1, 2, 3, 4});
  const std::vector<std::pair<const char*, std::vector<float>>> compact = {
      {"SparseSegmentSumGradV2", {1, 2, 4, 6}},
      {"SparseSegmentMeanGradV2", {0.5f, 1, 3.5f, 5}},
      {"SparseSegmentSqrtNGradV2", {0.70710677f, 1.4142135f, 3.7071068f, 5.4142137f}}};
  for (const auto& [op, values] : compact) {
    TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out,
                            run(op, {g2, ints({2, 0, 2}), ints({0, 0, 1}), Scalar<int32_t>(4)}));
    EXPECT_THAT(out[0], TensorNear<float>({2, 2}, values, 2e-6)) << op;
    EXPECT_THAT(out[1], TensorIs<int32_t>({2}, {0, 2})) << op;
  }
  EXPECT_THAT(
      run("SparseSegmentSumGradV2", {g2, ints({5, 0, 2}), ints({0, 0, 1}), Scalar<int32_t>(4)}),
      testing::StatusIs(absl::StatusCode::kInvalidArgument, "Index 5 out of range [0, 4)."));
  // No rows: no segments.
  TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> none,
                          run("SparseSegmentSum", {data, ints({}), ints({})}));
  EXPECT_EQ(none[0].shape(), TensorShape({0, 2}));
}

// The buckets are counts of boundaries at or below each value (NaN past
// them all); integers compare with the float boundaries.
TEST(SegmentTest, BucketizeMatchesTensorFlow) {
  KernelRunner f("Bucketize");
  f.Attr("boundaries", std::vector<float>{0, 1, 3});
  EXPECT_THAT(RunOk(f, {Literal<float>({7}, {-5, 0, 1, 2.5f, 3, 10, NAN})}),
              TensorIs<int32_t>({7}, {0, 1, 2, 2, 3, 3, 3}));
  KernelRunner i("Bucketize");
  i.Attr("boundaries", std::vector<float>{0, 1.5f, 3});
  EXPECT_THAT(RunOk(i, {Literal<int32_t>({6}, {-5, 0, 1, 2, 3, 10})}),
              TensorIs<int32_t>({6}, {0, 1, 1, 2, 3, 3}));
  KernelRunner unsorted("Bucketize");
  unsorted.Attr("boundaries", std::vector<float>{1, 0});
  EXPECT_THAT(unsorted.Run({Literal<float>({1}, {1})}),
              testing::StatusIs(absl::StatusCode::kInvalidArgument, "Expected sorted boundaries"));
}

}  // namespace
}  // namespace towerflow
