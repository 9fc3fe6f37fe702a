// The segment reductions (segment_ops.cc) against TensorFlow 2.21's values
// (tf.raw_ops on these inputs): empty segments, dropped negative ids, and
// TF's errors. Gradients are in ops/gradients (finite differences); here
// SegmentProd's gradient with zeros, against TF's three cases.
#include <limits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_runner.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "ops/gradients.h"
#include "ops/ops.h"
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

}  // namespace
}  // namespace towerflow
