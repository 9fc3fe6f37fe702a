// keras/callbacks.h and the weights: early stopping as Keras decides it,
// checkpoints and weights round-tripping, the CSV log and event files.
#include "keras/callbacks.h"

#include <dirent.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"
#include "train/optimizers.h"

namespace towerflow {
namespace {

using ::towerflow::testing::StatusIs;

keras::Sequential Compiled() {
  keras::Sequential model(
      {4}, {keras::Dense(5, {.activation = "relu"}), keras::Dense(3, {.activation = "softmax"})});
  EXPECT_EQ(model.Compile(std::make_shared<train::GradientDescentOptimizer>(0.5),
                          "sparse_categorical_crossentropy", {"accuracy"}),
            absl::OkStatus());
  return model;
}

void Data(Tensor* x, Tensor* y) {
  *x = Tensor(DT_FLOAT, TensorShape({16, 4}));
  *y = Tensor(DT_INT32, TensorShape({16}));
  for (int i = 0; i < 16; ++i) {
    for (int j = 0; j < 4; ++j) x->data<float>()[i * 4 + j] = ((i * 5 + j * 3) % 11) / 5.0f - 1;
    y->data<int32_t>()[i] = i % 3;
  }
}

TEST(CallbacksTest, EarlyStoppingWaitsPatienceEpochs) {
  keras::Sequential model = Compiled();
  keras::EarlyStopping stop({.monitor = "val_loss", .patience = 2});
  TW_ASSERT_OK(stop.OnTrainBegin(&model));
  TW_ASSERT_OK(stop.OnEpochEnd(&model, 0, {{"val_loss", 1.0}}));
  TW_ASSERT_OK(stop.OnEpochEnd(&model, 1, {{"val_loss", 0.9}}));   // better
  TW_ASSERT_OK(stop.OnEpochEnd(&model, 2, {{"val_loss", 0.95}}));  // wait 1
  EXPECT_FALSE(model.stop_training());
  TW_ASSERT_OK(stop.OnEpochEnd(&model, 3, {{"val_loss", 0.9}}));  // not better: wait 2
  EXPECT_TRUE(model.stop_training());
  EXPECT_EQ(stop.stopped_epoch(), 3);
  // "acc" in the name maximises; a missing value is skipped.
  keras::Sequential other = Compiled();
  keras::EarlyStopping acc({.monitor = "val_accuracy"});
  TW_ASSERT_OK(acc.OnTrainBegin(&other));
  TW_ASSERT_OK(acc.OnEpochEnd(&other, 0, {{"val_accuracy", 0.5}}));
  TW_ASSERT_OK(acc.OnEpochEnd(&other, 1, {{"loss", 0.1}}));
  TW_ASSERT_OK(acc.OnEpochEnd(&other, 2, {{"val_accuracy", 0.6}}));
  EXPECT_FALSE(other.stop_training());
  TW_ASSERT_OK(acc.OnEpochEnd(&other, 3, {{"val_accuracy", 0.6}}));
  EXPECT_TRUE(other.stop_training());
}

TEST(CallbacksTest, FitStopsEarlyAndRestoresTheBestWeights) {
  keras::Sequential model = Compiled();
  Tensor x, y;
  Data(&x, &y);
  // min_delta 10: only the first epoch counts as an improvement.
  auto stop = std::make_shared<keras::EarlyStopping>(keras::EarlyStopping::Options{
      .monitor = "loss", .min_delta = 10, .restore_best_weights = true});
  std::vector<std::vector<NamedTensor>> weights;  // after each epoch
  auto record = std::make_shared<keras::LambdaCallback>();
  record->on_epoch_end = [&weights](keras::Model* m, int, const keras::Logs&) {
    absl::StatusOr<std::vector<NamedTensor>> w = m->GetWeights();
    if (w.ok()) weights.push_back(*w);
    return w.status();
  };
  TW_ASSERT_OK_AND_ASSIGN(
      keras::History h,
      model.Fit(x, y, {.batch_size = 8, .epochs = 10, .verbose = 0, .callbacks = {record, stop}}));
  EXPECT_EQ(h.history["loss"].size(), 2u);
  EXPECT_EQ(stop->stopped_epoch(), 1);
  ASSERT_EQ(weights.size(), 2u);
  TW_ASSERT_OK_AND_ASSIGN(std::vector<NamedTensor> now, model.GetWeights());
  ASSERT_EQ(now.size(), 4u);
  EXPECT_EQ(now[0].name, "dense/kernel");
  EXPECT_EQ(now[3].name, "dense_1/bias");
  for (size_t i = 0; i < now.size(); ++i) {
    EXPECT_EQ(Values<float>(now[i].tensor), Values<float>(weights[0][i].tensor)) << now[i].name;
  }
}

// Fit and Estimator::Train run one training loop (training/loop.h): a hook
// given to Fit sees every step a callback sees, with the same loss and
// examples, and its stop request ends Fit.
TEST(CallbacksTest, HooksSeeTheStepsCallbacksSee) {
  keras::Sequential model = Compiled();
  Tensor x, y;
  Data(&x, &y);
  struct Seen {
    int64_t batch;
    double loss, accuracy;
  };
  std::vector<Seen> seen;
  auto record = std::make_shared<keras::LambdaCallback>();
  record->on_batch_end = [&seen](keras::Model*, int64_t batch, const keras::Logs& logs) {
    seen.push_back({batch, logs.at("loss"), logs.at("accuracy")});
    return absl::OkStatus();
  };
  auto history = std::make_shared<StepHistoryHook>();
  // 16 rows in batches of 6: 6, 6 and 4 rows an epoch.
  TW_ASSERT_OK_AND_ASSIGN(
      keras::History h,
      model.Fit(
          x, y,
          {.batch_size = 6, .epochs = 2, .verbose = 0, .callbacks = {record}, .hooks = {history}}));
  EXPECT_EQ(h.epochs, (std::vector<int>{0, 1}));
  ASSERT_EQ(seen.size(), 6u);
  ASSERT_EQ(history->steps().size(), 6u);
  for (size_t i = 0; i < seen.size(); ++i) {
    const StepResult& step = history->steps()[i];
    EXPECT_EQ(seen[i].batch, static_cast<int64_t>(i % 3)) << i;
    EXPECT_EQ(step.global_step, static_cast<int64_t>(i + 1)) << i;
    EXPECT_EQ(step.batch_size, i % 3 == 2 ? 4 : 6) << i;
    EXPECT_EQ(step.loss, seen[i].loss) << i;
    ASSERT_EQ(step.logs.size(), 1u);
    EXPECT_EQ(step.logs[0], seen[i].accuracy) << i;
  }
  // A stop request ends Fit after that epoch's end; the callbacks see no
  // later step.
  seen.clear();
  auto stop = std::make_shared<StopAtStepHook>(StopAtStepHook::LastStep(4));
  TW_ASSERT_OK_AND_ASSIGN(
      h, model.Fit(
             x, y,
             {.batch_size = 6, .epochs = 5, .verbose = 0, .callbacks = {record}, .hooks = {stop}}));
  EXPECT_EQ(h.epochs, (std::vector<int>{0, 1}));
  EXPECT_EQ(seen.size(), 4u);
  // A hook's error ends Fit with it.
  struct Failing : SessionRunHook {
    absl::Status AfterRun(const StepResult& step, const std::vector<Tensor>&, bool*) override {
      return step.global_step == 2 ? absl::InternalError("disk full") : absl::OkStatus();
    }
  };
  seen.clear();
  EXPECT_THAT(model.Fit(x, y,
                        {.batch_size = 6,
                         .epochs = 2,
                         .verbose = 0,
                         .callbacks = {record},
                         .hooks = {std::make_shared<Failing>()}}),
              StatusIs(absl::StatusCode::kInternal, "disk full"));
  EXPECT_EQ(seen.size(), 2u);
}

TEST(CallbacksTest, WeightsRoundTripThroughCheckpoints) {
  const std::string dir = testing::MakeTempDir("keras_weights");
  keras::Sequential a = Compiled();
  Tensor x, y;
  Data(&x, &y);
  auto checkpoint = std::make_shared<keras::ModelCheckpoint>(
      dir + "/weights-{epoch:02d}.ckpt",
      keras::ModelCheckpoint::Options{.monitor = "loss", .save_best_only = true});
  TW_ASSERT_OK(a.Fit(x, y, {.batch_size = 8, .epochs = 3, .verbose = 0, .callbacks = {checkpoint}})
                   .status());
  ASSERT_FALSE(checkpoint->saved().empty());
  EXPECT_EQ(checkpoint->saved()[0], dir + "/weights-01.ckpt");  // the first is always best
  TW_ASSERT_OK(a.SaveWeights(dir + "/final.ckpt"));
  TW_ASSERT_OK_AND_ASSIGN(Tensor pa, a.Predict(x));

  keras::Sequential b = Compiled();  // fresh random weights
  TW_ASSERT_OK(b.LoadWeights(dir + "/final.ckpt"));
  TW_ASSERT_OK_AND_ASSIGN(Tensor pb, b.Predict(x));
  EXPECT_EQ(Values<float>(pa), Values<float>(pb));

  keras::Sequential bigger({4}, {keras::Dense(5), keras::Dense(3), keras::Dense(2)});
  EXPECT_THAT(bigger.LoadWeights(dir + "/final.ckpt"),
              StatusIs(absl::StatusCode::kNotFound, "no weight dense_2/kernel in the file"));
  EXPECT_THAT(b.SetWeights({{"dense/kernel", Tensor(DT_FLOAT, TensorShape({5, 4}))}}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "SetWeights: dense/kernel is float [4,5], got float [5,4]"));
  EXPECT_THAT(b.LoadWeights(dir + "/missing.ckpt"), StatusIs(absl::StatusCode::kNotFound));
}

TEST(CallbacksTest, CSVLoggerWritesKerasRows) {
  const std::string path = testing::MakeTempDir("keras_csv") + "/log.csv";
  keras::Sequential model = Compiled();
  keras::CSVLogger csv(path);
  TW_ASSERT_OK(csv.OnTrainBegin(&model));
  TW_ASSERT_OK(csv.OnEpochEnd(&model, 0, {{"loss", 0.5}, {"accuracy", 1}}));
  TW_ASSERT_OK(csv.OnEpochEnd(&model, 1, {{"loss", 0.1234567}, {"accuracy", 0.75}}));
  EXPECT_EQ(testing::ReadFileOrDie(path), "epoch,accuracy,loss\n0,1.0,0.5\n1,0.75,0.1234567\n");
  // Through Fit: a header and one row per epoch.
  Tensor x, y;
  Data(&x, &y);
  TW_ASSERT_OK(
      model
          .Fit(x, y,
               {.epochs = 2, .verbose = 0, .callbacks = {std::make_shared<keras::CSVLogger>(path)}})
          .status());
  std::istringstream lines(testing::ReadFileOrDie(path));
  std::string line;
  std::vector<std::string> rows;
  while (std::getline(lines, line)) rows.push_back(line);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], "epoch,accuracy,loss");
  EXPECT_EQ(rows[2].substr(0, 2), "1,");
}

