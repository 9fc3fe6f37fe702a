// Replayed steps (runtime/step_replay.h) on the STREAM test device
// (runtime/testing/stream_device.h), which runs its work later on a stream
// and records it as a GPU does: a small network trained with replayed steps
// ends bit for bit where eager steps do, and what cannot be recorded runs
// eagerly with the reason reported.
#include <atomic>
#include <cstring>
#include <thread>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/proto_io.h"
#include "core/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/control_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/nn_ops.h"
#include "ops/gen/random_ops.h"
#include "ops/gen/state_ops.h"
#include "ops/gen/training_ops.h"
#include "runtime/session.h"
#include "runtime/testing/stream_device.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

using ::testing::HasSubstr;
using ::towerflow::testing::StatusIs;
using Mode = StepReplayReport::Mode;

constexpr char kStream[] = "/device:STREAM:0";

// A two-layer network with multiplicative noise and its hand-written
// training step: x_flat [4B] is reshaped to [B, 4] by a host shape,
// h = relu(x W1 + b1) [B, 8], noise ~ U[0, 1) of h's shape (a Shape the
// recording folds), pred = (h * noise) W2 [B, 2], loss = sum((pred - y)^2),
// and plain gradient descent on W1, b1, W2.
struct Model {
  GraphDef graph;
  std::vector<std::string> variables = {"w1", "b1", "w2"};
};

// `int_targets`: y is fed as int32 (host memory, as a GPU's int32 tensors)
// and cast to float on the device. `int64_shape`: x's shape is an int64
// constant, which lives in device memory and is copied to the host for the
// Reshape (a _Send inside the one partition, as on a GPU).
Model BuildModel(bool with_where = false, bool with_check = false, bool int_targets = false,
                 bool int64_shape = false) {
  Scope root = Scope::NewRootScope().WithDevice(kStream);
  auto x_flat = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  Output y = int_targets
                 ? Output(ops::Cast(root, ops::Placeholder(root.WithOpName("y"), DT_INT32), DT_FLOAT))
                 : Output(ops::Placeholder(root.WithOpName("y"), DT_FLOAT));
  auto w1 = ops::VariableV2(root.WithOpName("w1"), {4, 8}, DT_FLOAT);
  auto b1 = ops::VariableV2(root.WithOpName("b1"), {8}, DT_FLOAT);
  auto w2 = ops::VariableV2(root.WithOpName("w2"), {8, 2}, DT_FLOAT);
  std::vector<float> w1_init, w2_init, b1_init;
  for (int i = 0; i < 32; ++i) w1_init.push_back(0.05f * ((i * 7) % 11) - 0.25f);
  for (int i = 0; i < 16; ++i) w2_init.push_back(0.04f * ((i * 5) % 13) - 0.2f);
  for (int i = 0; i < 8; ++i) b1_init.push_back(0.01f * i);
  auto init = ops::NoOp(
      root.WithOpName("init").WithControlDependencies(
          {ops::Assign(root, w1, ops::Const(root, Literal<float>({4, 8}, w1_init).AsProto()))
               .operation,
           ops::Assign(root, b1, ops::Const(root, Literal<float>({8}, b1_init).AsProto()))
               .operation,
           ops::Assign(root, w2, ops::Const(root, Literal<float>({8, 2}, w2_init).AsProto()))
               .operation}));
  (void)init;

  auto x = ops::Reshape(root, x_flat,
                        int64_shape ? ops::Const(root, {int64_t{-1}, int64_t{4}})
                                    : ops::Const(root, {-1, 4}));
  auto z1 = ops::AddV2(root, ops::MatMul(root, x, w1), b1);
  auto h = ops::Relu(root, z1);
  auto noise = ops::RandomUniform(root.WithOpName("noise"), ops::Shape(root, h), DT_FLOAT,
                                  ops::RandomUniform::Seed(7).Seed2(3));
  auto hn = ops::Mul(root, h, noise);
  auto pred = ops::MatMul(root, hn, w2);
  auto diff = ops::Sub(root.WithOpName("diff"), pred, y);
  Output checked = diff;
  if (with_check) checked = ops::CheckNumerics(root.WithOpName("check"), diff, "diff");
  ops::Sum(root.WithOpName("loss"), ops::Square(root, checked), ops::Const(root, {0, 1}));
  if (with_where) ops::Where(root.WithOpName("where"), diff);
  auto dpred = ops::Mul(root, checked, ops::Const(root, 2.0f));
  auto dw2 = ops::MatMul(root, hn, dpred, ops::MatMul::TransposeA(true));
  auto dhn = ops::MatMul(root, dpred, w2, ops::MatMul::TransposeB(true));
  auto dz1 = ops::ReluGrad(root, ops::Mul(root, dhn, noise), z1);
  auto dw1 = ops::MatMul(root, x, dz1, ops::MatMul::TransposeA(true));
  auto db1 = ops::Sum(root, dz1, ops::Const(root, {0}));
  auto lr = ops::Const(root, 0.01f);
  ops::NoOp(root.WithOpName("train").WithControlDependencies(
      {ops::ApplyGradientDescent(root, w1, lr, dw1).operation,
       ops::ApplyGradientDescent(root, b1, lr, db1).operation,
       ops::ApplyGradientDescent(root, w2, lr, dw2).operation}));
  Model model;
  absl::Status s = root.ToGraphDef(&model.graph);
  EXPECT_TRUE(s.ok()) << s;
  return model;
}

