// Estimator: train / resume / evaluate / predict / export, hooks and the NaN
// guard, on TF's replicate_model_fn_test model: c = 10, features [[1], [2]],
// labels [[1], [2]], loss = sum |features c - labels|, GradientDescent(1.0).
// Steps then go 27 (c = 7), 18 (c = 4), 9 (c = 1), 0.
#include "estimator/estimator.h"

#include <filesystem>
#include <regex>
#include <sstream>

#include "absl/strings/match.h"
#include "core/file_io.h"
#include "core/proto_io.h"
#include "core/record_io.h"
#include "core/status_macros.h"
#include "estimator/replicate_model_fn.h"
#include "estimator/tower_optimizer.h"
#include "gmock/gmock.h"
#include "graph/graph_io.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_matchers.h"
#include "ops/const_op.h"
#include "ops/gen/logging_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/state_ops.h"
#include "ops/initializers.h"
#include "proto/event.pb.h"
#include "proto/variable.pb.h"
#include "saved_model/loader.h"
#include "tests/test_util.h"
#include "train/checkpoint.h"
#include "train/moving_averages.h"
#include "train/optimizer.h"
#include "train/optimizers.h"

namespace towerflow {
namespace {

using ::testing::HasSubstr;
using testing::StatusIs;

// train_op = opt.Minimize(loss), counting the global step; errors go to `s`.
void SetTrainOp(const Scope& s, train::Optimizer& opt, EstimatorSpec* spec) {
  spec->train_op = opt.Minimize(s, spec->loss, train::GetOrCreateGlobalStep(s));
}

EstimatorSpec LinearModel(const Scope& s, const FeatureMap& features, const FeatureMap& labels,
                          ModeKeys mode, const Params& params) {
  Variable c = GetVariable(s, "c", TensorShape({}), DT_DOUBLE, initializers::Constant(10.0));
  Output predictions = ops::Mul(s, features.at("x"), c.value());
  EstimatorSpec spec(mode);
  spec.predictions["y"] = predictions;
  // With "ema": a moving average of c (decay 0.5) updated after each step,
  // which evaluation and export use.
  train::ExponentialMovingAverage ema(0.5);
  const bool averaged = params.Get("ema") != 0;
  if (averaged && mode != ModeKeys::kTrain) spec.restore_var_names = ema.VariablesToRestore({c});
  if (mode == ModeKeys::kPredict) return spec;
  spec.loss = ops::Sum(s, ops::Abs(s, ops::Sub(s, predictions, labels.at("y"))), {0, 1});
  spec.eval_metric_ops["mean_prediction"] = train::Mean(s, predictions);
  if (params.Get("summary") != 0) {
    AddToCollection(s.graph(), GraphKeys::kSummaries,
                    ops::ScalarSummary(s, std::string("error"), spec.loss));
  }
  if (mode != ModeKeys::kTrain || params.Get("no_train_op") != 0) return spec;
  TowerOptimizer opt(std::make_shared<train::GradientDescentOptimizer>(1.0));
  spec.train_op = opt.Minimize(s, spec.loss, train::GetOrCreateGlobalStep(s));
  if (averaged && s.ok())
    spec.train_op = ema.Apply(s.WithControlDependencies({spec.train_op}), {c});
  return spec;
}

// The batch {x: [[1], [2]], y: [[1], [2]]}, `times` times.
InputFn LinearInput(int64_t times = -1) {
  return [times]() -> absl::StatusOr<InputSpec> {
    const Tensor column = Literal<double>({2, 1}, {1, 2});
    TW_ASSIGN_OR_RETURN(data::Dataset d, data::Dataset::FromTensorSlices({column, column}));
    return InputSpec{d.Batch(2).Repeat(times), {"x"}, {"y"}};
  };
}

struct Fixture {
  explicit Fixture(const std::string& name, Params params = {}) {
    config = RunConfig().set_model_dir(testing::MakeTempDir(name)).set_log_step_count_steps(1);
    config.log = &log;
    config.progress_bar = RunConfig::ProgressBar::kOff;
    estimator = std::make_unique<Estimator>(LinearModel, config, params);
  }
  std::ostringstream log;
  RunConfig config;
  std::unique_ptr<Estimator> estimator;
};

double CheckpointValue(const std::string& path, const std::string& name) {
  absl::StatusOr<std::vector<NamedTensor>> tensors = ReadCheckpoint(path);
  EXPECT_TRUE(tensors.ok()) << tensors.status();
  for (const NamedTensor& nt : *tensors) {
    if (nt.name == name) {
      return nt.tensor.dtype() == DT_INT64 ? nt.tensor.data<int64_t>()[0]
                                           : nt.tensor.data<double>()[0];
    }
  }
  ADD_FAILURE() << name << " not in " << path;
  return 0;
}

TEST(EstimatorTest, TrainsLogsAndResumesFromTheLatestCheckpoint) {
  Fixture f("train");
  auto history = std::make_shared<StepHistoryHook>();
  TW_ASSERT_OK_AND_ASSIGN(TrainResult r,
                          f.estimator->Train(LinearInput(), {.steps = 2, .hooks = {history}}));
  EXPECT_EQ(history->losses(), (std::vector<double>{27, 18}));
  EXPECT_EQ(history->steps()[1].global_step, 2);
  EXPECT_EQ(history->steps()[1].batch_size, 2);
  EXPECT_EQ(r.global_step, 2);
  EXPECT_EQ(r.steps_run, 2);
  EXPECT_EQ(r.loss, 18);  // the second step's loss, after c = 7
  TW_ASSERT_OK_AND_ASSIGN(std::string latest, LatestCheckpoint(f.config.model_dir));
  EXPECT_THAT(latest, HasSubstr("model.ckpt-2"));
  EXPECT_EQ(CheckpointValue(latest, "c"), 4);
  EXPECT_EQ(CheckpointValue(latest, "global_step"), 2);
  // The tutorial's line, every step here.
  const std::regex line(
      R"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}: step 2, loss = 18\.00 \(\d+\.\d examples/sec; )"
      R"(\d+\.\d{3} sec/batch\))");
  EXPECT_TRUE(std::regex_search(f.log.str(), line)) << f.log.str();
  EXPECT_THAT(f.log.str(), HasSubstr("step 1, loss = 27.00"));
  EXPECT_THAT(f.log.str(), HasSubstr("global_step/sec: "));
  EXPECT_THAT(f.log.str(), HasSubstr("Saving checkpoints for 0 into "));
  EXPECT_THAT(f.log.str(), HasSubstr("Loss for final step: 18."));

  // A new Estimator on the same model_dir goes on from c = 4.
  Fixture again("unused");
  Estimator resumed(LinearModel, f.config);
  TW_ASSERT_OK_AND_ASSIGN(r, resumed.Train(LinearInput(), {.steps = 1}));
  EXPECT_EQ(r.global_step, 3);
  EXPECT_EQ(r.loss, 9);
  EXPECT_THAT(f.log.str(), HasSubstr("Restoring parameters from "));
  // max_steps counts from step 0: already there, nothing runs.
  TW_ASSERT_OK_AND_ASSIGN(r, resumed.Train(LinearInput(), {.max_steps = 3}));
  EXPECT_EQ(r.steps_run, 0);
  EXPECT_EQ(r.global_step, 3);
  EXPECT_THAT(f.log.str(), HasSubstr("Skipping training since max_steps has already saved."));
  TW_ASSERT_OK_AND_ASSIGN(r, resumed.Train(LinearInput(), {.max_steps = 4}));
  EXPECT_EQ(r.global_step, 4);
  EXPECT_EQ(r.loss, 0);
}

// RunConfig::warm_start_from: a new model starts from another one's trained
// c (4 after two steps: loss 9, not 27) but its own global step (not
// trainable) from 0; once it has checkpoints of its own they win.
TEST(EstimatorTest, WarmStartsFromAnotherModelsCheckpoint) {
  Fixture first("warm_first");
  TW_ASSERT_OK(first.estimator->Train(LinearInput(), {.steps = 2}).status());
  Fixture second("warm_second");
  second.config.set_warm_start_from(first.config.model_dir);
  Estimator warm(LinearModel, second.config);
  auto history = std::make_shared<StepHistoryHook>();
  TW_ASSERT_OK_AND_ASSIGN(TrainResult r,
                          warm.Train(LinearInput(), {.steps = 1, .hooks = {history}}));
  EXPECT_EQ(history->losses(), (std::vector<double>{9}));
  EXPECT_EQ(r.global_step, 1);
  EXPECT_THAT(second.log.str(), HasSubstr("Warm-starting from " + first.config.model_dir));
  // c = 1 now in its own checkpoint; the warm start is not applied again.
  auto again = std::make_shared<StepHistoryHook>();
  TW_ASSERT_OK(warm.Train(LinearInput(), {.steps = 1, .hooks = {again}}).status());
  EXPECT_EQ(again->losses(), (std::vector<double>{0}));
  // A pattern that chooses nothing is an error, not a silent cold start.
  Fixture third("warm_third");
  train::WarmStartSettings settings{first.config.model_dir};
  settings.vars_to_warm_start = "nothing_matches";
  third.config.set_warm_start_from(settings);
  EXPECT_THAT(Estimator(LinearModel, third.config).Train(LinearInput(), {.steps = 1}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "chooses no trainable variable"));
}

TEST(EstimatorTest, TheEndOfTheDataEndsTraining) {
  Fixture f("end_of_data");
  TW_ASSERT_OK_AND_ASSIGN(TrainResult r, f.estimator->Train(LinearInput(/*times=*/3)));
  EXPECT_EQ(r.steps_run, 3);
  EXPECT_EQ(r.global_step, 3);
  EXPECT_EQ(r.loss, 9);
  TW_ASSERT_OK_AND_ASSIGN(std::string latest, LatestCheckpoint(f.config.model_dir));
  EXPECT_THAT(latest, HasSubstr("model.ckpt-3"));
  // More steps than data: stops at the data's end.
  TW_ASSERT_OK_AND_ASSIGN(r, f.estimator->Train(LinearInput(1), {.steps = 10}));
  EXPECT_EQ(r.steps_run, 1);
  EXPECT_EQ(r.global_step, 4);
}

TEST(EstimatorTest, CheckpointsEveryNStepsKeepingTheNewest) {
  Fixture f("every_n");
  f.config.save_checkpoints_steps = 2;
  f.config.keep_checkpoint_max = 2;
  Estimator estimator(LinearModel, f.config);
  TW_ASSERT_OK(estimator.Train(LinearInput(), {.steps = 5}));
  TW_ASSERT_OK_AND_ASSIGN(CheckpointState state, ReadCheckpointState(f.config.model_dir));
  // Saved at 0, 2, 4 and (the end) 5; two kept.
  ASSERT_EQ(state.all_model_checkpoint_paths_size(), 2);
  EXPECT_THAT(state.all_model_checkpoint_paths(0), HasSubstr("model.ckpt-4"));
  EXPECT_THAT(state.all_model_checkpoint_paths(1), HasSubstr("model.ckpt-5"));
  EXPECT_THAT(f.log.str(), HasSubstr("Saving checkpoints for 2 into "));
  // Each kept checkpoint has its .meta; the deleted ones' went with them.
  for (int step : {0, 2, 4, 5}) {
    const std::string meta = absl::StrCat(f.config.model_dir, "/model.ckpt-", step, ".meta");
    EXPECT_EQ(std::filesystem::exists(meta), step >= 4) << meta;
  }
}

// As TF's: beside each checkpoint the training graph as a MetaGraphDef, so
// that the run goes on in a session made from it alone (import_meta_graph,
// saver.restore, the "train_op" collection).
TEST(EstimatorTest, EachCheckpointHasTheTrainingMetaGraph) {
  Fixture f("meta_graph");
  TW_ASSERT_OK(f.estimator->Train(LinearInput(), {.steps = 2}));
  const std::string checkpoint = f.config.model_dir + "/model.ckpt-2";
  TW_ASSERT_OK_AND_ASSIGN(MetaGraphDef meta, ReadMetaGraphDef(checkpoint + ".meta"));
  EXPECT_EQ(meta.saver_def().restore_op_name(), "save/restore_all");
  ASSERT_EQ(meta.collection_def().at("train_op").node_list().value_size(), 1);
  const std::string train_op = meta.collection_def().at("train_op").node_list().value(0);
  std::map<std::string, std::string> snapshots;  // variable handle -> read
  for (const std::string& bytes : meta.collection_def().at("variables").bytes_list().value()) {
    VariableDef v;
    ASSERT_TRUE(v.ParseFromString(bytes));
    snapshots[v.variable_name()] = v.snapshot_name();
  }
  ASSERT_TRUE(snapshots.count("c:0") && snapshots.count("global_step:0"));

  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, NewSession(SessionOptions()));
  TW_ASSERT_OK(session->Create(meta.graph_def()));
  TW_ASSERT_OK(session->Run(
      {{meta.saver_def().filename_tensor_name(), Scalar<std::string>(checkpoint)}}, {},
      {meta.saver_def().restore_op_name()}, nullptr));
  const Tensor batch = Literal<double>({2, 1}, {1, 2});
  TW_ASSERT_OK(session->Run({{"x", batch}, {"y", batch}}, {}, {train_op}, nullptr));
  std::vector<Tensor> out;
  TW_ASSERT_OK(
      session->Run({}, {snapshots["c:0"], snapshots["global_step:0"]}, {}, &out));
  // Restored c = 4 (loss 9), one step of GradientDescent(1.0) to c = 1.
  EXPECT_THAT(out[0], TensorIs<double>({}, {1}));
  EXPECT_THAT(out[1], TensorIs<int64_t>({}, {3}));
}

// loss = sqrt(c), c = 1, GradientDescent(4): step 1 has loss 1 and sets
// c = 1 - 4 * 0.5 = -1; step 2's loss is NaN.
EstimatorSpec DivergingModel(const Scope& s, const FeatureMap&, const FeatureMap&, ModeKeys mode,
                             const Params&) {
  Variable c = GetVariable(s, "c", TensorShape({}), DT_DOUBLE, initializers::Constant(1.0));
  EstimatorSpec spec(mode);
  spec.loss = ops::Sqrt(s, c.value());
  train::GradientDescentOptimizer opt(4.0);
  SetTrainOp(s, opt, &spec);
  return spec;
}

TEST(EstimatorTest, NanGuardStopsTrainingAndWritesNoNanCheckpoint) {
  Fixture f("nan");
  f.config.save_checkpoints_steps = 1;
  Estimator estimator(DivergingModel, f.config);
  EXPECT_THAT(estimator.Train(LinearInput(), {.steps = 5}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Model diverged with loss = NaN at global step 2"));
  TW_ASSERT_OK_AND_ASSIGN(std::string latest, LatestCheckpoint(f.config.model_dir));
  EXPECT_THAT(latest, HasSubstr("model.ckpt-1"));
  EXPECT_EQ(CheckpointValue(latest, "c"), -1);
  EXPECT_THAT(f.log.str(), ::testing::Not(HasSubstr("Saving checkpoints for 2")));
}

TEST(EstimatorTest, EvaluatesTheLatestCheckpoint) {
  Fixture f("eval");
  EXPECT_THAT(f.estimator->Evaluate(LinearInput(1)),
              StatusIs(absl::StatusCode::kNotFound, "Could not find trained model in model_dir"));
  TW_ASSERT_OK(f.estimator->Train(LinearInput(), {.steps = 2}));  // c = 4
  // Three batches: loss |4 - 1| + |8 - 2| = 9 each; predictions 4 and 8.
  TW_ASSERT_OK_AND_ASSIGN(MetricMap m, f.estimator->Evaluate(LinearInput(3)));
  EXPECT_EQ(m.size(), 3u);
  EXPECT_EQ(m["loss"], 9);
  EXPECT_EQ(m["mean_prediction"], 6);
  EXPECT_EQ(m["global_step"], 2);
  // `steps` bounds the batches.
  TW_ASSERT_OK_AND_ASSIGN(m, f.estimator->Evaluate(LinearInput(), /*steps=*/2));
  EXPECT_EQ(m["loss"], 9);
  EXPECT_THAT(f.log.str(), HasSubstr("Saving dict for global step 2: global_step = 2, loss = 9, "
                                     "mean_prediction = 6"));
}

TEST(EstimatorTest, PredictsAndExportsAFrozenGraph) {
  Fixture f("predict");
  TW_ASSERT_OK(f.estimator->Train(LinearInput(), {.steps = 1}));  // c = 7
  auto input = []() -> absl::StatusOr<InputSpec> {
    TW_ASSIGN_OR_RETURN(data::Dataset d,
                        data::Dataset::FromTensorSlices({Literal<double>({3, 1}, {1, 2, 3})}));
    return InputSpec{d.Batch(2), {"x"}, {}};
  };
  TW_ASSERT_OK_AND_ASSIGN(std::vector<PredictionMap> predictions, f.estimator->Predict(input));
  ASSERT_EQ(predictions.size(), 3u);  // one per example, over two batches
  EXPECT_THAT(predictions[0]["y"], TensorIs<double>({1}, {7}));
  EXPECT_THAT(predictions[1]["y"], TensorIs<double>({1}, {14}));
  EXPECT_THAT(predictions[2]["y"], TensorIs<double>({1}, {21}));

  const std::string export_dir = testing::MakeTempDir("export");
  Signature features = {{"x", {DT_DOUBLE, PartialTensorShape({-1, 1})}}};
  TW_ASSERT_OK(f.estimator->Export(export_dir, features));
  TW_ASSERT_OK_AND_ASSIGN(ExportedModel served, ExportedModel::Load(export_dir));
  EXPECT_EQ(served.outputs().at("y"), "outputs/y:0");
  EXPECT_EQ(served.inputs().at("x").shape, PartialTensorShape({-1, 1}));
  TW_ASSERT_OK_AND_ASSIGN(auto out, served.Run({{"x", Literal<double>({2, 1}, {10, -1})}}));
  EXPECT_THAT(out["y"], TensorIs<double>({2, 1}, {70, -7}));
  // Frozen: no variables left.
  TW_ASSERT_OK_AND_ASSIGN(MetaGraphDef meta, ReadMetaGraphDef(export_dir + "/model.meta"));
  const SignatureDef& signature = meta.signature_def().at("serving_default");
  EXPECT_EQ(signature.inputs().at("x").name(), "x:0");
  EXPECT_EQ(signature.outputs().at("y").dtype(), DT_DOUBLE);
  for (const NodeDef& n : meta.graph_def().node()) EXPECT_NE(n.op(), "VarHandleOp") << n.name();
  EXPECT_THAT(served.Run({}), StatusIs(absl::StatusCode::kInvalidArgument, "input 'x'"));

  // The TRAIN graph, for drawing.
  const std::string graph = export_dir + "/train.pbtxt";
  TW_ASSERT_OK(f.estimator->ExportGraph(ModeKeys::kTrain, features,
                                        {{"y", {DT_DOUBLE, PartialTensorShape({-1, 1})}}}, graph));
  TW_ASSERT_OK_AND_ASSIGN(GraphDef train_def, ReadGraphDef(graph));
  EXPECT_GT(train_def.node_size(), 10);
}

TEST(EstimatorTest, WritesTensorBoardEvents) {
  Params summary;
  summary.values["summary"] = 1;
  Fixture f("events", summary);
  f.config.save_summary_steps = 2;
  Estimator estimator(LinearModel, f.config, summary);
  TW_ASSERT_OK(estimator.Train(LinearInput(), {.steps = 4}));
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(f.config.model_dir)) {
    if (absl::StrContains(entry.path().filename().string(), "events.out.tfevents.")) {
      files.push_back(entry.path());
    }
  }
  ASSERT_EQ(files.size(), 1u);
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<RecordReader> reader, RecordReader::Open(files[0]));
  std::vector<Event> events;
  std::string record;
  while (*reader->ReadRecord(&record)) {
    Event e;
    TW_ASSERT_OK(ParseBinaryProto(record, &e));
    events.push_back(e);
  }
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events[0].file_version(), "brain.Event:2");
  GraphDef graph;
  TW_ASSERT_OK(ParseBinaryProto(events[1].graph_def(), &graph));
  EXPECT_GT(graph.node_size(), 10);
  // Steps 2 and 4: loss 18 and 0 (steps go 27, 18, 9, 0), and the graph's
  // own summary of the same value.
  std::map<std::pair<int64_t, std::string>, float> scalars;
  for (const Event& e : events) {
    for (const Summary::Value& v : e.summary().value())
      scalars[{e.step(), v.tag()}] = v.simple_value();
  }
  EXPECT_EQ(scalars.at({2, "loss"}), 18);
  EXPECT_EQ(scalars.at({2, "error"}), 18);
  EXPECT_EQ(scalars.at({4, "loss"}), 0);
  EXPECT_EQ(scalars.at({4, "error"}), 0);
  EXPECT_GT(scalars.at({4, "global_step/sec"}), 0);
  EXPECT_EQ(scalars.count({1, "loss"}), 0u);
  EXPECT_EQ(scalars.count({3, "error"}), 0u);
}