TEST(CallbacksTest, LearningRateSchedulerChangesTheRateEachEpoch) {
  Tensor x, y;
  Data(&x, &y);
  // keras::SGD(0.5) trains as train::GradientDescentOptimizer(0.5) does.
  keras::Sequential fixed = Compiled();
  keras::Sequential keras_sgd(
      {4}, {keras::Dense(5, {.activation = "relu"}), keras::Dense(3, {.activation = "softmax"})});
  TW_ASSERT_OK(keras_sgd.Compile(keras::SGD(0.5), "sparse_categorical_crossentropy", {"accuracy"}));
  TW_ASSERT_OK(keras_sgd.SetWeights(*fixed.GetWeights()));
  TW_ASSERT_OK_AND_ASSIGN(keras::History a, fixed.Fit(x, y, {.epochs = 2, .verbose = 0}));
  TW_ASSERT_OK_AND_ASSIGN(keras::History b, keras_sgd.Fit(x, y, {.epochs = 2, .verbose = 0}));
  for (int e = 0; e < 2; ++e) EXPECT_NEAR(a.history["loss"][e], b.history["loss"][e], 1e-6);
  EXPECT_THAT(fixed.GetLearningRate().status(),
              StatusIs(absl::StatusCode::kFailedPrecondition, "keras::Optimizer"));

  // A schedule of 0.5 then 0: the weights stop moving after the first epoch.
  keras::Sequential model({4}, {keras::Dense(3, {.activation = "softmax"})});
  TW_ASSERT_OK(model.Compile(keras::SGD(0.1), "sparse_categorical_crossentropy"));
  TW_ASSERT_OK(model.SetLearningRate(0.25));  // before training: where it starts
  TW_ASSERT_OK_AND_ASSIGN(double start, model.GetLearningRate());
  EXPECT_EQ(start, 0.25);
  std::vector<double> seen;
  auto schedule = std::make_shared<keras::LearningRateScheduler>([&seen](int epoch, double lr) {
    seen.push_back(lr);
    return epoch == 0 ? 0.5 : 0.0;
  });
  std::vector<std::vector<NamedTensor>> weights;
  auto record = std::make_shared<keras::LambdaCallback>();
  record->on_epoch_end = [&weights](keras::Model* m, int, const keras::Logs&) {
    absl::StatusOr<std::vector<NamedTensor>> w = m->GetWeights();
    if (w.ok()) weights.push_back(*w);
    return w.status();
  };
  TW_ASSERT_OK(
      model.Fit(x, y, {.epochs = 3, .verbose = 0, .callbacks = {schedule, record}}).status());
  EXPECT_EQ(seen, (std::vector<double>{0.25, 0.5, 0.0}));
  ASSERT_EQ(weights.size(), 3u);
  EXPECT_EQ(Values<float>(weights[1][0].tensor), Values<float>(weights[0][0].tensor));
  EXPECT_EQ(Values<float>(weights[2][0].tensor), Values<float>(weights[0][0].tensor));
  TW_ASSERT_OK_AND_ASSIGN(double end, model.GetLearningRate());
  EXPECT_EQ(end, 0.0);
}

TEST(CallbacksTest, TensorBoardWritesAnEventFile) {
  const std::string dir = testing::MakeTempDir("keras_tb");
  keras::Sequential model = Compiled();
  Tensor x, y;
  Data(&x, &y);
  TW_ASSERT_OK(
      model
          .Fit(
              x, y,
              {.epochs = 2, .verbose = 0, .callbacks = {std::make_shared<keras::TensorBoard>(dir)}})
          .status());
  DIR* d = opendir(dir.c_str());
  ASSERT_NE(d, nullptr);
  std::string events;
  while (dirent* e = readdir(d)) {
    if (std::string(e->d_name).rfind("events.out.tfevents.", 0) == 0) events = e->d_name;
  }
  closedir(d);
  ASSERT_FALSE(events.empty());
  const std::string bytes = testing::ReadFileOrDie(dir + "/" + events);
  // The graph and the scalars' tags are in the records.
  EXPECT_NE(bytes.find("dense_input"), std::string::npos);
  EXPECT_NE(bytes.find("accuracy"), std::string::npos);
}

}  // namespace
}  // namespace towerflow