// Batch `step` of `batch` examples: x [4 * batch], y [batch, 2] (int32
// with `int_targets`).
std::vector<std::pair<std::string, Tensor>> Batch(int step, int batch, bool int_targets = false) {
  std::vector<float> x, y;
  std::vector<int32_t> y_int;
  for (int i = 0; i < 4 * batch; ++i) x.push_back(0.1f * ((step * 13 + i * 7) % 17) - 0.8f);
  for (int i = 0; i < 2 * batch; ++i) {
    y.push_back(0.05f * ((step * 3 + i * 11) % 19) - 0.4f);
    y_int.push_back((step * 3 + i * 11) % 3 - 1);
  }
  if (int_targets) {
    return {{"x", Literal<float>({4 * batch}, x)}, {"y", Literal<int32_t>({batch, 2}, y_int)}};
  }
  return {{"x", Literal<float>({4 * batch}, x)}, {"y", Literal<float>({batch, 2}, y)}};
}

// A session on the stream device with `graph` and its "init" run.
absl::StatusOr<std::unique_ptr<Session>> MakeSession(const GraphDef& graph, bool replay) {
  SessionOptions options;
  options.device_count[testing::kStreamDevice] = 1;
  options.replay.enabled = replay;
  options.replay.log = false;
  TW_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(options));
  TW_RETURN_IF_ERROR(session->Create(graph));
  TW_RETURN_IF_ERROR(session->Run({}, {}, {"init"}, nullptr));
  return session;
}

absl::StatusOr<std::unique_ptr<Session>> MakeSession(const Model& model, bool replay) {
  return MakeSession(model.graph, replay);
}

// Runs one training step; its loss, and how it ran.
absl::StatusOr<std::pair<Tensor, StepReplayReport>> TrainStep(
    Session* session, const std::vector<std::pair<std::string, Tensor>>& feeds) {
  std::vector<Tensor> out;
  RunMetadata metadata;
  TW_RETURN_IF_ERROR(session->Run(RunOptions(), feeds, {"loss"}, {"train"}, &out, &metadata));
  return std::make_pair(out[0], metadata.replay);
}

std::vector<Tensor> Variables(Session* session, const Model& model) {
  std::vector<Tensor> out;
  absl::Status s = session->Run({}, model.variables, {}, &out);
  EXPECT_TRUE(s.ok()) << s;
  return out;
}

bool SameBits(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.TotalBytes()) == 0;
}

TEST(StepReplayTest, ReplayedTrainingEndsBitForBitWhereEagerTrainingDoes) {
  const Model model = BuildModel();
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> eager, MakeSession(model, false));
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> replayed, MakeSession(model, true));
  std::vector<Mode> modes;
  testing::TakeStreamDeviceCounts();
  for (int step = 0; step < 20; ++step) {
    TW_ASSERT_OK_AND_ASSIGN(auto expected, TrainStep(eager.get(), Batch(step, 4)));
    TW_ASSERT_OK_AND_ASSIGN(auto got, TrainStep(replayed.get(), Batch(step, 4)));
    EXPECT_EQ(expected.second.mode, Mode::kEager);
    EXPECT_TRUE(SameBits(got.first, expected.first)) << "loss of step " << step;
    modes.push_back(got.second.mode);
  }
  const std::vector<Tensor> want = Variables(eager.get(), model);
  const std::vector<Tensor> got = Variables(replayed.get(), model);
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_TRUE(SameBits(got[i], want[i])) << model.variables[i];
  }
  // The first step gives the variables buffers of their own (they shared
  // the initializers' constants); two steady steps; a recording; replays.
  EXPECT_EQ(modes[0], Mode::kEager);
  EXPECT_EQ(modes[2], Mode::kEager);
  EXPECT_EQ(modes[3], Mode::kRecorded);
  for (int step = 4; step < 20; ++step) EXPECT_EQ(modes[step], Mode::kReplayed) << step;
  EXPECT_EQ(testing::TakeStreamDeviceCounts().launches, 17);
}