// Evaluation and export read the moving average in c's place: after one
// step c = 7 and its average 10 - 0.5 (10 - 7) = 8.5.
TEST(EstimatorTest, EvaluatesAndExportsWithMovingAverages) {
  Params ema;
  ema.values["ema"] = 1;
  Fixture f("ema", ema);
  TW_ASSERT_OK(f.estimator->Train(LinearInput(), {.steps = 1}));
  TW_ASSERT_OK_AND_ASSIGN(std::string latest, LatestCheckpoint(f.config.model_dir));
  EXPECT_EQ(CheckpointValue(latest, "c"), 7);
  EXPECT_EQ(CheckpointValue(latest, "c/ExponentialMovingAverage"), 8.5);
  TW_ASSERT_OK_AND_ASSIGN(MetricMap m, f.estimator->Evaluate(LinearInput(1)));
  EXPECT_EQ(m["loss"], 7.5 + 15);
  EXPECT_EQ(m["mean_prediction"], (8.5 + 17) / 2);
  EXPECT_EQ(m["global_step"], 1);
  const std::string export_dir = testing::MakeTempDir("ema_export") + "/made/by/export";
  TW_ASSERT_OK(f.estimator->Export(export_dir, {{"x", {DT_DOUBLE, PartialTensorShape({-1, 1})}}}));
  TW_ASSERT_OK_AND_ASSIGN(ExportedModel served, ExportedModel::Load(export_dir));
  TW_ASSERT_OK_AND_ASSIGN(auto out, served.Run({{"x", Literal<double>({1, 1}, {2})}}));
  EXPECT_THAT(out["y"], TensorIs<double>({1, 1}, {17}));
  // The SavedModel holds the average as c itself.
  TW_ASSERT_OK_AND_ASSIGN(
      std::string saved,
      f.estimator->ExportSavedModel(testing::MakeTempDir("ema_saved_model"),
                                    {{"x", {DT_DOUBLE, PartialTensorShape({-1, 1})}}}));
  EXPECT_EQ(CheckpointValue(saved + "/variables/variables", "c"), 8.5);
  TW_ASSERT_OK_AND_ASSIGN(SavedModelBundle bundle, LoadSavedModel(saved, {kSavedModelTagServe}));
  TW_ASSERT_OK_AND_ASSIGN(SignatureTensors y,
                          bundle.Run("serving_default", {{"x", Literal<double>({1, 1}, {2})}}));
  EXPECT_THAT(y.at("y"), TensorIs<double>({1, 1}, {17}));
}

