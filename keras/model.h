// Keras-style models in C++, replicable over devices like TensorFlow's
// tpu_model(model, replicas=N): a Sequential chain of layers, or the
// functional Model of keras::Input and layers called on symbolic tensors
// (keras/layer.h), with several inputs and outputs.
//
//   keras::Sequential model({28, 28, 1}, {
//       keras::Conv2D(32, 3, {.activation = "relu"}),
//       keras::MaxPooling2D(2),
//       keras::Flatten(),
//       keras::Dense(10, {.activation = "softmax"}),
//   });
//   TW_RETURN_IF_ERROR(model.Compile(std::make_shared<train::AdamOptimizer>(1e-3),
//                                    "sparse_categorical_crossentropy", {"accuracy"}));
//   keras::Model replicated = keras::ReplicatedModel(model, {.replicas = 2});
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
// device (N virtual CPU devices unless `devices` names them) reading its
// shard from its own placeholders ("infeed-enqueue-<feed>-<i>" on its
// device, as tpu_model's), each shard's loss scaled by 1 / N (or not, with
// kSum) and the gradients summed (ReplicateShardedModelFn with
// TowerOptimizer), one update per step. A batch that does not divide is
// refused ("batch_size must be divisible by num_replicas") unless
// `uneven_batches`, with which the shards differ by at most one row and
// are weighted so the step equals the unreplicated one. Beyond TF, Evaluate
// and Predict are replicated too: predictions are concatenated in input
// order and metrics computed on them, so they equal the plain model's.
//
// Save and LoadModel keep a model whole: its architecture and compile
// settings (keras/model_config.proto) beside its weights.
//
// A model is a value whose copies share one graph and session once built
// (the first Fit, Evaluate, Predict or Summary). Not thread-safe.
#ifndef TOWERFLOW_KERAS_MODEL_H_
#define TOWERFLOW_KERAS_MODEL_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "data/dataset.h"
#include "estimator/model_fn.h"
#include "estimator/replicate_model_fn.h"
#include "framework/tensor.h"
#include "keras/layer.h"
#include "layers/layers.h"
#include "proto/graph.pb.h"
#include "runtime/session.h"
#include "train/checkpoint.h"
#include "train/optimizer.h"
#include "training/hooks.h"

