// RngReadAndSkip and RngSkip (rng_state_ops.cc) on a resource variable, with
// TensorFlow's states and messages (TF 2.21, tf.raw_ops), and a
// tf.random.Generator's draw (RngReadAndSkip, Bitcast, StatelessRandomUniformV2)
// giving TF's numbers; its Stateful* draws (StatefulUniform and the rest,
// stateless_random_ops.cc) on the state variable.
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/index_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/random_ops.h"
#include "ops/gen/state_ops.h"
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

// The Stateful* draws of tf.random.Generator on state [5, 0, 42] (counter
// 5, key 42), TF 2.21's numbers and the state after (tf.raw_ops).
struct Draws {
  absl::Status status;
  std::vector<Tensor> out;
  std::vector<int64_t> after;
};

template <typename MakeDraw>
Draws Draw(const Tensor& state, MakeDraw make) {
  Scope root = Scope::NewRootScope();
  auto v = ops::VarHandleOp(root.WithOpName("rng"), state.dtype(), PartialTensorShape());
  auto assign = ops::AssignVariableOp(root, v, Const(root, state));
  std::vector<Output> draws = make(root, v);
  ClientSession session(root);
  Draws d;
  d.status = session.Run({}, {}, {assign.operation}, nullptr);
  for (const Output& draw : draws) {
    std::vector<Tensor> out;
    if (d.status.ok()) d.status = session.Run({draw}, &out);
    if (!d.status.ok()) return d;
    d.out.push_back(out[0]);
  }
  std::vector<Tensor> read;
  d.status = session.Run({ops::ReadVariableOp(root, v, state.dtype())}, &read);
  if (d.status.ok() && state.dtype() == DT_INT64) d.after = Values(read[0]);
  return d;
}

const Tensor kState = Literal<int64_t>({3}, {5, 0, 42});

TEST(StatefulRandomOpsTest, DrawsAreTensorFlowsAndMoveTheCounter) {
  Draws d = Draw(kState, [](const Scope& s, Output v) {
    return std::vector<Output>{ops::StatefulUniform(s, v, int64_t{1}, {2, 3}),
                               ops::StatefulUniform(s, v, int64_t{1}, {3})};
  });
  TW_ASSERT_OK(d.status);
  EXPECT_THAT(d.out[0],
              TensorNear<float>({2, 3},
                                {0.20190536975860596, 0.25554871559143066, 0.5133631229400635,
                                 0.7906502485275269, 0.44681692123413086, 0.48639416694641113},
                                0));
  EXPECT_THAT(d.out[1], TensorNear<float>(
                            {3}, {0.5978943109512329, 0.36445701122283936, 0.5983915328979492}, 0));
  EXPECT_THAT(d.after, ElementsAre(2309, 0, 42));  // 5 + 256 * (6 + 3)

  d = Draw(kState, [](const Scope& s, Output v) {
    return std::vector<Output>{ops::StatefulStandardNormalV2(
        s, v, int64_t{1}, {3}, ops::StatefulStandardNormalV2::Dtype(DT_DOUBLE))};
  });
  TW_ASSERT_OK(d.status);
  EXPECT_THAT(
      d.out[0],
      TensorNear<double>({3}, {0.6133807536703909, 0.7715174735984164, -1.05048036826542}, 1e-15));

  d = Draw(kState, [](const Scope& s, Output v) {
    return std::vector<Output>{ops::StatefulTruncatedNormal(s, v, int64_t{1}, {5})};
  });
  TW_ASSERT_OK(d.status);
  EXPECT_THAT(d.out[0],
              TensorNear<float>({5},
                                {1.7877428531646729, -0.06235247850418091, -1.1173290014266968,
                                 0.2917524576187134, 0.5121068954467773},
                                1e-6));
  EXPECT_THAT(d.after, ElementsAre(1285, 0, 42));

  d = Draw(kState, [](const Scope& s, Output v) {
    return std::vector<Output>{
        ops::StatefulUniformInt(s, v, int64_t{1}, {4}, int64_t{-5}, int64_t{10})};
  });
  TW_ASSERT_OK(d.status);
  EXPECT_THAT(d.out[0], TensorIs<int64_t>({4}, {6, 5, 2, 2}));

  d = Draw(kState, [](const Scope& s, Output v) {
    return std::vector<Output>{ops::StatefulUniformFullInt(
        s, v, int64_t{1}, {2}, ops::StatefulUniformFullInt::Dtype(DT_UINT32))};
  });
  TW_ASSERT_OK(d.status);
  EXPECT_THAT(d.out[0], TensorIs<uint32_t>({2}, {1352259593u, 1260434898u}));

  // Auto-select is Philox.
  d = Draw(kState, [](const Scope& s, Output v) {
    return std::vector<Output>{ops::StatefulUniform(s, v, int64_t{3}, {2})};
  });
  TW_ASSERT_OK(d.status);
  EXPECT_THAT(d.out[0], TensorNear<float>({2}, {0.20190536975860596, 0.25554871559143066}, 0));
}

