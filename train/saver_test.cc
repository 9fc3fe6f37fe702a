// Saver over a session: round trip, restore errors, max_to_keep.
#include "train/saver.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "ops/ops.h"
#include "tests/test_util.h"
#include "train/optimizer.h"

namespace towerflow {
namespace train {
namespace {

using testing::StatusIs;

TEST(SaverTest, SavesAndRestoresEveryVariable) {
  const std::string dir = testing::MakeTempDir("saver");
  Scope s = Scope::NewRootScope();
  Variable w = GetVariable(s.WithVariableScope("conv1"), "weights", TensorShape({2, 2}), DT_FLOAT,
                           initializers::Constant({{1.f, 2.f}, {3.f, 4.f}}));
  Variable step = GetOrCreateGlobalStep(s);
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Saver> saver, Saver::Create(s));
  EXPECT_EQ(saver->variables().size(), 2u);
  Output assign_w = ops::Placeholder(s, DT_FLOAT);
  Operation set_w = ops::AssignVariableOp(s, w.handle(), assign_w);
  Operation bump = ops::AssignAddVariableOp(s, step.handle(), int64_t{7});
  ClientSession session(s);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(s)}, &out));
  TW_ASSERT_OK(session.Run({}, {}, {bump}, &out));
  TW_ASSERT_OK_AND_ASSIGN(std::string path, saver->Save(session, dir, 7));
  EXPECT_EQ(path, dir + "/model.ckpt-7");

  TW_ASSERT_OK(session.Run({{assign_w, {{0.f, 0.f}, {0.f, 0.f}}}}, {}, {set_w, bump}, &out));
  TW_ASSERT_OK_AND_ASSIGN(std::string latest, LatestCheckpoint(dir));
  TW_ASSERT_OK(saver->Restore(session, latest));
  TW_ASSERT_OK(session.Run({w.value(s), step.value(s)}, &out));
  EXPECT_THAT(out[0], TensorIs<float>({2, 2}, {1, 2, 3, 4}));
  EXPECT_THAT(out[1], TensorIs<int64_t>({}, {7}));
}

TEST(SaverTest, RestoreChecksNamesShapesAndDtypes) {
  const std::string dir = testing::MakeTempDir("saver_mismatch");
  TW_ASSERT_OK(WriteCheckpoint(dir + "/ckpt",
                               {{"w", Literal<float>({3}, {1, 2, 3})}, {"n", Scalar<int32_t>(1)}}));
  auto restore = [&](const std::string& name, const TensorShape& shape, DataType dtype) {
    Scope s = Scope::NewRootScope();
    Variable v = GetVariable(s, name, shape, dtype, initializers::Zeros());
    absl::StatusOr<std::unique_ptr<Saver>> saver = Saver::Create(s);
    EXPECT_TRUE(saver.ok());
    ClientSession session(s);
    std::vector<Tensor> out;
    EXPECT_TRUE(session.Run({}, {}, {GlobalVariablesInitializer(s)}, &out).ok());
    return (*saver)->Restore(session, dir + "/ckpt");
  };
  TW_EXPECT_OK(restore("w", TensorShape({3}), DT_FLOAT));
  EXPECT_THAT(restore("w", TensorShape({2, 2}), DT_FLOAT),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Cannot restore variable w (float [2,2]) from checkpoint " + dir +
                           "/ckpt, which holds float [3]"));
  EXPECT_THAT(restore("n", TensorShape({}), DT_INT64),
              StatusIs(absl::StatusCode::kInvalidArgument, "(int64 []) from checkpoint"));
  EXPECT_THAT(restore("b", TensorShape({3}), DT_FLOAT),
              StatusIs(absl::StatusCode::kNotFound, "Key b not found in checkpoint"));
}

TEST(SaverTest, KeepsTheLastMaxToKeep) {
  const std::string dir = testing::MakeTempDir("saver_keep");
  Scope s = Scope::NewRootScope();
  GetVariable(s, "w", TensorShape({1}), DT_FLOAT, initializers::Zeros());
  SaverOptions options;
  options.max_to_keep = 2;
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Saver> saver, Saver::Create(s, options));
  ClientSession session(s);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(s)}, &out));
  for (int step : {1, 2, 3}) TW_ASSERT_OK(saver->Save(session, dir, step).status());
  TW_ASSERT_OK_AND_ASSIGN(CheckpointState state, ReadCheckpointState(dir));
  EXPECT_THAT(state.all_model_checkpoint_paths(),
              ::testing::ElementsAre("model.ckpt-2", "model.ckpt-3"));
  EXPECT_EQ(state.model_checkpoint_path(), "model.ckpt-3");
  EXPECT_EQ(access((dir + "/model.ckpt-1").c_str(), F_OK), -1);
}

}  // namespace
}  // namespace train
}  // namespace towerflow