// ExportSavedModel: a SavedModel in <base>/<timestamp> that LoadSavedModel
// serves with the trained c = 7, with TF's saver subgraph and signature.
TEST(EstimatorTest, ExportsASavedModel) {
  Fixture f("saved_model");
  const std::string base = testing::MakeTempDir("saved_model_export") + "/export";
  Signature features = {{"x", {DT_DOUBLE, PartialTensorShape({-1, 1})}}};
  EXPECT_THAT(f.estimator->ExportSavedModel(base, features),
              StatusIs(absl::StatusCode::kNotFound, "checkpoint"));
  TW_ASSERT_OK(f.estimator->Train(LinearInput(), {.steps = 1}));  // c = 7
  TW_ASSERT_OK_AND_ASSIGN(std::string dir, f.estimator->ExportSavedModel(base, features));
  EXPECT_EQ(dir.substr(0, base.size() + 1), base + "/");
  EXPECT_THAT(f.log.str(), HasSubstr("SavedModel written to " + dir));
  TW_ASSERT_OK_AND_ASSIGN(SavedModel model, ReadSavedModel(dir));
  const MetaGraphDef& meta = model.meta_graphs(0);
  EXPECT_EQ(meta.saver_def().restore_op_name(), "save/restore_all");
  EXPECT_EQ(meta.signature_def().at("serving_default").outputs().at("y").name(), "outputs/y:0");
  EXPECT_EQ(CheckpointValue(dir + "/variables/variables", "c"), 7);

  TW_ASSERT_OK_AND_ASSIGN(SavedModelBundle bundle, LoadSavedModel(dir, {kSavedModelTagServe}));
  TW_ASSERT_OK_AND_ASSIGN(
      SignatureTensors out,
      bundle.Run("serving_default", {{"x", Literal<double>({2, 1}, {10, -1})}}));
  EXPECT_THAT(out.at("y"), TensorIs<double>({2, 1}, {70, -7}));
}