namespace towerflow {
namespace keras {

class Model;
class Callback;
}  // namespace keras
namespace distribute {
class Cluster;
}  // namespace distribute
namespace keras {
namespace internal {
struct ModelTopology;
struct CompiledModel;
class ModelImpl;
}  // namespace internal

// Tensors by input or output name.
using TensorMap = std::map<std::string, Tensor>;

// A Keras optimizer: its hyper-parameters, and how to make the training
// optimizer once the learning rate is a tensor. Compiled with one, a model
// keeps its learning rate in a variable ("learning_rate") that
// SetLearningRate and LearningRateScheduler change between steps.
struct Optimizer {
  std::string name;
  double learning_rate = 0.01;
  std::function<std::shared_ptr<train::Optimizer>(::towerflow::Input learning_rate)> make;
  // Its other hyper-parameters by Keras's names ("momentum", "beta_1", ...),
  // which Model::Save keeps.
  std::map<std::string, double> config;
};
// Keras's defaults (tf.keras): SGD 0.01; Adam 0.001, 0.9, 0.999, 1e-7;
// RMSprop 0.001, rho 0.9, 1e-7; Adagrad 0.01, accumulators from 0.1.
Optimizer SGD(double learning_rate = 0.01, double momentum = 0, bool nesterov = false);
Optimizer Adam(double learning_rate = 0.001, double beta_1 = 0.9, double beta_2 = 0.999,
               double epsilon = 1e-7);
Optimizer RMSprop(double learning_rate = 0.001, double rho = 0.9, double epsilon = 1e-7);
Optimizer Adagrad(double learning_rate = 0.01, double initial_accumulator_value = 0.1);
// The optimizer `name` ("SGD", "Adam", "RMSprop", "Adagrad") with `config`
// (missing values take the defaults); InvalidArgument for another name or
// an unknown hyper-parameter.
absl::StatusOr<Optimizer> OptimizerFromConfig(const std::string& name, double learning_rate,
                                              const std::map<std::string, double>& config);

struct FitOptions {
  int64_t batch_size = 32;
  int epochs = 1;
  int initial_epoch = 0;
  bool shuffle = true;
  uint64_t seed = 0;  // of the shuffles
  // Evaluated after each epoch: "val_loss", "val_<metric>".
  const Tensor* validation_x = nullptr;
  const Tensor* validation_y = nullptr;
  // The same for a model of several inputs or outputs.
  const TensorMap* validation_inputs = nullptr;
  const TensorMap* validation_targets = nullptr;
  // Without validation data: the last fraction of x and y (before any
  // shuffling) is held out and validates instead, as Keras does.
  double validation_split = 0;
  // 0: silent; 1: Keras's progress bar.
  int verbose = 1;
  std::ostream* out = nullptr;  // null: std::cout
  // Called in order at each stage (keras/callbacks.h).
  std::vector<std::shared_ptr<Callback>> callbacks;
  // The Estimator's hooks (training/hooks.h), around every step after the
  // callbacks' OnBatchEnd: Fit runs the same training loop as
  // Estimator::Train. StepResult::global_step counts this Fit's steps from
  // 1; a hook's stop request ends Fit after the epoch's validation.
  HookList hooks;
};

// An epoch's (or a batch's) values: "loss", metrics, "val_...".
using Logs = std::map<std::string, double>;

// Keras's Callback: hooks around training. An error stops Fit and is
// returned by it; model->set_stop_training(true) ends it after the epoch.
class Callback {
 public:
  virtual ~Callback() = default;
  virtual absl::Status OnTrainBegin(Model* model) { return absl::OkStatus(); }
  virtual absl::Status OnEpochBegin(Model* model, int epoch) { return absl::OkStatus(); }
  // `batch` counts from 0 in the epoch; logs hold the batch's values.
  virtual absl::Status OnBatchEnd(Model* model, int64_t batch, const Logs& logs) {
    return absl::OkStatus();
  }
  virtual absl::Status OnEpochEnd(Model* model, int epoch, const Logs& logs) {
    return absl::OkStatus();
  }
  // Whether it writes files (checkpoints, logs): across processes only
  // rank 0 runs such callbacks.
  virtual bool WritesFiles() const { return false; }
  virtual absl::Status OnTrainEnd(Model* model) { return absl::OkStatus(); }
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
  // TF's CrossShardOptimizer reduction: kMean (its default) scales each
  // replica's loss by 1 / N, so the step is the unreplicated one; kSum
  // adds the replicas' losses and gradients unscaled (N times the step).
  // Others are refused.
  LossReduction loss_reduction = LossReduction::kMean;
  // Under mpirun (a distribute::Cluster of several processes), Fit trains
  // the replicas of every process as one model, as Horovod does: the
  // weights start from rank 0's, each process trains on its part of every
  // batch (Fit of tensors: every process holds all the data and takes its
  // rows of each batch, so batch_size is the cluster's; Fit of a dataset:
  // each process's own batches, which it shards itself, until the first
  // dataset ends), gradients are summed over the processes, the logs and
  // the progress bar are the cluster's, and rank 0 alone prints and runs
  // the callbacks that write files. The result equals one process training
  // on the whole batches. Evaluate and Predict run on each process alone
  // (the weights are the same everywhere). false: each process trains
  // alone.
  bool across_processes = true;
};

// How Compile applies losses and metrics to a model of several outputs,
// by output name (the names of the layers giving them, Model::output_names).
struct CompileOptions {
  // The loss of each output; "" names the loss of every output not named.
  std::map<std::string, std::string> loss;
  // The metrics of each output; "" for every output not named.
  std::map<std::string, std::vector<std::string>> metrics;
  // Each output's loss is multiplied by its weight (default 1) in the total.
  std::map<std::string, double> loss_weights;
  // Replayed steps for the model's session (runtime/step_replay.h): Fit's
  // steps recorded once and replayed on a device that can (a GPU). Off by
  // default.
  StepReplayOptions replay;
};

// A Keras model of layers: the functional form, a graph of layer calls
// from Inputs to outputs (keras/layer.h), of which Sequential is the chain.
class Model {
 public:
  // The layers that lead from `inputs` to `outputs`. Its mistakes (an
  // output that depends on a tensor not among the inputs, a layer given
  // the wrong number of inputs, two inputs of one name) are status() and
  // every method's error.
  Model(std::vector<KerasTensor> inputs, std::vector<KerasTensor> outputs,
        std::string name = "model");
  Model(const KerasTensor& input, const KerasTensor& output, std::string name = "model")
      : Model(std::vector<KerasTensor>{input}, std::vector<KerasTensor>{output}, std::move(name)) {}
  virtual ~Model();
  // Copies are models of their own: the same layers, settings and built
  // graph (its weights shared until either rebuilds).
  Model(const Model& other);
  Model& operator=(const Model& other);
  Model(Model&& other) noexcept;
  Model& operator=(Model&& other) noexcept;

