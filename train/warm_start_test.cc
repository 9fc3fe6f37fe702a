// InitFromCheckpoint: scope and single-name maps, the root map, TF's own
// checkpoint, and the errors TF gives.
#include "train/warm_start.h"

#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "ops/variables.h"
#include "runtime/client_session.h"
#include "tests/test_util.h"
#include "train/checkpoint.h"

namespace towerflow {
namespace train {
namespace {

using testing::StatusIs;

std::string WriteSample() {
  const std::string prefix = testing::MakeTempDir("warm_start") + "/model.ckpt-100";
  absl::Status s = WriteCheckpoint(prefix, {{"tf/dense/kernel", Literal<float>({2}, {1, 2})},
                                            {"tf/dense/bias", Scalar<float>(3)},
                                            {"global_step", Scalar<int64_t>(100)}});
  EXPECT_TRUE(s.ok()) << s;
  return prefix;
}

// The values of `vars` after running the global initializer.
std::vector<Tensor> Initialized(const Scope& s, const std::vector<Variable>& vars) {
  ClientSession session(s);
  std::vector<Tensor> out;
  absl::Status st = session.Run({}, {}, {GlobalVariablesInitializer(s)}, &out);
  EXPECT_TRUE(st.ok()) << st;
  std::vector<Output> reads;
  for (const Variable& v : vars) reads.push_back(v.value(s));
  st = session.Run(reads, &out);
  EXPECT_TRUE(st.ok()) << st;
  return out;
}

TEST(InitFromCheckpointTest, ScopeMapLoadsEveryVariableUnderIt) {
  const std::string prefix = WriteSample();
  Scope s = Scope::NewRootScope();
  Scope my = s.WithVariableScope("my").WithVariableScope("dense");
  Variable kernel = GetVariable(my, "kernel", TensorShape({2}), DT_FLOAT, initializers::Zeros());
  Variable bias = GetVariable(my, "bias", TensorShape({}), DT_FLOAT, initializers::Zeros());
  Variable other = GetVariable(s, "other", TensorShape({}), DT_FLOAT, initializers::Constant(7.f));
  TW_ASSERT_OK(InitFromCheckpoint(s, prefix, {{"tf/dense/", "my/dense/"}}));
  std::vector<Tensor> out = Initialized(s, {kernel, bias, other});
  EXPECT_THAT(out[0], TensorIs<float>({2}, {1, 2}));
  EXPECT_THAT(out[1], TensorIs<float>({}, {3}));
  EXPECT_THAT(out[2], TensorIs<float>({}, {7}))
      << "a variable outside the map keeps its initializer";
}

TEST(InitFromCheckpointTest, SingleNamesTheRootMapAndDirectories) {
  const std::string prefix = WriteSample();
  {
    Scope s = Scope::NewRootScope();
    Variable b = GetVariable(s, "b", TensorShape({}), DT_FLOAT, initializers::Zeros());
    TW_ASSERT_OK(InitFromCheckpoint(s, prefix, {{"tf/dense/bias", "b"}}));
    EXPECT_THAT(Initialized(s, {b})[0], TensorIs<float>({}, {3}));
  }
  {
    Scope s = Scope::NewRootScope();
    Variable step = GetVariable(s, "global_step", TensorShape({}), DT_INT64, initializers::Zeros());
    // A model directory stands for its latest checkpoint.
    const std::string dir = prefix.substr(0, prefix.rfind('/'));
    TW_ASSERT_OK(RecordCheckpoint(dir, "model.ckpt-100", 5));
    TW_ASSERT_OK(InitFromCheckpoint(s, dir, {{"/", "/"}}));
    EXPECT_THAT(Initialized(s, {step})[0], TensorIs<int64_t>({}, {100}));
  }
}

TEST(InitFromCheckpointTest, StartsFromTensorFlowsOwnCheckpoint) {
  std::string index;
  TW_SKIP_WITHOUT_REFERENCE(index,
                            "tf/saved_models/half_plus_two_cpu/00000123/variables/variables.index");
  Scope s = Scope::NewRootScope();
  Scope head = s.WithVariableScope("head");
  Variable a = GetVariable(head, "a", TensorShape({}), DT_FLOAT, initializers::Zeros());
  Variable c = GetVariable(head, "c", TensorShape({}), DT_FLOAT, initializers::Zeros());
  TW_ASSERT_OK(InitFromCheckpoint(s, index.substr(0, index.size() - 6), {{"/", "head/"}}));
  std::vector<Tensor> out = Initialized(s, {a, c});
  EXPECT_THAT(out[0], TensorIs<float>({}, {0.5f}));
  EXPECT_THAT(out[1], TensorIs<float>({}, {3.0f}));
}

TEST(InitFromCheckpointTest, ErrorsNameTheVariableAndTheTensor) {
  const std::string prefix = WriteSample();
  Scope s = Scope::NewRootScope();
  GetVariable(s.WithVariableScope("my"), "kernel", TensorShape({3}), DT_FLOAT,
              initializers::Zeros());
  GetVariable(s, "n", TensorShape({}), DT_FLOAT, initializers::Zeros());
  EXPECT_THAT(InitFromCheckpoint(s, prefix, {{"tf/dense/kernel", "my/kernel"}}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "variable my/kernel (float [3]) cannot start from tensor tf/dense/kernel"));
  EXPECT_THAT(InitFromCheckpoint(s, prefix, {{"global_step", "n"}}),
              StatusIs(absl::StatusCode::kInvalidArgument, "(int64 [])"));
  EXPECT_THAT(InitFromCheckpoint(s, prefix, {{"nope", "n"}}),
              StatusIs(absl::StatusCode::kNotFound, "Key nope not found in checkpoint"));
  EXPECT_THAT(InitFromCheckpoint(s, prefix, {{"tf/", "absent/"}}),
              StatusIs(absl::StatusCode::kInvalidArgument, "'absent/' names no variable"));
  EXPECT_THAT(InitFromCheckpoint(s, prefix, {{"tf/", "n"}}),
              StatusIs(absl::StatusCode::kInvalidArgument, "maps a scope to a single name"));
  EXPECT_THAT(InitFromCheckpoint(s, prefix + "-missing", {{"/", "/"}}),
              StatusIs(absl::StatusCode::kNotFound, "does not exist"));
}

}  // namespace
}  // namespace train
}  // namespace towerflow
