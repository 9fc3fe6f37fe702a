// Keras's callbacks for Model::Fit (FitOptions::callbacks):
//
//   auto stop = std::make_shared<keras::EarlyStopping>(
//       keras::EarlyStopping::Options{.monitor = "val_loss", .patience = 2});
//   model.Fit(x, y, {.epochs = 50, .validation_x = &xv, .validation_y = &yv,
//                    .callbacks = {stop, std::make_shared<keras::CSVLogger>("log.csv")}});
//
// Each follows tf.keras (2.2): the monitored value is an epoch's log
// ("loss", "val_accuracy", ...); mode "auto" maximises values whose name
// holds "acc" and minimises the rest; a value missing from the logs is
// skipped with a warning on stderr, as Keras does.
#ifndef TOWERFLOW_KERAS_CALLBACKS_H_
#define TOWERFLOW_KERAS_CALLBACKS_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "keras/model.h"
#include "train/event_writer.h"

namespace towerflow {
namespace keras {

// Stops training when the monitored value stops improving: after
// `patience` epochs without an improvement larger than `min_delta`.
// restore_best_weights puts back the best epoch's weights when it stops.
class EarlyStopping : public Callback {
 public:
  struct Options {
    std::string monitor = "val_loss";
    double min_delta = 0;
    int patience = 0;
    std::string mode = "auto";  // "min", "max" or "auto"
    bool restore_best_weights = false;
  };
  explicit EarlyStopping(Options options);
  absl::Status OnTrainBegin(Model* model) override;
  absl::Status OnEpochEnd(Model* model, int epoch, const Logs& logs) override;
  // The epoch training stopped after (0-based), or -1.
  int stopped_epoch() const { return stopped_epoch_; }

 private:
  Options options_;
  bool maximize_;
  double best_ = 0;
  int wait_ = 0;
  int stopped_epoch_ = -1;
  std::vector<NamedTensor> best_weights_;
};

// Saves the weights (Model::SaveWeights) after every epoch, or only
// when the monitored value improved with save_best_only. `filepath` may
// hold "{epoch}" or "{epoch:02d}" (the 1-based epoch), as Keras's format.
class ModelCheckpoint : public Callback {
 public:
  struct Options {
    std::string monitor = "val_loss";
    bool save_best_only = false;
    std::string mode = "auto";
  };
  ModelCheckpoint(std::string filepath, Options options);
  explicit ModelCheckpoint(std::string filepath)
      : ModelCheckpoint(std::move(filepath), Options()) {}
  absl::Status OnEpochEnd(Model* model, int epoch, const Logs& logs) override;
  // The paths written, in order.
  const std::vector<std::string>& saved() const { return saved_; }

  bool WritesFiles() const override { return true; }

 private:
  std::string filepath_;
  Options options_;
  bool maximize_;
  bool has_best_ = false;
  double best_ = 0;
  std::vector<std::string> saved_;
};

// Writes one CSV row per epoch: "epoch" (from 0) then the logs' keys in
// sorted order, values in Python's shortest form ("0.5", "0.1234567").
class CSVLogger : public Callback {
 public:
  explicit CSVLogger(std::string filename, char separator = ',', bool append = false);
  absl::Status OnTrainBegin(Model* model) override;
  absl::Status OnEpochEnd(Model* model, int epoch, const Logs& logs) override;

  bool WritesFiles() const override { return true; }

 private:
  std::string filename_;
  char separator_;
  bool append_;
  std::vector<std::string> keys_;
};

// TensorBoard event files in `log_dir` (train/event_writer.h): the graph at
// the start, and every log value as a scalar per epoch (step = epoch).
class TensorBoard : public Callback {
 public:
  explicit TensorBoard(std::string log_dir);
  absl::Status OnTrainBegin(Model* model) override;
  absl::Status OnEpochEnd(Model* model, int epoch, const Logs& logs) override;
  absl::Status OnTrainEnd(Model* model) override;

  bool WritesFiles() const override { return true; }

 private:
  std::string log_dir_;
  std::unique_ptr<train::EventWriter> writer_;
};

// Sets the learning rate at the start of each epoch to
// schedule(epoch, current rate) (Keras's LearningRateScheduler). The model
// must be compiled with a keras::Optimizer.
class LearningRateScheduler : public Callback {
 public:
  explicit LearningRateScheduler(std::function<double(int epoch, double lr)> schedule)
      : schedule_(std::move(schedule)) {}
  absl::Status OnEpochBegin(Model* model, int epoch) override;

 private:
  std::function<double(int, double)> schedule_;
};

// A callback from functions (Keras's LambdaCallback); unset ones do nothing.
class LambdaCallback : public Callback {
 public:
  std::function<absl::Status(Model*, int epoch, const Logs&)> on_epoch_end;
  std::function<absl::Status(Model*, int64_t batch, const Logs&)> on_batch_end;
  absl::Status OnEpochEnd(Model* model, int epoch, const Logs& logs) override {
    return on_epoch_end ? on_epoch_end(model, epoch, logs) : absl::OkStatus();
  }
  absl::Status OnBatchEnd(Model* model, int64_t batch, const Logs& logs) override {
    return on_batch_end ? on_batch_end(model, batch, logs) : absl::OkStatus();
  }
};

}  // namespace keras
}  // namespace towerflow

#endif  // TOWERFLOW_KERAS_CALLBACKS_H_