  absl::Status status() const;
  // The feeds' names: the Inputs' (Sequential: "<first layer>_input"), and
  // the outputs' (their layers' names) that targets, losses and
  // predictions are keyed by.
  std::vector<std::string> input_names() const;
  std::vector<std::string> output_names() const;

  // InvalidArgument for an unknown loss or metric, an output without a
  // loss, or no optimizer. A built model keeps its weights (the optimizer
  // starts afresh), as in Keras. A loss or metrics given as one name apply
  // to every output. The logs (History, callbacks, Evaluate) hold "loss"
  // (the weighted sum, plus regularization) and each metric by name; with
  // several outputs "<output>_loss" and "<output>_<metric>" instead.
  absl::Status Compile(std::shared_ptr<train::Optimizer> optimizer, const std::string& loss,
                       std::vector<std::string> metrics = {});
  absl::Status Compile(std::shared_ptr<train::Optimizer> optimizer, CompileOptions options);
  // With a Keras optimizer, whose learning rate can change (see Optimizer).
  absl::Status Compile(Optimizer optimizer, const std::string& loss,
                       std::vector<std::string> metrics = {});
  absl::Status Compile(Optimizer optimizer, CompileOptions options);

  // The learning rate of a model compiled with a keras::Optimizer;
  // FailedPrecondition for one compiled with a train::Optimizer (its rate is
  // part of it). Setting it before training sets where training starts.
  absl::StatusOr<double> GetLearningRate();
  absl::Status SetLearningRate(double learning_rate);

  // A model of one input and one output: x [N, input_shape...]; y [N]
  // integer labels or [N, outputs...].
  absl::StatusOr<History> Fit(const Tensor& x, const Tensor& y, const FitOptions& options = {});
  // Any model: x by input name, y by output name.
  absl::StatusOr<History> Fit(const TensorMap& x, const TensorMap& y,
                              const FitOptions& options = {});
  // From a dataset whose elements are batches: (x, y), or for several
  // inputs and outputs every input then every target, in the order of
  // input_names() and output_names() (e.g. FromTensorSlices(...).Batch(128)),
  // one pass per epoch; the progress bar counts steps ("12/Unknown").
  absl::StatusOr<History> Fit(const data::Dataset& dataset, const FitOptions& options = {});
  // "loss" and each metric, means over every example.
  absl::StatusOr<Logs> Evaluate(const Tensor& x, const Tensor& y, int64_t batch_size = 32);
  absl::StatusOr<Logs> Evaluate(const TensorMap& x, const TensorMap& y, int64_t batch_size = 32);
  // Over a dataset of batches as Fit takes them: the means over every
  // example it holds.
  absl::StatusOr<Logs> Evaluate(const data::Dataset& dataset);
  // The outputs for every row of x, in order (the last partial batch too).
  absl::StatusOr<Tensor> Predict(const Tensor& x, int64_t batch_size = 32);
  absl::StatusOr<TensorMap> Predict(const TensorMap& x, int64_t batch_size = 32);
  // Over a dataset of batches of the inputs (or of inputs and targets, the
  // targets ignored): every output's rows, batch after batch.
  absl::StatusOr<TensorMap> Predict(const data::Dataset& dataset);
  // One training step on the whole of x and y: its logs.
  absl::StatusOr<Logs> TrainOnBatch(const Tensor& x, const Tensor& y);
  absl::StatusOr<Logs> TrainOnBatch(const TensorMap& x, const TensorMap& y);
  // Predict in one batch.
  absl::StatusOr<Tensor> PredictOnBatch(const Tensor& x);
  absl::StatusOr<TensorMap> PredictOnBatch(const TensorMap& x);