TEST(StepReplayTest, AnInt32FeedThatIsOnlyCopiedToTheDeviceIsReplayed) {
  // y is fed as int32, which stays in host memory; the Cast copies it to
  // the device, from the recording's host slot on every replay.
  const Model model = BuildModel(false, false, /*int_targets=*/true);
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> eager, MakeSession(model, false));
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> replayed, MakeSession(model, true));
  for (int step = 0; step < 10; ++step) {
    TW_ASSERT_OK_AND_ASSIGN(auto expected, TrainStep(eager.get(), Batch(step, 4, true)));
    TW_ASSERT_OK_AND_ASSIGN(auto got, TrainStep(replayed.get(), Batch(step, 4, true)));
    EXPECT_TRUE(SameBits(got.first, expected.first)) << "loss of step " << step;
    if (step >= 4) {
      EXPECT_EQ(got.second.mode, Mode::kReplayed) << step;
    }
  }
  const std::vector<Tensor> a = Variables(eager.get(), model);
  const std::vector<Tensor> b = Variables(replayed.get(), model);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(SameBits(b[i], a[i])) << model.variables[i];
}

TEST(StepReplayTest, AConstantCopiedToTheHostWithinTheStepIsReplayed) {
  // The int64 shape constant is in device memory and the Reshape reads it on
  // the host: the step's one partition copies it (_Send, _HostRecv), which
  // the recording folds into a host constant.
  const Model model = BuildModel(false, false, false, /*int64_shape=*/true);
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> eager, MakeSession(model, false));
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> replayed, MakeSession(model, true));
  for (int step = 0; step < 8; ++step) {
    TW_ASSERT_OK_AND_ASSIGN(auto expected, TrainStep(eager.get(), Batch(step, 4)));
    TW_ASSERT_OK_AND_ASSIGN(auto got, TrainStep(replayed.get(), Batch(step, 4)));
    EXPECT_TRUE(SameBits(got.first, expected.first)) << "loss of step " << step;
    if (step >= 4) {
      EXPECT_EQ(got.second.mode, Mode::kReplayed) << step << ": " << got.second.why_eager;
    }
  }
  const std::vector<Tensor> a = Variables(eager.get(), model);
  const std::vector<Tensor> b = Variables(replayed.get(), model);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(SameBits(b[i], a[i])) << model.variables[i];
}

TEST(StepReplayTest, AVariableAssignedEveryStepKeepsItsBufferAndIsReplayed) {
  // A counter assigned a new value every step, as a global step or a loss
  // scale's count of good steps is: the value is copied into the variable's
  // own buffer, so the variable never moves and the step records.
  Scope root = Scope::NewRootScope().WithDevice(kStream);
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  auto steps = ops::VariableV2(root.WithOpName("steps"), {}, DT_FLOAT);
  ops::Assign(root.WithOpName("init"), steps, ops::Const(root, 0.0f));
  ops::Assign(root.WithOpName("count"), steps, ops::AddV2(root, steps, ops::Const(root, 1.0f)));
  ops::Square(root.WithOpName("y"), x);
  GraphDef graph;
  TW_ASSERT_OK(root.ToGraphDef(&graph));
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, MakeSession(graph, true));
  for (int step = 0; step < 8; ++step) {
    std::vector<Tensor> out;
    RunMetadata metadata;
    TW_ASSERT_OK(session->Run(RunOptions(), {{"x", Literal<float>({2}, {float(step), -3})}},
                              {"y"}, {"count"}, &out, &metadata));
    EXPECT_THAT(out[0], TensorIs<float>({2}, {float(step * step), 9}));
    if (step >= 4) {
      EXPECT_EQ(metadata.replay.mode, Mode::kReplayed) << step << ": " << metadata.replay.why_eager;
    }
  }
  std::vector<Tensor> out;
  TW_ASSERT_OK(session->Run({}, {"steps"}, {}, &out));
  EXPECT_THAT(out[0], TensorIs<float>({}, {8}));
}