// An embedding table read by ResourceGather: the export turns the gather
// into a GatherV2 from the trained table. loss = sum of the gathered rows,
// GradientDescent(0.5): each gathered row drops by 0.5.
EstimatorSpec EmbeddingModel(const Scope& s, const FeatureMap& features, const FeatureMap&,
                             ModeKeys mode, const Params&) {
  Variable table = GetVariable(s, "embedding", TensorShape({3, 2}), DT_FLOAT,
                               initializers::Constant({1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f}));
  Output rows = ops::ResourceGather(s, table.handle(), features.at("ids"), DT_FLOAT);
  EstimatorSpec spec(mode);
  spec.predictions["vectors"] = rows;
  if (mode == ModeKeys::kPredict) return spec;
  spec.loss = ops::Sum(s, rows, {0, 1});
  train::GradientDescentOptimizer opt(0.5);
  SetTrainOp(s, opt, &spec);
  return spec;
}

TEST(EstimatorTest, ExportsAGatherFromAFrozenTable) {
  Fixture f("embedding");
  Estimator estimator(EmbeddingModel, f.config);
  auto ids = []() -> absl::StatusOr<InputSpec> {
    TW_ASSIGN_OR_RETURN(data::Dataset d,
                        data::Dataset::FromTensorSlices({Literal<int32_t>({2}, {0, 2})}));
    return InputSpec{d.Batch(2), {"ids"}, {}};
  };
  TW_ASSERT_OK(estimator.Train(ids, {.steps = 1}));  // rows 0 and 2 drop by 0.5
  const std::string export_dir = testing::MakeTempDir("embedding_export");
  TW_ASSERT_OK(estimator.Export(export_dir, {{"ids", {DT_INT32, PartialTensorShape({-1})}}}));
  TW_ASSERT_OK_AND_ASSIGN(ExportedModel served, ExportedModel::Load(export_dir));
  TW_ASSERT_OK_AND_ASSIGN(auto out, served.Run({{"ids", Literal<int32_t>({2}, {2, 1})}}));
  EXPECT_THAT(out["vectors"], TensorIs<float>({2, 2}, {4.5f, 5.5f, 3, 4}));
  TW_ASSERT_OK_AND_ASSIGN(MetaGraphDef meta, ReadMetaGraphDef(export_dir + "/model.meta"));
  int gathers = 0;
  for (const NodeDef& n : meta.graph_def().node()) {
    EXPECT_NE(n.op(), "VarHandleOp") << n.name();
    EXPECT_NE(n.op(), "ResourceGather") << n.name();
    gathers += n.op() == "GatherV2";
  }
  EXPECT_EQ(gathers, 1);
}