  // Keras's summary table: layer (type), output shape, param # and, unless
  // the model is a chain, the layers each is connected to; then totals.
  absl::StatusOr<std::string> Summary();

  // The model as a model_fn (TF's model_to_estimator). Its features are
  // keyed by input name, its labels and predictions by output name, plus
  // "<output>/logits" after a softmax or sigmoid; a Sequential's are "x",
  // "y", "output" and "logits". TRAIN minimizes with the compiled optimizer
  // wrapped in TowerOptimizer, so ReplicateModelFn can replicate it. The
  // model must be compiled.
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

  // Keras's model.save. kKeras: the directory `dir` (made if missing) gets
  // "model.pbtxt", the architecture (keras/model_config.proto: inputs,
  // layers with their configs, calls, outputs) and the compile settings
  // when compiled with a keras::Optimizer (Keras saves none for a TF
  // optimizer either; its current learning rate included), and "weights",
  // the layers' weights (SaveWeights). The optimizer's slots are not saved.
  // kSavedModel (TF's save_format="tf"): `dir`, which must not exist or be
  // empty (AlreadyExists otherwise), becomes a SavedModel TF Serving and
  // LoadSavedModel serve: tag "serve", the inference graph with its
  // weights in variables/, and a "serving_default" predict signature
  // taking each input by its name ("dense_input") and giving each output
  // by its layer's name ("dense_1"), as TF's Keras export; model.pbtxt goes
  // to assets.extra/, so LoadModel reads the directory back too. Written
  // in a temporary directory renamed into place.
  // FailedPrecondition for a layer without a config (Layer::config()).
  enum class SaveFormat { kKeras, kSavedModel };
  absl::Status Save(const std::string& dir, SaveFormat format = SaveFormat::kKeras);

  // The graph-level seed (TF's tf.set_random_seed) of the model's graph, so
  // that its initial weights and dropout masks are the same run after run;
  // without one they differ. FailedPrecondition once the model is built.
  absl::Status SetRandomSeed(int64_t seed);

  // Set by a callback (EarlyStopping) to end Fit after the current epoch.
  void set_stop_training(bool stop);
  bool stop_training() const;

  // The graph built so far (by Fit, Evaluate, Predict or Summary).
  // FailedPrecondition before any.
  absl::StatusOr<GraphDef> ExportGraphDef() const;

  const std::string& name() const;
  int replicas() const;

 protected:
  // A model without layers yet (Sequential).
  explicit Model(std::string name);
  // The model's state and what its methods share (keras/model_internal.h).
  internal::ModelImpl& impl() { return *impl_; }
  const internal::ModelImpl& impl() const { return *impl_; }

 private:
  friend Model ReplicatedModel(const Model& model, const ReplicationOptions& options);
  std::unique_ptr<internal::ModelImpl> impl_;
};

// Keras's Sequential: one input, the layers in a chain. Its feeds are
// named "<first layer>_input" and "<last layer>_target"; its model_fn takes
// "x" and "y" (see ToModelFn).
class Sequential : public Model {
 public:
  // `input_shape` without the batch dimension.
  Sequential(std::vector<int64_t> input_shape, std::vector<Layer> layers,
             std::string name = "sequential", DataType dtype = DT_FLOAT);

  // Appends a layer. FailedPrecondition once built.
  absl::Status Add(Layer layer);
};

// Keras's load_model: the model Model::Save wrote in `dir` (in either
// format), with its weights, compiled as it was (when it was, with a
// keras::Optimizer).
// NotFound without the files; InvalidArgument naming the file for a config
// that does not parse or describes no valid model; the weights' errors.
absl::StatusOr<Model> LoadModel(const std::string& dir);

// The model with `options.replicas` replicas (TF's tpu_model): a copy that
// builds its own graph, starting from `model`'s weights when it has any
// (as tpu_model copies them). replicas = 1 is the plain model. Replica i
// takes its shard of every input and target from its own placeholder,
// "infeed-enqueue-<feed name>-<i>" on its device, as tpu_model's.
Model ReplicatedModel(const Model& model, const ReplicationOptions& options);

}  // namespace keras
}  // namespace towerflow

#endif  // TOWERFLOW_KERAS_MODEL_H_