TEST(StepReplayTest, ABadValueWhileRecordingFailsThatStepAloneAndALaterOneRecords) {
  // The Cast checks its host input when the step is recorded; a bad value
  // then is this step's error, as eagerly, and the next steps record.
  const Model model = BuildModel(false, false, /*int_targets=*/true);
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, MakeSession(model, true));
  for (int step = 0; step < 3; ++step) {
    TW_ASSERT_OK(TrainStep(session.get(), Batch(step, 4, true)).status());
  }
  auto bad = Batch(3, 4, true);
  bad[1].second.data<int32_t>()[5] = 1 << 25;
  EXPECT_THAT(TrainStep(session.get(), bad).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "x[5] = 33554432 is not exact"));
  std::vector<Mode> modes;
  for (int step = 4; step < 9; ++step) {
    TW_ASSERT_OK_AND_ASSIGN(auto got, TrainStep(session.get(), Batch(step, 4, true)));
    modes.push_back(got.second.mode);
  }
  EXPECT_EQ(modes, (std::vector<Mode>{Mode::kEager, Mode::kEager, Mode::kRecorded,
                                      Mode::kReplayed, Mode::kReplayed}));
}

TEST(StepReplayTest, ReplaysDrawNewRandomNumbersEachStepAsEagerStepsDo) {
  // A recording that baked its random counter would draw the same noise on
  // every replay.
  const Model model = BuildModel();
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> eager, MakeSession(model, false));
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> replayed, MakeSession(model, true));
  std::vector<Tensor> noise;
  for (int step = 0; step < 7; ++step) {
    std::vector<Tensor> want, got;
    RunMetadata metadata;
    TW_ASSERT_OK(eager->Run(Batch(0, 4), {"noise"}, {"train"}, &want));
    TW_ASSERT_OK(
        replayed->Run(RunOptions(), Batch(0, 4), {"noise"}, {"train"}, &got, &metadata));
    EXPECT_TRUE(SameBits(got[0], want[0])) << "step " << step;
    if (step >= 5) {
      EXPECT_EQ(metadata.replay.mode, Mode::kReplayed);
      noise.push_back(got[0]);
    }
  }
  EXPECT_FALSE(SameBits(noise[0], noise[1]));
}

TEST(StepReplayTest, ANewBatchSizeIsRecordedOnItsOwnAndTheOldOneKept) {
  const Model model = BuildModel();
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> eager, MakeSession(model, false));
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> replayed, MakeSession(model, true));
  std::vector<std::pair<int, Mode>> want = {
      {4, Mode::kEager},    {4, Mode::kEager},    {4, Mode::kEager}, {4, Mode::kRecorded},
      {4, Mode::kReplayed}, {3, Mode::kEager},    {3, Mode::kEager}, {3, Mode::kRecorded},
      {3, Mode::kReplayed}, {4, Mode::kReplayed}, {3, Mode::kReplayed}};
  for (size_t step = 0; step < want.size(); ++step) {
    const int batch = want[step].first;
    TW_ASSERT_OK_AND_ASSIGN(auto expected, TrainStep(eager.get(), Batch(step, batch)));
    TW_ASSERT_OK_AND_ASSIGN(auto got, TrainStep(replayed.get(), Batch(step, batch)));
    EXPECT_TRUE(SameBits(got.first, expected.first)) << "step " << step;
    EXPECT_EQ(got.second.mode, want[step].second) << "step " << step;
  }
  const std::vector<Tensor> a = Variables(eager.get(), model);
  const std::vector<Tensor> b = Variables(replayed.get(), model);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(SameBits(b[i], a[i])) << model.variables[i];
}

