// TensorArray (kernels/cpu/tensor_array_ops.cc, ops/tensor_array.h): TF's
// semantics and error messages (TF 2.21 with V1 control flow, the V3 ops),
// gradients against finite differences, through while loops too (an RNN
// with TF's values), MapFn and Scan.
#include "ops/tensor_array.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/const_op.h"
#include "ops/control_flow.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/data_flow_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gradients.h"
#include "runtime/client_session.h"
#include "testing/gradient_checker.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::towerflow::testing::StatusIs;
using Outputs = std::vector<Output>;

// Runs `fetches` in a new session on `s`'s graph.
absl::StatusOr<std::vector<Tensor>> RunGraph(const Scope& s, const Outputs& fetches) {
  ClientSession session(s);
  std::vector<Tensor> out;
  absl::Status status = session.Run(fetches, &out);
  if (!status.ok()) return status;
  return out;
}

TEST(TensorArrayTest, WritesReadsAndStacks) {
  Scope s = Scope::NewRootScope();
  ops::TensorArray ta(s, DT_FLOAT, 3);
  ta = ta.Write(s, 0, ops::Const(s, {1.f, 2.f})).Write(s, 2, ops::Const(s, {5.f, 6.f}));
  // Element 1 was never written: zeros of the inferred shape.
  TW_ASSERT_OK_AND_ASSIGN(auto out, RunGraph(s, {ta.Stack(s), ta.Size(s)}));
  EXPECT_THAT(out[0], TensorIs<float>({3, 2}, {1, 2, 0, 0, 5, 6}));
  EXPECT_THAT(out[1], TensorIs<int32_t>({}, {3}));

  Scope u = Scope::NewRootScope();
  const ops::TensorArray rows =
      ops::TensorArray(u, DT_INT32, 3).Unstack(u, ops::Const(u, {{1, 2}, {3, 4}, {5, 6}}));
  TW_ASSERT_OK_AND_ASSIGN(out, RunGraph(u, {rows.Read(u, 1), rows.Gather(u, {2, 0})}));
  EXPECT_THAT(out[0], TensorIs<int32_t>({2}, {3, 4}));
  EXPECT_THAT(out[1], TensorIs<int32_t>({2, 2}, {5, 6, 1, 2}));
}

TEST(TensorArrayTest, DynamicSizeSplitAndConcat) {
  Scope s = Scope::NewRootScope();
  ops::TensorArray::Options grow;
  grow.dynamic_size = true;
  const ops::TensorArray ta = ops::TensorArray(s, DT_FLOAT, 1, grow).Write(s, 3, {1.f, 2.f});
  const ops::TensorArray pieces =
      ops::TensorArray(s, DT_FLOAT, 2, {.infer_shape = false})
          .Split(s, ops::Const(s, {1.f, 2.f, 3.f}), ops::Const(s, {int64_t{1}, int64_t{2}}));
  TW_ASSERT_OK_AND_ASSIGN(auto out, RunGraph(s, {ta.Size(s), pieces.Concat(s)}));
  EXPECT_THAT(out[0], TensorIs<int32_t>({}, {4}));
  EXPECT_THAT(out[1], TensorIs<float>({3}, {1, 2, 3}));
}

