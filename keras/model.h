// A Keras-style Sequential model in C++, replicable over devices like
// TensorFlow's tpu_model(model, replicas=N):
//
//   keras::Sequential model({28, 28, 1}, {
//       keras::Conv2D(32, 3, {.activation = "relu"}),
//       keras::MaxPooling2D(2),
//       keras::Flatten(),
//       keras::Dense(10, {.activation = "softmax"}),
//   });
//   TW_RETURN_IF_ERROR(model.Compile(std::make_shared<train::AdamOptimizer>(1e-3),
//                                    "sparse_categorical_crossentropy", {"accuracy"}));
//   keras::Sequential replicated = keras::ReplicatedModel(model, {.replicas = 2});
//   TW_ASSIGN_OR_RETURN(keras::History h, replicated.Fit(x, y, {.epochs = 5}));
//   TW_ASSIGN_OR_RETURN(auto metrics, replicated.Evaluate(x_test, y_test));  // "loss", "accuracy"
//   TW_ASSIGN_OR_RETURN(Tensor probabilities, replicated.Predict(x_test));
//
// Semantics (tf.keras'): layers are named per model ("dense", "dense_1")
// and their weights "dense/kernel", ...; a batch's loss is the compiled
// loss's mean over the batch plus the layers' regularization; Fit shuffles
// each epoch (seeded), includes the last partial batch, and shows Keras's
// progress bar; Evaluate and Predict run in inference mode (no dropout,
// batch norm's moving averages), Evaluate's values being the means over
// every example. Losses: "sparse_categorical_crossentropy" (integer labels),
// "categorical_crossentropy" (one-hot), "binary_crossentropy",
// "mean_squared_error" ("mse"), "mean_absolute_error" ("mae"), "huber". A
// cross-entropy of a softmax or sigmoid output is computed from its logits,
// as Keras's TF backend does. Metrics: "accuracy" (the form the loss
// implies, as Keras picks), "mse", "mae".
//
// Replication (ReplicationOptions): each batch is split along axis 0 into N
// equal shards, shard i = rows [i B / N, (i + 1) B / N), one replica per
// device (N virtual CPU devices unless `devices` names them), each shard's
// loss scaled by 1 / N and the gradients summed (ReplicateModelFn with
// TowerOptimizer), one update per step. A batch that does not divide is
// refused ("batch_size must be divisible by num_replicas") unless
// `uneven_batches`, with which the shards differ by at most one row and
// are weighted so the step equals the unreplicated one. Beyond TF, Evaluate
// and Predict are replicated too: predictions are concatenated in input
// order and metrics computed on them, so they equal the plain model's.
//
// A Sequential is a value whose copies share one graph and session once
// built (the first Fit, Evaluate, Predict or Summary). Not thread-safe.
#ifndef TOWERFLOW_KERAS_MODEL_H_
#define TOWERFLOW_KERAS_MODEL_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "data/dataset.h"
#include "estimator/model_fn.h"
#include "framework/tensor.h"
#include "layers/layers.h"
#include "proto/graph.pb.h"
#include "train/checkpoint.h"
#include "train/optimizer.h"

namespace towerflow {
namespace keras {

// A layer of a model: its Keras class name, the base of its default name,
// and how it builds its output (under the layer's name, in training or not).
class Layer {
 public:
  using BuildFn = std::function<Output(const Scope& scope, const Output& x, bool training,
                                       const std::string& name)>;
  Layer(std::string class_name, std::string base_name, BuildFn build, std::string name = "");

  const std::string& class_name() const { return class_name_; }
  const std::string& base_name() const { return base_name_; }
  // The name given, or "" until the model names it.
  const std::string& name() const { return name_; }
  Layer& set_name(std::string name) {
    name_ = std::move(name);
    return *this;
  }
  Output operator()(const Scope& scope, const Output& x, bool training) const {
    return build_(scope, x, training, name_);
  }