// 16-bit draws: TF's own conversions (uniforms from a word's 10 or 7 low
// bits, normals rounded from float), 256 blocks per output still.
TEST(StatefulRandomOpsTest, HalfAndBfloat16DrawsAreTensorFlows) {
  for (const DataType dtype : {DT_HALF, DT_BFLOAT16}) {
    Draws d = Draw(kState, [dtype](const Scope& s, Output v) {
      return std::vector<Output>{
          ops::StatefulUniform(s, v, int64_t{1}, {5}, ops::StatefulUniform::Dtype(dtype)),
          ops::StatefulTruncatedNormal(s, v, int64_t{1}, {5},
                                       ops::StatefulTruncatedNormal::Dtype(dtype))};
    });
    TW_ASSERT_OK(d.status);
    if (dtype == DT_HALF) {
      EXPECT_THAT(d.out[0],
                  TensorIs<half>({5}, {half(0.0087890625f), half(0.455078125f), half(0.470703125f),
                                       half(0.0068359375f), half(0.32421875f)}));
      EXPECT_THAT(d.out[1], TensorIs<half>({5}, {half(0.71630859375f), half(-0.112548828125f),
                                                 half(-1.728515625f), half(-0.003131866455078125f),
                                                 half(0.76318359375f)}));
    } else {
      EXPECT_THAT(d.out[0], TensorIs<bfloat16>({5}, {bfloat16(0.0703125f), bfloat16(0.640625f),
                                                     bfloat16(0.765625f), bfloat16(0.0546875f),
                                                     bfloat16(0.59375f)}));
      EXPECT_THAT(d.out[1],
                  TensorIs<bfloat16>(
                      {5}, {bfloat16(0.71484375f), bfloat16(-0.11279296875f), bfloat16(-1.7265625f),
                            bfloat16(-0.0031280517578125f), bfloat16(0.76171875f)}));
    }
    EXPECT_THAT(d.after, ElementsAre(2565, 0, 42));  // 5 + 256 * (5 + 5)
  }
}

TEST(StatefulRandomOpsTest, RefusesWhatTensorFlowRefuses) {
  const auto uniform = [](int64_t alg) {
    return [alg](const Scope& s, Output v) {
      return std::vector<Output>{ops::StatefulUniform(s, v, alg, {2})};
    };
  };
  EXPECT_THAT(Draw(kState, uniform(2)).status,
              StatusIs(absl::StatusCode::kUnimplemented,
                       "Non-XLA devices don't support the ThreeFry algorithm."));
  EXPECT_THAT(Draw(kState, uniform(7)).status,
              StatusIs(absl::StatusCode::kInvalidArgument, "Unsupported algorithm id: 7"));
  EXPECT_THAT(Draw(Literal<int64_t>({2}, {5, 0}), uniform(1)).status,
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "For the Philox algorithm, the size of state must be at least 3; got 2"));
  EXPECT_THAT(Draw(Literal<float>({3}, {5, 0, 1}), uniform(1)).status,
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "dtype of RNG state variable must be int64, not float"));
  EXPECT_THAT(Draw(kState,
                   [](const Scope& s, Output v) {
                     return std::vector<Output>{
                         ops::StatefulUniformInt(s, v, int64_t{1}, {0}, int64_t{5}, int64_t{1})};
                   })
                  .status,
              StatusIs(absl::StatusCode::kInvalidArgument, "Need minval < maxval, got 5 >= 1"));
}

TEST(NonDeterministicIntsTest, FreshNumbersOfTheShapeAndType) {
  Scope root = Scope::NewRootScope();
  auto ints = ops::NonDeterministicInts(root, {2, 3});
  auto narrow = ops::NonDeterministicInts(root, {4}, ops::NonDeterministicInts::Dtype(DT_UINT32));
  ClientSession session(root);
  std::vector<Tensor> first, second;
  TW_ASSERT_OK(session.Run({ints, narrow}, &first));
  TW_ASSERT_OK(session.Run({ints}, &second));
  EXPECT_EQ(first[0].dtype(), DT_INT64);
  EXPECT_EQ(first[0].shape(), TensorShape({2, 3}));
  EXPECT_EQ(first[1].dtype(), DT_UINT32);
  EXPECT_EQ(first[1].shape(), TensorShape({4}));
  // Two runs agreeing in all six 64-bit numbers would be a 2^-384 chance.
  EXPECT_NE(Values(first[0]), Values(second[0]));
  // TF has no float kernel either.
  Scope other = Scope::NewRootScope();
  auto floats = ops::NonDeterministicInts(other, {1}, ops::NonDeterministicInts::Dtype(DT_FLOAT));
  ClientSession no_kernel(other);
  EXPECT_THAT(no_kernel.Run({floats}, &first),
              StatusIs(absl::StatusCode::kInvalidArgument, "no supported kernel"));
}

}  // namespace
}  // namespace towerflow