TEST(TensorArrayTest, BadUsesAreTensorFlowsErrors) {
  const auto error = [](auto build) {
    Scope s = Scope::NewRootScope();
    return RunGraph(s, {build(s)}).status();
  };
  EXPECT_THAT(error([](const Scope& s) {
                return ops::TensorArray(s, DT_FLOAT, 2)
                    .Write(s, 0, {1.f, 2.f})
                    .Write(s, 0, {3.f, 4.f})
                    .Read(s, 0);
              }),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Could not write to TensorArray index 0 because it has already been "
                       "written to."));
  EXPECT_THAT(error([](const Scope& s) {
                const ops::TensorArray ta = ops::TensorArray(s, DT_FLOAT, 2).Write(s, 0, {1.f});
                return ops::AddV2(s, ta.Read(s, 0), ta.WithFlow(ta.flow()).Read(s, 0));
              }),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Could not read index 0 twice because it was cleared after a previous "
                       "read (perhaps try setting clear_after_read = false?)."));
  EXPECT_THAT(error([](const Scope& s) {
                return ops::TensorArray(s, DT_FLOAT, 2, {.infer_shape = false})
                    .Write(s, 0, {1.f, 2.f})
                    .Read(s, 1);
              }),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Could not read from TensorArray index 1.  Furthermore, the element shape "
                       "is not fully defined: <unknown>."));
  EXPECT_THAT(error([](const Scope& s) {
                return ops::TensorArray(s, DT_FLOAT, 2).Write(s, 3, {1.f}).Size(s);
              }),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Tried to write to index 3 but array is not resizeable and size is: 2"));
  EXPECT_THAT(error([](const Scope& s) {
                return ops::TensorArray(s, DT_FLOAT, 2, {.infer_shape = false})
                    .Write(s, 0, {1.f, 2.f})
                    .Write(s, 1, {3.f})
                    .Stack(s);
              }),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "TensorArray has inconsistent shapes.  Index 0 has shape: [2] but index 1 "
                       "has shape: [1]"));
  EXPECT_THAT(error([](const Scope& s) {
                return ops::TensorArray(s, DT_FLOAT, 2)
                    .Split(s, ops::Const(s, {1.f, 2.f, 3.f}),
                           ops::Const(s, {int64_t{1}, int64_t{2}}))
                    .Concat(s);
              }),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Could not write to TensorArray index 1 because the value shape is [2] "
                       "which is incompatible with the TensorArray's inferred element shape: [1] "
                       "(consider setting infer_shape=False)."));
}

// Malformed inputs (as a GraphDef may hold them) are errors, never crashes.
TEST(TensorArrayTest, MalformedInputsAreErrors) {
  const auto error = [](auto build) {
    Scope s = Scope::NewRootScope();
    return RunGraph(s, {build(s)}).status();
  };
  EXPECT_THAT(
      error([](const Scope& s) -> Output { return ops::TensorArray(s, DT_FLOAT, -1).Size(s); }),
      StatusIs(absl::StatusCode::kInvalidArgument, "Size should be >= 0, got -1"));
  EXPECT_THAT(error([](const Scope& s) -> Output {
                const ops::TensorArrayV3 ta(s, 2, DT_FLOAT);
                return ops::TensorArrayReadV3(s, ta.handle, {0, 1}, ta.flow, DT_FLOAT);
              }),
              StatusIs(absl::StatusCode::kInvalidArgument, "index must be a scalar"));
  EXPECT_THAT(error([](const Scope& s) -> Output {
                const ops::TensorArrayV3 ta(s, 2, DT_FLOAT);
                return ops::TensorArrayReadV3(s, ta.handle, 0, ta.flow, DT_INT32);
              }),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "TensorArray dtype is float but Op requested dtype int32."));
  EXPECT_THAT(error([](const Scope& s) -> Output {
                const ops::TensorArrayV3 ta(s, 2, DT_FLOAT);
                return ops::TensorArrayScatterV3(s, ta.handle, {0, 1}, 1.f, ta.flow);
              }),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Expected value to be at least a vector, but received shape: []"));
  EXPECT_THAT(error([](const Scope& s) -> Output {
                const ops::TensorArrayV3 ta(s, 2, DT_FLOAT);
                return ops::TensorArrayScatterV3(s, ta.handle, {0, 1}, {1.f, 2.f, 3.f}, ta.flow);
              }),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Expected len(indices) == values.shape[0], but saw: 2 vs. 3"));
  EXPECT_THAT(error([](const Scope& s) -> Output {
                const ops::TensorArrayV3 ta(s, 2, DT_FLOAT);
                return ops::TensorArraySplitV3(s, ta.handle, {1.f, 2.f, 3.f},
                                               ops::Const(s, {int64_t{1}, int64_t{1}}), ta.flow);
              }),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Expected sum of lengths to be equal to values.shape[0], but sum of "
                       "lengths is: 2 and value's shape is: [3]"));
  EXPECT_THAT(error([](const Scope& s) -> Output {
                return ops::TensorArray(s, DT_FLOAT, int32_t{1} << 30).Size(s);
              }),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "is beyond the 16777216 elements an array may hold"));
  EXPECT_THAT(error([](const Scope& s) -> Output {
                const ops::TensorArrayV3 ta(s, 2, DT_FLOAT);
                const int64_t huge = int64_t{1} << 62;
                return ops::TensorArraySplitV3(s, ta.handle, ops::Const(s, {1.f, 2.f}),
                                               ops::Const(s, {huge, huge, huge, huge}), ta.flow);
              }),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "but sum of lengths is: more than 2 and value's shape is: [2]"));
  EXPECT_THAT(
      error([](const Scope& s) -> Output {
        const ops::TensorArrayV3 ta(s, 2, DT_FLOAT);
        return ops::TensorArrayGatherV3(s, ta.handle, ops::Const(s, {{0, 1}}), ta.flow, DT_FLOAT);
      }),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "Expected indices to be a vector, but received shape: [1,2]"));
  EXPECT_THAT(error([](const Scope& s) -> Output {
                const ops::TensorArrayV3 ta(s, 2, DT_FLOAT);
                const Operation close = ops::TensorArrayCloseV3(s, ta.handle).operation;
                return ops::TensorArraySizeV3(s.WithControlDependencies({close}), ta.handle,
                                              ta.flow);
              }),
              StatusIs(absl::StatusCode::kInvalidArgument, "has already been closed"));
}

