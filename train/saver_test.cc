// Saver over a session: round trip, restore errors, max_to_keep.
#include "train/saver.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/state_ops.h"
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
  EXPECT_EQ(access((dir + "/model.ckpt-1.index").c_str(), F_OK), -1);
  EXPECT_EQ(access((dir + "/model.ckpt-1.data-00000-of-00001").c_str(), F_OK), -1);
  EXPECT_EQ(access((dir + "/model.ckpt-3.index").c_str(), F_OK), 0);
}

TEST(SaverTest, BuildsTensorFlowsSaverSubgraph) {
  Scope s = Scope::NewRootScope();
  GetVariable(s, "w", TensorShape({1}), DT_FLOAT, initializers::Zeros());
  GetVariable(s, "b", TensorShape({}), DT_INT32, initializers::Zeros());
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Saver> saver, Saver::Create(s));
  const SaverDef& def = saver->saver_def();
  EXPECT_EQ(def.filename_tensor_name(), "save/Const:0");
  EXPECT_EQ(def.save_tensor_name(), "save/control_dependency:0");
  EXPECT_EQ(def.restore_op_name(), "save/restore_all");
  EXPECT_EQ(def.version(), SaverDef::V2);
  EXPECT_EQ(def.max_to_keep(), 5);
  EXPECT_FALSE(def.sharded());
  const Node* save = s.graph()->FindNode("save/SaveV2");
  ASSERT_NE(save, nullptr);
  EXPECT_EQ(save->type_string(), "SaveV2");
  EXPECT_EQ(save->requested_device(), "/device:CPU:0");
  const Node* restore = s.graph()->FindNode("save/RestoreV2");
  ASSERT_NE(restore, nullptr);
  EXPECT_EQ(restore->num_outputs(), 2);
  EXPECT_NE(s.graph()->FindNode("save/AssignVariableOp_1"), nullptr);
}

// TensorFlow's own checkpoint (TF Serving's half_plus_two: a = a2 = 0.5,
// b = 2, c = c2 = 3) restores into Towerflow variables, and saving them again
// writes TF's two files byte for byte: same names, dtypes, shapes, bytes and
// CRCs.
TEST(SaverTest, RestoresTensorFlowsCheckpointAndSavesItBackIdentically) {
  std::string index;
  TW_SKIP_WITHOUT_REFERENCE(index,
                            "tf/saved_models/half_plus_two_cpu/00000123/variables/"
                            "variables.index");
  const std::string prefix = index.substr(0, index.size() - 6);
  Scope s = Scope::NewRootScope();
  std::vector<Variable> vars;
  for (const char* name : {"a", "a2", "b", "c", "c2"}) {
    vars.push_back(GetVariable(s, name, TensorShape({}), DT_FLOAT, initializers::Zeros()));
  }
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Saver> saver, Saver::Create(s));
  ClientSession session(s);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session.Run({}, {}, {GlobalVariablesInitializer(s)}, &out));
  TW_ASSERT_OK(saver->Restore(session, prefix));
  TW_ASSERT_OK(session.Run({vars[0].value(s), vars[2].value(s), vars[4].value(s)}, &out));
  EXPECT_THAT(out[0], TensorIs<float>({}, {0.5f}));
  EXPECT_THAT(out[1], TensorIs<float>({}, {2.0f}));
  EXPECT_THAT(out[2], TensorIs<float>({}, {3.0f}));

  const std::string dir = testing::MakeTempDir("saver_tf");
  TW_ASSERT_OK_AND_ASSIGN(std::string path, saver->Save(session, dir, 1));
  EXPECT_EQ(testing::ReadFileOrDie(path + ".index"), testing::ReadFileOrDie(index));
  EXPECT_EQ(testing::ReadFileOrDie(path + ".data-00000-of-00001"),
            testing::ReadFileOrDie(prefix + ".data-00000-of-00001"));
}

}  // namespace
}  // namespace train
}  // namespace towerflow