// Counts the steps it sees and stops training after `stop_after`.
class CountingHook : public SessionRunHook {
 public:
  explicit CountingHook(int stop_after) : stop_after_(stop_after) {}
  absl::Status Begin(const Scope& root) override {
    doubled_ = ops::Mul(root, ops::Const(root, 2.0), ops::Const(root, 21.0));
    return absl::OkStatus();
  }
  std::vector<Output> BeforeRun() override { return {doubled_}; }
  absl::Status AfterRun(const StepResult& step, const std::vector<Tensor>& values,
                        bool* request_stop) override {
    EXPECT_EQ(values.size(), 1u);
    EXPECT_EQ(values[0].data<double>()[0], 42);
    EXPECT_EQ(step.batch_size, 2);
    if (++steps_ == stop_after_) *request_stop = true;
    return absl::OkStatus();
  }
  absl::Status End(const ClientSession&, int64_t global_step) override {
    ended_at_ = global_step;
    return absl::OkStatus();
  }
  int steps_ = 0;
  int64_t ended_at_ = -1;

 private:
  const int stop_after_;
  Output doubled_;
};

TEST(EstimatorTest, HooksFetchTensorsAndStopTraining) {
  Fixture f("hooks");
  f.config.progress_bar = RunConfig::ProgressBar::kOn;
  Estimator estimator(LinearModel, f.config);
  auto hook = std::make_shared<CountingHook>(/*stop_after=*/2);
  TW_ASSERT_OK_AND_ASSIGN(TrainResult r,
                          estimator.Train(LinearInput(), {.steps = 10, .hooks = {hook}}));
  EXPECT_EQ(hook->steps_, 2);
  EXPECT_EQ(hook->ended_at_, 2);
  EXPECT_EQ(r.global_step, 2);
  // The progress bar, and the log line clearing it first.
  EXPECT_THAT(f.log.str(), HasSubstr("] 2/10 steps  loss 18.000"));
  EXPECT_THAT(f.log.str(), HasSubstr("\r\033[K"));
}