 private:
  std::string class_name_;
  std::string base_name_;
  BuildFn build_;
  std::string name_;
};

// The layers, over layers:: (their options' `name` and `training` are the
// model's to set).
Layer Dense(int64_t units, layers::DenseOptions options = {});
Layer Conv2D(int64_t filters, layers::Size2 kernel_size, layers::Conv2DOptions options = {});
Layer MaxPooling2D(layers::Size2 pool_size, layers::Pooling2DOptions options = {});
Layer AveragePooling2D(layers::Size2 pool_size, layers::Pooling2DOptions options = {});
Layer GlobalAveragePooling2D(std::string data_format = "channels_last");
Layer Flatten();
Layer Dropout(double rate, std::optional<int64_t> seed = std::nullopt);
Layer BatchNormalization(layers::BatchNormalizationOptions options = {});
Layer LayerNormalization(layers::LayerNormalizationOptions options = {});
Layer Activation(layers::Activation activation);
// For integer inputs (a Sequential of dtype DT_INT32 or DT_INT64).
Layer Embedding(int64_t input_dim, int64_t output_dim, layers::EmbeddingOptions options = {});

class Sequential;
class Callback;

// A Keras optimizer: its hyper-parameters, and how to make the training
// optimizer once the learning rate is a tensor. Compiled with one, a model
// keeps its learning rate in a variable ("learning_rate") that
// SetLearningRate and LearningRateScheduler change between steps.
struct Optimizer {
  std::string name;
  double learning_rate = 0.01;
  std::function<std::shared_ptr<train::Optimizer>(Input learning_rate)> make;
};
// Keras's defaults (tf.keras): SGD 0.01; Adam 0.001, 0.9, 0.999, 1e-7;
// RMSprop 0.001, rho 0.9, 1e-7; Adagrad 0.01, accumulators from 0.1.
Optimizer SGD(double learning_rate = 0.01, double momentum = 0, bool nesterov = false);
Optimizer Adam(double learning_rate = 0.001, double beta_1 = 0.9, double beta_2 = 0.999,
               double epsilon = 1e-7);
Optimizer RMSprop(double learning_rate = 0.001, double rho = 0.9, double epsilon = 1e-7);
Optimizer Adagrad(double learning_rate = 0.01, double initial_accumulator_value = 0.1);

struct FitOptions {
  int64_t batch_size = 32;
  int epochs = 1;
  int initial_epoch = 0;
  bool shuffle = true;
  uint64_t seed = 0;  // of the shuffles
  // Evaluated after each epoch: "val_loss", "val_<metric>".
  const Tensor* validation_x = nullptr;
  const Tensor* validation_y = nullptr;
  // Without validation data: the last fraction of x and y (before any
  // shuffling) is held out and validates instead, as Keras does.
  double validation_split = 0;
  // 0: silent; 1: Keras's progress bar.
  int verbose = 1;
  std::ostream* out = nullptr;  // null: std::cout
  // Called in order at each stage (keras/callbacks.h).
  std::vector<std::shared_ptr<Callback>> callbacks;
};

// An epoch's (or a batch's) values: "loss", metrics, "val_...".
using Logs = std::map<std::string, double>;

// Keras's Callback: hooks around training. An error stops Fit and is
// returned by it; model->set_stop_training(true) ends it after the epoch.
class Callback {
 public:
  virtual ~Callback() = default;
  virtual absl::Status OnTrainBegin(Sequential* model) { return absl::OkStatus(); }
  virtual absl::Status OnEpochBegin(Sequential* model, int epoch) { return absl::OkStatus(); }
  // `batch` counts from 0 in the epoch; logs hold the batch's values.
  virtual absl::Status OnBatchEnd(Sequential* model, int64_t batch, const Logs& logs) {
    return absl::OkStatus();
  }
  virtual absl::Status OnEpochEnd(Sequential* model, int epoch, const Logs& logs) {
    return absl::OkStatus();
  }
  virtual absl::Status OnTrainEnd(Sequential* model) { return absl::OkStatus(); }
};

// Per epoch: "loss", each metric, and "val_..." with validation data.
struct History {
  std::vector<int> epochs;
  std::map<std::string, std::vector<double>> history;
};

struct ReplicationOptions {
  int replicas = 1;
  // One per replica; empty: "/cpu:0" ... "/cpu:N-1" (virtual CPU devices).
  std::vector<std::string> devices;
  bool uneven_batches = false;
};

class Sequential {
 public:
  // `input_shape` without the batch dimension.
  Sequential(std::vector<int64_t> input_shape, std::vector<Layer> layers,
             std::string name = "sequential", DataType dtype = DT_FLOAT);

  // Appends a layer. FailedPrecondition once built.
  absl::Status Add(Layer layer);

  // InvalidArgument for an unknown loss or metric, or no optimizer. A built
  // model keeps its weights (the optimizer starts afresh), as in Keras.
  absl::Status Compile(std::shared_ptr<train::Optimizer> optimizer, const std::string& loss,
                       std::vector<std::string> metrics = {});
  // With a Keras optimizer, whose learning rate can change (see Optimizer).
  absl::Status Compile(Optimizer optimizer, const std::string& loss,
                       std::vector<std::string> metrics = {});

  // The learning rate of a model compiled with a keras::Optimizer;
  // FailedPrecondition for one compiled with a train::Optimizer (its rate is
  // part of it). Setting it before training sets where training starts.
  absl::StatusOr<double> GetLearningRate();
  absl::Status SetLearningRate(double learning_rate);