TEST(StepReplayTest, AFifthBatchSizeDropsTheRecordingReplayedLeastRecently) {
  const Model model = BuildModel();
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, MakeSession(model, true));
  // Batches of 1..5, each warmed up and recorded (the first step also gives
  // the variables buffers of their own, so batch 1 warms up once more).
  for (int batch = 1; batch <= 5; ++batch) {
    const int warmup = batch == 1 ? 3 : 2;
    for (int step = 0; step <= warmup; ++step) {
      TW_ASSERT_OK_AND_ASSIGN(auto got, TrainStep(session.get(), Batch(step, batch)));
      EXPECT_EQ(got.second.mode, step < warmup ? Mode::kEager : Mode::kRecorded) << batch;
    }
  }
  // Four recordings are kept: batch 1's went, batch 2's stays.
  TW_ASSERT_OK_AND_ASSIGN(auto two, TrainStep(session.get(), Batch(9, 2)));
  EXPECT_EQ(two.second.mode, Mode::kReplayed);
  TW_ASSERT_OK_AND_ASSIGN(auto one, TrainStep(session.get(), Batch(9, 1)));
  EXPECT_EQ(one.second.mode, Mode::kEager);
  EXPECT_EQ(one.second.why_eager, "warming up");
}

TEST(StepReplayTest, ReinitializingTheVariablesWritesIntoTheRecordedBuffers) {
  const Model model = BuildModel();
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> eager, MakeSession(model, false));
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> replayed, MakeSession(model, true));
  std::vector<Mode> modes;
  for (int step = 0; step < 10; ++step) {
    if (step == 5) {
      // As a restore does: each Assign writes the initial value into the
      // variable's own buffer (same shape, nothing else holds it), so the
      // recording stays valid and replays from the new values.
      TW_ASSERT_OK(eager->Run({}, {}, {"init"}, nullptr));
      TW_ASSERT_OK(replayed->Run({}, {}, {"init"}, nullptr));
    }
    TW_ASSERT_OK_AND_ASSIGN(auto expected, TrainStep(eager.get(), Batch(step, 4)));
    TW_ASSERT_OK_AND_ASSIGN(auto got, TrainStep(replayed.get(), Batch(step, 4)));
    EXPECT_TRUE(SameBits(got.first, expected.first)) << "step " << step;
    modes.push_back(got.second.mode);
  }
  EXPECT_EQ(modes[4], Mode::kReplayed);
  EXPECT_EQ(modes[5], Mode::kReplayed);
  EXPECT_EQ(modes[9], Mode::kReplayed);
  const std::vector<Tensor> a = Variables(eager.get(), model);
  const std::vector<Tensor> b = Variables(replayed.get(), model);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(SameBits(b[i], a[i])) << model.variables[i];
}

TEST(StepReplayTest, AssigningAVariableANewShapeDropsTheRecording) {
  // y = x + v: v starts as a row [2] (broadcast over x [1, 2]), then is
  // assigned a [1, 2] value, which takes a new buffer: the recording, which
  // names the old one, is dropped and the step warms up and records again.
  Scope root = Scope::NewRootScope().WithDevice(kStream);
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  auto v = ops::VariableV2(root.WithOpName("v"), PartialTensorShape(), DT_FLOAT);
  ops::Assign(root.WithOpName("init"), v, ops::Const(root, {1.0f, 2.0f}),
              ops::Assign::ValidateShape(false));
  ops::Assign(root.WithOpName("reshape"), v, ops::Const(root, {{10.0f, 20.0f}}),
              ops::Assign::ValidateShape(false));
  ops::AddV2(root.WithOpName("y"), x, v);
  GraphDef graph;
  TW_ASSERT_OK(root.ToGraphDef(&graph));
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, MakeSession(graph, true));
  std::vector<Mode> modes;
  for (int step = 0; step < 10; ++step) {
    if (step == 5) {
      TW_ASSERT_OK(session->Run({}, {}, {"reshape"}, nullptr));
    }
    std::vector<Tensor> out;
    RunMetadata metadata;
    TW_ASSERT_OK(session->Run(RunOptions(), {{"x", Literal<float>({1, 2}, {float(step), 1})}},
                              {"y"}, {}, &out, &metadata));
    const float v0 = step < 5 ? 1 : 10, v1 = step < 5 ? 2 : 20;
    EXPECT_THAT(out[0], TensorIs<float>({1, 2}, {step + v0, 1 + v1})) << step;
    modes.push_back(metadata.replay.mode);
  }
  EXPECT_EQ(modes[4], Mode::kReplayed);
  EXPECT_EQ(modes[5], Mode::kEager);  // warming up again
  EXPECT_EQ(modes[9], Mode::kReplayed);
}