// Every second step is traced: timeline-2.json and timeline-4.json hold
// the Chrome trace of steps 2 and 4, with the model's nodes in it.
TEST(EstimatorTest, ProfilerHookWritesTheTraceOfEveryNthStep) {
  Fixture f("profiler");
  auto history = std::make_shared<StepHistoryHook>();
  TW_ASSERT_OK(
      f.estimator
          ->Train(LinearInput(),
                  {.steps = 5,
                   .hooks = {std::make_shared<ProfilerHook>(f.config.model_dir, 2), history}})
          .status());
  EXPECT_EQ(history->steps().size(), 5u);
  for (int step = 1; step <= 5; ++step) {
    const std::string path = absl::StrCat(f.config.model_dir, "/timeline-", step, ".json");
    EXPECT_EQ(std::filesystem::exists(path), step % 2 == 0) << path;
  }
  TW_ASSERT_OK_AND_ASSIGN(std::string trace,
                          ReadFileToString(f.config.model_dir + "/timeline-4.json"));
  EXPECT_THAT(trace, HasSubstr("\"traceEvents\""));
  EXPECT_THAT(trace, HasSubstr("/device:CPU:0"));
  EXPECT_THAT(trace, HasSubstr("ApplyGradientDescent\""));  // the update's op
}

// At the end, the time per op type of the traced steps: in op_times.txt and
// in the log, every op type of the step once, shares adding up to 100%.
TEST(EstimatorTest, ProfilerHookTablesTheTimePerOpType) {
  Fixture f("profiler_table");
  std::ostringstream log;
  auto profiler = std::make_shared<ProfilerHook>(f.config.model_dir, 2, &log);
  TW_ASSERT_OK(f.estimator->Train(LinearInput(), {.steps = 5, .hooks = {profiler}}).status());
  TW_ASSERT_OK_AND_ASSIGN(std::string table,
                          ReadFileToString(f.config.model_dir + "/op_times.txt"));
  EXPECT_EQ(table, log.str());
  EXPECT_THAT(table, HasSubstr("Time per op type over 2 traced step(s)"));
  EXPECT_THAT(table, HasSubstr("\nResourceApplyGradientDescent "));
  EXPECT_THAT(table, HasSubstr("\nall "));
  EXPECT_THAT(table, HasSubstr("100.0%\n"));
  // Each traced step runs the update once: 2 in all.
  const size_t row = table.find("\nResourceApplyGradientDescent ");
  ASSERT_NE(row, std::string::npos);
  std::istringstream fields(table.substr(row + 1));
  std::string op;
  int64_t count = 0;
  fields >> op >> count;
  EXPECT_EQ(count, 2);
}