// y = square(gather([1, 0], scatter([0, 1], x))), and a split and concat.
TEST(TensorArrayTest, GradientsMatchFiniteDifferences) {
  Scope s = Scope::NewRootScope();
  const Output x = ops::Placeholder(s, DT_DOUBLE, ops::Placeholder::Shape({2, 3}));
  const ops::TensorArray ta = ops::TensorArray(s, DT_DOUBLE, 2).Scatter(s, {0, 1}, x);
  const Output y = ops::Square(s, ta.Gather(s, {1, 0}));
  const ops::TensorArray pieces =
      ops::TensorArray(s, DT_DOUBLE, 2, {.infer_shape = false})
          .Split(s, ops::Reshape(s, x, {6}), ops::Const(s, {int64_t{2}, int64_t{4}}));
  const Output z = ops::Square(s, pieces.Concat(s));
  const Tensor value = Literal<double>({2, 3}, {0.5, -1.0, 2.0, 0.25, 1.5, -0.75});
  TW_ASSERT_OK_AND_ASSIGN(double err, ComputeGradientError<double>(s, {x}, {value}, {y}));
  EXPECT_LT(err, 1e-6);
  TW_ASSERT_OK_AND_ASSIGN(err, ComputeGradientError<double>(s, {x}, {value}, {z}));
  EXPECT_LT(err, 1e-6);
}

// Two reads of one element (clear_after_read false) write their gradients
// into one element of the gradient array, which adds them: d(r + 2 r)/dx = 3.
TEST(TensorArrayTest, GradientArraysAddRepeatedWrites) {
  Scope s = Scope::NewRootScope();
  const Output x = ops::Placeholder(s, DT_FLOAT, ops::Placeholder::Shape({2}));
  const ops::TensorArray ta =
      ops::TensorArray(s, DT_FLOAT, 1, {.clear_after_read = false}).Write(s, 0, x);
  const Output y = ops::AddV2(s, ta.Read(s, 0), ops::Mul(s, ta.Read(s, 0), 2.f));
  Outputs grads;
  TW_ASSERT_OK(AddSymbolicGradients(s, {y}, {x}, &grads));
  ClientSession session(s);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({{x, Literal<float>({2}, {1, -1})}}, {y, grads[0]}, &out));
  EXPECT_THAT(out[0], TensorIs<float>({2}, {3, -3}));
  EXPECT_THAT(out[1], TensorIs<float>({2}, {3, 3}));
}