  // x: [N, input_shape...]; y: [N] integer labels or [N, outputs...].
  absl::StatusOr<History> Fit(const Tensor& x, const Tensor& y, const FitOptions& options = {});
  // From a dataset whose elements are batches (x, y) (e.g.
  // FromTensorSlices(...).Shuffle(...).Batch(128)), one pass per epoch; the
  // progress bar counts steps without a total ("12/Unknown").
  absl::StatusOr<History> Fit(const data::Dataset& dataset, const FitOptions& options = {});
  // "loss" and each metric, means over every example.
  absl::StatusOr<std::map<std::string, double>> Evaluate(const Tensor& x, const Tensor& y,
                                                         int64_t batch_size = 32);
  // The outputs for every row of x, in order (the last partial batch too).
  absl::StatusOr<Tensor> Predict(const Tensor& x, int64_t batch_size = 32);
  // One training step on the whole of x and y: its "loss" and metrics.
  absl::StatusOr<Logs> TrainOnBatch(const Tensor& x, const Tensor& y);
  // Predict in one batch.
  absl::StatusOr<Tensor> PredictOnBatch(const Tensor& x);

  // Keras's summary table (layer (type), output shape, param #, totals).
  absl::StatusOr<std::string> Summary();

  // The model as a model_fn (TF's model_to_estimator): features "x", labels
  // "y", predictions "output" (and "logits" after a softmax or sigmoid);
  // TRAIN minimizes with the compiled optimizer wrapped in TowerOptimizer,
  // so ReplicateModelFn can replicate it. The model must be compiled.
  absl::StatusOr<ModelFn> ToModelFn() const;

  // The layers' weights (not the optimizer's slots), by variable name, in
  // creation order; SetWeights assigns some or all of them (shapes and
  // dtypes must match). Both build the model if needed.
  absl::StatusOr<std::vector<NamedTensor>> GetWeights();
  absl::Status SetWeights(const std::vector<NamedTensor>& weights);
  // GetWeights to a checkpoint file (train/checkpoint.h: crash-safe, CRC'd)
  // and back; LoadWeights refuses a file missing one of the weights.
  absl::Status SaveWeights(const std::string& path);
  absl::Status LoadWeights(const std::string& path);

  // Set by a callback (EarlyStopping) to end Fit after the current epoch.
  void set_stop_training(bool stop) { stop_training_ = stop; }
  bool stop_training() const { return stop_training_; }

  // The graph built so far (by Fit, Evaluate, Predict or Summary).
  // FailedPrecondition before any.
  absl::StatusOr<GraphDef> ExportGraphDef() const;

  const std::string& name() const { return name_; }
  int replicas() const { return replication_.replicas; }

 private:
  friend Sequential ReplicatedModel(const Sequential& model, const ReplicationOptions& options);
  struct Compiled;
  struct Built;

  // Builds the graph and session for labels like `y` (null: predict only).
  absl::Status Build(const Tensor* y);
  // Whether the replicas can split a batch of `batch` rows (see the file
  // comment); CheckBatches for every batch of n rows in batches of batch_size.
  absl::Status CheckBatch(int64_t batch) const;
  // Runs the initializers of the variables the session has not seen.
  absl::Status InitializeNewVariables() const;
  // The weights of a built model. REQUIRES: built_.
  absl::StatusOr<std::vector<NamedTensor>> BuiltWeights() const;
  // Keeps the current weights (if built) for the next graph, which Build
  // assigns once it has made the weights.
  void CarryWeights();
  absl::Status CheckBatches(int64_t n, int64_t batch_size) const;
  // A step's results for Fit, Evaluate and Predict: (step, rows, fetched).
  using StepFn =
      std::function<absl::Status(int64_t step, int64_t rows, const std::vector<Tensor>& values)>;
  // One batch: training (loss, metrics), evaluation (loss, metrics) or
  // prediction (outputs) when y is null.
  absl::StatusOr<std::vector<Tensor>> RunStep(const Tensor& x, const Tensor* y, bool train);
  // RunStep over rows order[...] of x (and y) in batches of `batch_size`.
  absl::Status RunBatches(const Tensor& x, const Tensor* y, int64_t batch_size, bool train,
                          const std::vector<int64_t>& order, const StepFn& each);
  // Fit's epochs: callbacks, progress bar (`steps` 0: unknown), validation.
  absl::StatusOr<History> FitEpochs(
      const FitOptions& options, int64_t steps, const Tensor* validation_x,
      const Tensor* validation_y,
      const std::function<absl::Status(int epoch, const StepFn& each)>& run_epoch);

  std::string name_;
  std::vector<int64_t> input_shape_;
  DataType dtype_;
  std::vector<Layer> layers_;
  std::shared_ptr<const Compiled> compiled_;
  ReplicationOptions replication_;
  std::shared_ptr<Built> built_;
  bool stop_training_ = false;
  // Weights for the next graph (see CarryWeights), or why they could not be read.
  std::vector<NamedTensor> carried_weights_;
  absl::Status carried_status_;
};

// The model with `options.replicas` replicas (TF's tpu_model): a copy that
// builds its own graph, starting from `model`'s weights when it has any
// (as tpu_model copies them). replicas = 1 is the plain model.
Sequential ReplicatedModel(const Sequential& model, const ReplicationOptions& options);

}  // namespace keras
}  // namespace towerflow

#endif  // TOWERFLOW_KERAS_MODEL_H_