TEST(EstimatorTest, BadCallsAreErrors) {
  Fixture f("bad");
  EXPECT_THAT(
      f.estimator->Train(LinearInput(), {.steps = 1, .max_steps = 2}),
      StatusIs(absl::StatusCode::kInvalidArgument, "Can not provide both steps and max_steps."));
  EXPECT_THAT(f.estimator->Train(LinearInput(), {.steps = 0}),
              StatusIs(absl::StatusCode::kInvalidArgument, "Must specify steps > 0, given: 0"));
  Params no_train_op;
  no_train_op.values["no_train_op"] = 1;
  Estimator missing(LinearModel, f.config, no_train_op);
  EXPECT_THAT(missing.Train(LinearInput(), {.steps = 1}),
              StatusIs(absl::StatusCode::kInvalidArgument, "Missing train_op."));
  auto unnamed = []() -> absl::StatusOr<InputSpec> {
    TW_ASSIGN_OR_RETURN(InputSpec spec, LinearInput()());
    spec.labels.clear();
    return spec;
  };
  EXPECT_THAT(f.estimator->Train(unnamed, {.steps = 1}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "input_fn names 1 components (features x; labels ) but its batches have 2"));
  RunConfig no_dir = f.config;
  no_dir.model_dir = "";
  EXPECT_THAT(Estimator(LinearModel, no_dir).Train(LinearInput(), {.steps = 1}),
              StatusIs(absl::StatusCode::kInvalidArgument, "model_dir is empty"));
  RunConfig no_wait = f.config;
  no_wait.wait_for_variables_secs = -1;
  EXPECT_THAT(
      Estimator(LinearModel, no_wait).Train(LinearInput(), {.steps = 1}),
      StatusIs(absl::StatusCode::kInvalidArgument, "wait_for_variables_secs must be >= 0, got -1"));
}