// h_i = tanh(h_{i-1} w + x_i) over x's rows, every h_i written to an
// array and stacked: TF's outputs and gradients of sum(y^2) (tf.compat.v1
// while_loop with TensorArrays, TF 2.21), and finite differences.
TEST(TensorArrayTest, RecurrentLoopMatchesTensorFlow) {
  Scope s = Scope::NewRootScope();
  const Output x = ops::Placeholder(s, DT_FLOAT, ops::Placeholder::Shape({4, 3}));
  const Output w =
      ops::Placeholder(s, DT_FLOAT, ops::Placeholder::Shape(PartialTensorShape::Scalar()));
  const ops::TensorArray in = ops::TensorArray(s, DT_FLOAT, 4).Unstack(s, x);
  const ops::TensorArray out(s, DT_FLOAT, 4);
  TW_ASSERT_OK_AND_ASSIGN(
      Outputs loop,
      ops::WhileLoop(
          s, {ops::Const(s, 0), ops::Const(s, {0.f, 0.f, 0.f}), out.flow()},
          [](const Scope& c, const Outputs& v) -> absl::StatusOr<Output> {
            return ops::Less(c, v[0], 4);
          },
          [&](const Scope& b, const Outputs& v) -> absl::StatusOr<Outputs> {
            const Output h = ops::Tanh(b, ops::AddV2(b, ops::Mul(b, v[1], w), in.Read(b, v[0])));
            return Outputs{ops::AddV2(b, v[0], 1), h, out.WithFlow(v[2]).Write(b, v[0], h).flow()};
          }));
  const Output y = out.WithFlow(loop[2]).Stack(s);
  const Output loss = ops::Sum(s, ops::Square(s, y), {0, 1});
  Outputs grads;
  TW_ASSERT_OK(AddSymbolicGradients(s, {loss}, {x, w}, &grads));
  std::vector<float> xs(12);
  for (int i = 0; i < 12; ++i) xs[i] = i / 10.f;
  const Tensor x_value = Literal<float>({4, 3}, xs), w_value = Literal<float>({}, {0.5f});
  ClientSession session(s);
  std::vector<Tensor> got;
  TW_ASSERT_OK(session.Run({{x, x_value}, {w, w_value}}, {y, grads[0], grads[1]}, &got));
  EXPECT_THAT(got[0],
              TensorNear<float>({4, 3},
                                {0, 0.099668, 0.19737533, 0.29131263, 0.42176256, 0.53611505,
                                 0.6325505, 0.72155493, 0.7887283, 0.838552, 0.8765733, 0.9041246},
                                1e-6));
  EXPECT_THAT(got[1], TensorNear<float>(
                          {4, 3},
                          {0.47437814, 0.70121956, 0.8592551, 0.9487563, 1.0178384, 0.99867076,
                           0.9082234, 0.7890917, 0.65850884, 0.49781567, 0.4060624, 0.33011156},
                          1e-5));
  EXPECT_THAT(got[2], TensorNear<float>({}, {2.11724}, 1e-5));
}

TEST(TensorArrayTest, MapFnAndScan) {
  Scope s = Scope::NewRootScope();
  const Output x = ops::Placeholder(s, DT_DOUBLE, ops::Placeholder::Shape({3, 2}));
  TW_ASSERT_OK_AND_ASSIGN(
      Output squares,
      ops::MapFn(s, x, DT_DOUBLE, [](const Scope& b, const Output& row) -> absl::StatusOr<Output> {
        return ops::Mul(b, row, row);
      }));
  TW_ASSERT_OK_AND_ASSIGN(Output sums, ops::Scan(s, x, ops::Const(s, {0.0, 0.0}),
                                                 [](const Scope& b, const Output& acc,
                                                    const Output& row) -> absl::StatusOr<Output> {
                                                   return ops::AddV2(b, ops::Mul(b, acc, 0.5), row);
                                                 }));
  const Tensor value = Literal<double>({3, 2}, {1, 2, 3, 4, 5, 6});
  ClientSession session(s);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({{x, value}}, {squares, sums}, &out));
  EXPECT_THAT(out[0], TensorIs<double>({3, 2}, {1, 4, 9, 16, 25, 36}));
  // acc_i = acc_{i-1} / 2 + x_i.
  EXPECT_THAT(out[1], TensorIs<double>({3, 2}, {1, 2, 3.5, 5, 6.75, 8.5}));
  TW_ASSERT_OK_AND_ASSIGN(double err, ComputeGradientError<double>(s, {x}, {value}, {squares}));
  EXPECT_LT(err, 1e-6);
  TW_ASSERT_OK_AND_ASSIGN(err, ComputeGradientError<double>(s, {x}, {value}, {sums}));
  EXPECT_LT(err, 1e-6);
}

}  // namespace
}  // namespace towerflow