TEST(StepReplayTest, AVariableReadHeldAcrossItsUpdateIsNeverRecorded) {
  // w1's read is taken early and used after the update (a control edge), so
  // every update copies w1 to a new buffer (Note [Variable copy-on-write]);
  // a recording would read the buffer of the step it was made in.
  Model model = BuildModel();
  GraphDef extra;
  TW_ASSERT_OK(ParseTextProto(absl::StrCat(
      "node { name: 'w1_read' op: 'Identity' input: 'w1' device: '", kStream,
      "' attr { key: 'T' value { type: DT_FLOAT } } }"
      "node { name: 'one' op: 'Const' device: '", kStream,
      "' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { tensor { "
      "dtype: DT_FLOAT tensor_shape {} float_val: 1 } } } }"
      "node { name: 'late' op: 'Mul' input: 'w1_read' input: 'one' input: '^train' device: '",
      kStream, "' attr { key: 'T' value { type: DT_FLOAT } } }"),
                              &extra));
  for (const NodeDef& n : extra.node()) *model.graph.add_node() = n;
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> eager, MakeSession(model, false));
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> replayed, MakeSession(model, true));
  for (int step = 0; step < 18; ++step) {
    std::vector<Tensor> want, got;
    RunMetadata metadata;
    TW_ASSERT_OK(eager->Run(Batch(step, 4), {"loss", "late"}, {}, &want));
    TW_ASSERT_OK(
        replayed->Run(RunOptions(), Batch(step, 4), {"loss", "late"}, {}, &got, &metadata));
    EXPECT_TRUE(SameBits(got[0], want[0])) << "step " << step;
    EXPECT_TRUE(SameBits(got[1], want[1])) << "step " << step;
    EXPECT_EQ(metadata.replay.mode, Mode::kEager) << "step " << step;
    if (step == 17) {
      EXPECT_THAT(metadata.replay.why_eager, HasSubstr("variable w1 got a new buffer in 16 steps"));
    }
  }
}

TEST(StepReplayTest, AStepThatReadsADeviceValueOnTheHostRunsEagerly) {
  const Model model = BuildModel(/*with_where=*/true);
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, MakeSession(model, true));
  for (int step = 0; step < 6; ++step) {
    std::vector<Tensor> out;
    RunMetadata metadata;
    TW_ASSERT_OK(session->Run(RunOptions(), Batch(step, 4), {"loss", "where"}, {"train"}, &out,
                              &metadata));
    EXPECT_EQ(metadata.replay.mode, Mode::kEager);
    EXPECT_EQ(out[1].dim_size(1), 1);
    if (step >= 3) {
      EXPECT_THAT(metadata.replay.why_eager,
                  HasSubstr("node 'where' (Where) has no kernel on STREAM declared capturable"));
    }
  }
}

TEST(StepReplayTest, AKernelThatWaitsWhileRecordedRunsTheStepEagerly) {
  // CheckNumerics on STREAM is declared capturable but reads its input back:
  // the recording fails, the step runs eagerly all the same, and so do the
  // steps after it.
  const Model model = BuildModel(false, /*with_check=*/true);
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> eager, MakeSession(model, false));
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> replayed, MakeSession(model, true));
  for (int step = 0; step < 6; ++step) {
    TW_ASSERT_OK_AND_ASSIGN(auto expected, TrainStep(eager.get(), Batch(step, 4)));
    TW_ASSERT_OK_AND_ASSIGN(auto got, TrainStep(replayed.get(), Batch(step, 4)));
    EXPECT_TRUE(SameBits(got.first, expected.first)) << "step " << step;
    EXPECT_EQ(got.second.mode, Mode::kEager);
    if (step >= 3) {
      EXPECT_THAT(got.second.why_eager,
                  HasSubstr("recording the step failed: a copy to the host waits for the device "
                            "while its work is being recorded"));
      EXPECT_THAT(got.second.why_eager, HasSubstr("node check (CheckNumerics)"));
    }
  }
}

