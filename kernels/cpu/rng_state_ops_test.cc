// RngReadAndSkip and RngSkip (rng_state_ops.cc) on a resource variable, with
// TensorFlow's states and messages (TF 2.21, tf.raw_ops), and a
// tf.random.Generator's draw (RngReadAndSkip, Bitcast, StatelessRandomUniformV2)
// giving TF's numbers.
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/ops.h"
#include "runtime/client_session.h"
#include "testing/status_matchers.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::testing::ElementsAre;
using ::towerflow::testing::StatusIs;

Output Const(const Scope& s, const Tensor& t) { return ops::Const(s, t.AsProto()); }

std::vector<int64_t> Values(const Tensor& t) {
  return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.NumElements());
}

struct Step {
  absl::Status status;
  std::vector<int64_t> read, after;
};

// Assigns `state` to an int64 variable, steps it once, reads it back.
Step ReadAndSkip(const Tensor& state, int32_t alg, int64_t delta) {
  Scope root = Scope::NewRootScope();
  auto v = ops::VarHandleOp(root.WithOpName("rng"), state.dtype(), PartialTensorShape());
  auto assign = ops::AssignVariableOp(root, v, Const(root, state));
  auto step = ops::RngReadAndSkip(root, v, alg, ops::Cast(root, delta, DT_UINT64));
  auto read = ops::ReadVariableOp(root, v, state.dtype());
  ClientSession session(root);
  Step result;
  result.status = session.Run({}, {}, {assign.operation}, nullptr);
  std::vector<Tensor> out;
  if (result.status.ok()) result.status = session.Run({step}, &out);
  if (!result.status.ok()) return result;
  result.read = Values(out[0]);
  result.status = session.Run({read}, &out);
  if (!result.status.ok()) return result;
  result.after = Values(out[0]);
  return result;
}

TEST(RngStateOpsTest, ReadAndSkipMovesThe128BitCounterBy256PerDelta) {
  Step s = ReadAndSkip(Literal<int64_t>({3}, {5, 0, 7}), 1, 3);
  TW_ASSERT_OK(s.status);
  EXPECT_THAT(s.read, ElementsAre(5, 0, 7));
  EXPECT_THAT(s.after, ElementsAre(773, 0, 7));
  // The low word carries into the high one.
  s = ReadAndSkip(Literal<int64_t>({3}, {-1, 4, 7}), 1, 1);
  EXPECT_THAT(s.after, ElementsAre(255, 5, 7));
  s = ReadAndSkip(Literal<int64_t>({3}, {-256, -1, 7}), 3, 1);  // auto-select: Philox
  EXPECT_THAT(s.after, ElementsAre(0, 0, 7));
  // 256 * 2^60 wraps to 0 in 64 bits, as TF's; words past the third stay.
  s = ReadAndSkip(Literal<int64_t>({4}, {5, 0, 7, 9}), 1, int64_t{1} << 60);
  EXPECT_THAT(s.read, ElementsAre(5, 0, 7));
  EXPECT_THAT(s.after, ElementsAre(5, 0, 7, 9));
}

TEST(RngStateOpsTest, RefusesWhatTensorFlowRefuses) {
  const auto invalid = [](const char* message) {
    return StatusIs(absl::StatusCode::kInvalidArgument, message);
  };
  EXPECT_THAT(ReadAndSkip(Literal<int64_t>({2}, {1, 2}), 2, 1).status,
              invalid("Non-XLA devices don't support the ThreeFry algorithm."));
  EXPECT_THAT(ReadAndSkip(Literal<int64_t>({3}, {1, 2, 3}), 0, 1).status,
              invalid("Unsupported algorithm id: 0"));
  // TF's kernel writes past a state this short (a heap overflow); here it
  // is refused.
  EXPECT_THAT(ReadAndSkip(Literal<int64_t>({2}, {1, 2}), 1, 1).status,
              invalid("For the Philox algorithm, the size of state must be at least 3; got 2"));
  EXPECT_THAT(ReadAndSkip(Literal<int64_t>({1, 3}, {1, 2, 3}), 1, 1).status,
              invalid("RNG state must have one and only one dimension, not 2"));
  EXPECT_THAT(ReadAndSkip(Literal<int32_t>({3}, {1, 2, 3}), 1, 1).status,
              invalid("dtype of RNG state variable must be int64, not int32"));
}

// tf.random.Generator.from_seed(1).uniform([2, 3]) as TF 2 writes it.
TEST(RngStateOpsTest, AGeneratorsUniformDrawIsTensorFlows) {
  Scope root = Scope::NewRootScope();
  auto v = ops::VarHandleOp(root.WithOpName("rng"), DT_INT64, PartialTensorShape({3}));
  auto assign = ops::AssignVariableOp(root, v, Const(root, Literal<int64_t>({3}, {1, 0, 0})));
  auto state = ops::RngReadAndSkip(root, v, 1, ops::Cast(root, int64_t{6}, DT_UINT64));
  auto counter = ops::Bitcast(root, ops::Slice(root, state, {0}, {2}), DT_UINT64);
  auto key = ops::Bitcast(root, ops::Slice(root, state, {2}, {1}), DT_UINT64);
  auto uniform = ops::StatelessRandomUniformV2(root, {2, 3}, key, counter, 1);
  ClientSession session(root);
  TW_ASSERT_OK(session.Run({}, {}, {assign.operation}, nullptr));
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({uniform}, &out));
  EXPECT_THAT(out[0], TensorNear<float>({2, 3},
                                        {0.78749514f, 0.3906511f, 0.29263055f, 0.99216926f,
                                         0.95810425f, 0.55623317f},
                                        1e-7));
}

}  // namespace
}  // namespace towerflow