// A replicated model_fn under the Estimator: two towers on two virtual CPUs
// average by default, as TF's do: step 1 reports (9 + 18) / 2 = 13.5 and
// moves c by the averaged gradient (1 + 2) / 2 to 8.5; step 2 reports
// (7.5 + 15) / 2 = 11.25 and leaves c = 7. Evaluation with c = 7: loss
// (6 + 12) / 2 = 9, mean prediction (7 + 14) / 2 = 10.5. (Before TF's
// default, the towers summed: 18, 9 and 6.)
TEST(EstimatorTest, TrainsAReplicatedModelFn) {
  Fixture f("replicated");
  f.config.session_options.device_count["CPU"] = 2;
  ReplicateOptions options;
  options.devices = {"/device:CPU:0", "/device:CPU:1"};
  TW_ASSERT_OK_AND_ASSIGN(ModelFn towers, ReplicateModelFn(LinearModel, options));
  Estimator estimator(towers, f.config);
  TW_ASSERT_OK_AND_ASSIGN(TrainResult r, estimator.Train(LinearInput(), {.steps = 2}));
  EXPECT_EQ(r.loss, 11.25);
  TW_ASSERT_OK_AND_ASSIGN(MetricMap m, estimator.Evaluate(LinearInput(1)));
  EXPECT_EQ(m["loss"], 9);
  EXPECT_EQ(m["mean_prediction"], 10.5);
}

}  // namespace
}  // namespace towerflow