TEST(StepReplayTest, AnInt32FeedInHostMemoryIsRefused) {
  Scope root = Scope::NewRootScope().WithDevice(kStream);
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  auto dims = ops::Placeholder(root.WithOpName("dims"), DT_INT32);
  ops::Reshape(root.WithOpName("r"), x, dims);
  GraphDef graph;
  TW_ASSERT_OK(root.ToGraphDef(&graph));
  SessionOptions options;
  options.device_count[testing::kStreamDevice] = 1;
  options.replay.enabled = true;
  options.replay.log = false;
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, NewSession(options));
  TW_ASSERT_OK(session->Create(graph));
  for (int step = 0; step < 4; ++step) {
    std::vector<Tensor> out;
    RunMetadata metadata;
    TW_ASSERT_OK(session->Run(RunOptions(),
                              {{"dims", Literal<int32_t>({2}, {2, 1})},
                               {"x", Literal<float>({2}, {1, 2})}},
                              {"r"}, {}, &out, &metadata));
    EXPECT_THAT(out[0], TensorIs<float>({2, 1}, {1, 2}));
    EXPECT_EQ(metadata.replay.mode, Mode::kEager);
    if (step == 3) {
      EXPECT_THAT(metadata.replay.why_eager,
                  HasSubstr("node 'r' (Reshape) reads the host-memory feed 'dims' (input 1)"));
    }
  }
}

TEST(StepReplayTest, AStepOnTwoDevicesRunsEagerlyAndSaysWhy) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x").WithDevice(kStream), DT_FLOAT);
  auto y = ops::Relu(root.WithOpName("y").WithDevice(kStream), x);
  ops::Square(root.WithOpName("z").WithDevice("/device:CPU:0"), y);
  GraphDef graph;
  TW_ASSERT_OK(root.ToGraphDef(&graph));
  SessionOptions options;
  options.device_count[testing::kStreamDevice] = 1;
  options.replay.enabled = true;
  options.replay.log = false;
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, NewSession(options));
  TW_ASSERT_OK(session->Create(graph));
  std::vector<Tensor> out;
  RunMetadata metadata;
  TW_ASSERT_OK(session->Run(RunOptions(), {{"x", Literal<float>({2}, {-1, 3})}}, {"z"}, {}, &out,
                            &metadata));
  EXPECT_THAT(out[0], TensorIs<float>({2}, {0, 9}));
  EXPECT_EQ(metadata.replay.mode, Mode::kEager);
  EXPECT_THAT(metadata.replay.why_eager, HasSubstr("the step runs on 2 devices"));
}

// Steps from several threads at once, some recording, some replayed, some
// eager: every update lands once (each is var -= 0.5, in any order).
TEST(StepReplayTest, StepsFromManyThreadsEachUpdateOnce) {
  Scope root = Scope::NewRootScope().WithDevice(kStream);
  auto v = ops::VariableV2(root.WithOpName("v"), {3}, DT_FLOAT);
  ops::Assign(root.WithOpName("init"), v, ops::Const(root, {100.0f, 200.0f, 300.0f}));
  ops::ApplyGradientDescent(root.WithOpName("step_one"), v, ops::Const(root, 0.5f),
                            ops::Const(root, {1.0f, 1.0f, 1.0f}));
  Model model;
  TW_ASSERT_OK(root.ToGraphDef(&model.graph));
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, MakeSession(model, true));
  constexpr int kThreads = 4, kSteps = 25;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kSteps; ++i) {
        if (!session->Run({}, {}, {"step_one"}, nullptr).ok()) ++failures;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  std::vector<Tensor> out;
  TW_ASSERT_OK(session->Run({}, {"v"}, {}, &out));
  const float done = 0.5f * kThreads * kSteps;
  EXPECT_THAT(out[0], TensorIs<float>({3}, {100 - done, 200 - done, 300 - done}));
}

TEST(StepReplayTest, TracedStepsRunEagerly) {
  const Model model = BuildModel();
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, MakeSession(model, true));
  for (int step = 0; step < 5; ++step) TW_ASSERT_OK(TrainStep(session.get(), Batch(step, 4)).status());
  RunOptions traced;
  traced.trace_level = RunOptions::TraceLevel::kFullTrace;
  std::vector<Tensor> out;
  RunMetadata metadata;
  TW_ASSERT_OK(session->Run(traced, Batch(5, 4), {"loss"}, {"train"}, &out, &metadata));
  EXPECT_EQ(metadata.replay.mode, Mode::kEager);
  EXPECT_FALSE(metadata.step_stats.dev_stats.empty());
  TW_ASSERT_OK_AND_ASSIGN(auto next, TrainStep(session.get(), Batch(6, 4)));
  EXPECT_EQ(next.second.mode, Mode::kReplayed);
}

}  // namespace
}  // namespace towerflow
