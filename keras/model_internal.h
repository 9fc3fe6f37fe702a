// keras::Model's private parts, shared by the files that implement it:
// the layer graph (topology.cc), the compile settings, ModelImpl (the
// model's state, its built graph and session, and the work of its methods;
// keras/model.h keeps only what users call), and helpers on tensors' rows.
// Private to //keras.
#ifndef TOWERFLOW_KERAS_MODEL_INTERNAL_H_
#define TOWERFLOW_KERAS_MODEL_INTERNAL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "estimator/mixed_precision.h"
#include "keras/compile_internal.h"
#include "keras/model.h"
#include "runtime/client_session.h"
#include "training/loop.h"

namespace towerflow {
namespace keras {
namespace internal {

// The model's layers and how they connect. Value v is input v for v <
// inputs.size(), else the output of calls[v - inputs.size()].
struct ModelTopology {
  struct Feed {
    std::string name;  // the placeholder's
    std::vector<int64_t> shape;
    DataType dtype = DT_FLOAT;
    std::string key;  // the model_fn's feature
  };
  struct Call {
    size_t layer;
    std::vector<size_t> inputs;  // values
    int node_index = 0;          // the layer's how-manieth call
  };
  struct Out {
    size_t value;
    std::string name;  // the layer's
    std::string label_key;
    std::string prediction_key;
    std::string logits_key;
  };
  std::vector<Feed> inputs;
  std::vector<Layer> layers;
  std::vector<std::string> layer_names;
  std::vector<Call> calls;
  std::vector<Out> outputs;
  bool sequential = false;
  absl::Status status;

  // The layer giving value v; -1 for an input.
  int LayerOf(size_t v) const {
    return v < inputs.size() ? -1 : static_cast<int>(calls[v - inputs.size()].layer);
  }
  // Keras's name of value v's producer ("dense_1", "input_1").
  const std::string& ProducerName(size_t v) const {
    return v < inputs.size() ? inputs[v].name : layer_names[calls[v - inputs.size()].layer];
  }
};

struct CompiledModel {
  // The optimizer, or the Keras optimizer that makes it on a learning-rate
  // variable when the training graph is built.
  std::shared_ptr<train::Optimizer> optimizer;
  std::optional<Optimizer> keras_optimizer;
  // Per output, in the topology's order.
  struct PerOutput {
    std::string loss_name;
    LossKind loss;
    double weight = 1;
    std::vector<std::string> metrics;
  };
  std::vector<PerOutput> outputs;
  // The logs after "loss", as RunStep fetches them.
  std::vector<std::string> log_names;
  StepReplayOptions replay;  // CompileOptions::replay
  // The global policy's when the model was compiled (keras/mixed_precision.h).
  Precision precision = Precision::kFloat32;
};

// The model's PREDICT model_fn with Keras's serving signature: one
// "serving_default" predict output of each model output by its name
// (TF's keras export), no logits.
ModelFn ServingModelFn(std::shared_ptr<const ModelTopology> topology);

inline constexpr char kNotCompiled[] =
    "You must compile your model before training/testing. Use `model.compile(optimizer, loss)`.";

// `shape` with `rows` as its first dimension.
TensorShape WithRows(const TensorShape& shape, int64_t rows);

// Floating or integer.
bool IsNumeric(DataType t);

// The bytes of one row (along dimension 0) of `t`.
size_t RowBytes(const Tensor& t);

// Rows `order[begin, end)` of `t`.
Tensor GatherRows(const Tensor& t, const std::vector<int64_t>& order, int64_t begin, int64_t end);

// Rows [begin, end) of `t`.
Tensor SliceRows(const Tensor& t, int64_t begin, int64_t end);

// Where shard i of a batch of `rows` starts (i = 0..n; [n] = rows): the
// first rows % n shards have one row more, as ReplicateModelFn splits.
std::vector<int64_t> ShardStarts(int64_t rows, int n);

// Keras's "(None, 28, 28, 1)" of a batch shape.
std::string ShapeTuple(const PartialTensorShape& shape);

// 0, 1, ..., n - 1.
std::vector<int64_t> Identity(int64_t n);

// "(None, 4)" of an input shape without its batch dimension.
std::string ShapeString(const std::vector<int64_t>& shape);

// keras::Model's state and the work of its methods: Model forwards each
// public method to the one of the same name here, and the files that
// implement the model (model.cc, fit.cc, save.cc, summary.cc, topology.cc)
// define them. A copy of a Model copies this.
class ModelImpl {
 public:
  ModelImpl(Model* self, std::string name) : self_(self), name_(std::move(name)) {}

  // Model's methods (keras/model.h says what each does).
  absl::Status status() const;
  std::vector<std::string> input_names() const;
  std::vector<std::string> output_names() const;
  absl::Status Compile(std::shared_ptr<train::Optimizer> optimizer, const std::string& loss,
                       std::vector<std::string> metrics);
  absl::Status Compile(std::shared_ptr<train::Optimizer> optimizer, CompileOptions options);
  absl::Status Compile(Optimizer optimizer, const std::string& loss,
                       std::vector<std::string> metrics);
  absl::Status Compile(Optimizer optimizer, CompileOptions options);
  absl::StatusOr<double> GetLearningRate();
  absl::Status SetLearningRate(double learning_rate);
  absl::StatusOr<History> Fit(const Tensor& x, const Tensor& y, const FitOptions& options);
  absl::StatusOr<History> Fit(const TensorMap& x, const TensorMap& y, const FitOptions& options);
  absl::StatusOr<History> Fit(const data::Dataset& dataset, const FitOptions& options);
  absl::StatusOr<Logs> Evaluate(const Tensor& x, const Tensor& y, int64_t batch_size);
  absl::StatusOr<Logs> Evaluate(const TensorMap& x, const TensorMap& y, int64_t batch_size);
  absl::StatusOr<Logs> Evaluate(const data::Dataset& dataset);
  absl::StatusOr<Tensor> Predict(const Tensor& x, int64_t batch_size);
  absl::StatusOr<TensorMap> Predict(const TensorMap& x, int64_t batch_size);
  absl::StatusOr<TensorMap> Predict(const data::Dataset& dataset);
  absl::StatusOr<Logs> TrainOnBatch(const Tensor& x, const Tensor& y);
  absl::StatusOr<Logs> TrainOnBatch(const TensorMap& x, const TensorMap& y);
  absl::StatusOr<Tensor> PredictOnBatch(const Tensor& x);
  absl::StatusOr<TensorMap> PredictOnBatch(const TensorMap& x);
  absl::StatusOr<std::string> Summary();
  absl::StatusOr<ModelFn> ToModelFn() const;
  absl::StatusOr<std::vector<NamedTensor>> GetWeights();
  absl::Status SetWeights(const std::vector<NamedTensor>& weights);
  absl::Status SaveWeights(const std::string& path);
  absl::Status LoadWeights(const std::string& path);
  absl::Status Save(const std::string& dir, Model::SaveFormat format);
  absl::Status SetRandomSeed(int64_t seed);
  absl::StatusOr<GraphDef> ExportGraphDef() const;

  struct Built;
  // A step's results for Fit, Evaluate and Predict: (step, rows, fetched).
  using StepFn =
      std::function<absl::Status(int64_t step, int64_t rows, const std::vector<Tensor>& values)>;

  // Save's model.pbtxt.
  absl::StatusOr<std::string> ConfigText();
  // Save in kSavedModel.
  absl::Status SaveSavedModel(const std::string& dir, const std::string& config_text);
  absl::Status CompileWith(std::shared_ptr<train::Optimizer> optimizer,
                           std::optional<Optimizer> keras_optimizer, const CompileOptions& options);
  // x and y as maps, for a model of one input and one output.
  absl::StatusOr<TensorMap> InputMap(const Tensor& x) const;
  absl::StatusOr<TensorMap> TargetMap(const Tensor& y) const;
  // The validation data of `options` as maps (in *x and *y when given as
  // tensors), or nulls; InvalidArgument for half of it.
  absl::Status ValidationData(const FitOptions& options, TensorMap* x, TensorMap* y,
                              const TensorMap** validation_x, const TensorMap** validation_y) const;
  // A dataset element as a batch: the inputs, then the targets (or the
  // inputs alone when `targets_optional`); nothing at the end. `what`
  // names the caller in errors.
  struct Batch {
    TensorMap x;
    TensorMap y;
    int64_t rows = 0;
  };
  absl::StatusOr<std::optional<Batch>> NextBatch(data::Iterator* it, int64_t step, const char* what,
                                                 bool targets_optional = false) const;
  // Checks the inputs (and targets) of a batch; returns its rows.
  absl::StatusOr<int64_t> CheckData(const TensorMap& x, const TensorMap* y) const;
  // Builds the graph and session for targets like `y` (null: predict only).
  absl::Status Build(const TensorMap* y);
  // Whether the replicas can split a batch of `batch` rows (see the file
  // comment); CheckBatches for every batch of n rows in batches of batch_size.
  absl::Status CheckBatch(int64_t batch) const;
  absl::Status CheckBatches(int64_t n, int64_t batch_size) const;
  // Runs the initializers of the variables the session has not seen.
  absl::Status InitializeNewVariables() const;
  // The cluster the model trains across (see ReplicationOptions), or null.
  absl::StatusOr<distribute::Cluster*> TrainingCluster() const;
  // Across processes, every weight (and optimizer slot) takes rank 0's
  // value; nothing alone. REQUIRES: built_.
  absl::Status BroadcastWeights();
  // The weights of a built model. REQUIRES: built_.
  absl::StatusOr<std::vector<NamedTensor>> BuiltWeights() const;
  // Keeps the current weights (if built) for the next graph, which Build
  // assigns once it has made the weights.
  void CarryWeights();
  // The feeds of a batch: each replica's placeholders take its shard.
  ClientSession::FeedType Feeds(const TensorMap& x, const TensorMap* y) const;
  // One batch: training (loss, logs), evaluation (loss, logs) or
  // prediction (the outputs) when y is null.
  absl::StatusOr<std::vector<Tensor>> RunStep(const TensorMap& x, const TensorMap* y, bool train);
  // Evaluation (or prediction when y is null) over x (and y) in batches
  // of `batch_size`.
  absl::Status RunBatches(const TensorMap& x, const TensorMap* y, int64_t batch_size,
                          const StepFn& each);
  // Fit's epochs on the training loop (training/loop.h): callbacks, hooks,
  // progress bar (`steps` 0: unknown), validation. `epoch_batches` gives
  // an epoch's batches.
  absl::StatusOr<History> FitEpochs(
      const FitOptions& options, int64_t steps, const TensorMap* validation_x,
      const TensorMap* validation_y,
      const std::function<training::NextBatchFn(int epoch)>& epoch_batches);
  // The names of the logs after "loss", in the order RunStep fetches them.
  const std::vector<std::string>& LogNames() const;

  // The Model this is the state of (callbacks are given it).
  Model* self_;
  std::string name_;
  std::optional<int64_t> seed_;
  std::shared_ptr<const internal::CompiledModel> compiled_;
  ReplicationOptions replication_;
  std::shared_ptr<Built> built_;
  bool stop_training_ = false;
  // Weights for the next graph (see CarryWeights), or why they could not be read.
  std::vector<NamedTensor> carried_weights_;
  absl::Status carried_status_;
  // The layer graph, replaced (never changed) as a Sequential grows.
  std::shared_ptr<const ModelTopology> topology_;
  // Whether Add may still change the topology.
  bool built() const { return built_ != nullptr; }
};

struct ModelImpl::Built {
  Scope root = Scope::NewRootScope();
  std::unique_ptr<ClientSession> session;
  absl::flat_hash_set<std::string> initialized;
  int initialized_up_to = -1;  // the graph's node count when last checked
  // [input][replica] and [output][replica]: the placeholders fed (one per
  // replica when replicated, each on its replica's device).
  std::vector<std::vector<Output>> inputs;
  std::vector<std::vector<Output>> targets;
  // Per output: its replicas' targets joined (the placeholder when one).
  std::vector<Output> joined_targets;
  std::vector<internal::Outputs> predict;  // per output
  std::vector<Output> call_outputs;        // tower 0's, per call, for Summary
  // The layers' weights, read once; their assignments, made when first set.
  std::vector<Variable> weights;
  std::vector<Output> weight_reads;
  absl::flat_hash_map<std::string, std::pair<Output, Operation>> assigners;
  bool trained = false;
  Output train_loss;
  Operation train_op;
  std::vector<Output> train_logs;  // LogNames()
  // With a keras::Optimizer: the learning-rate variable and its setter.
  Variable learning_rate;
  Output learning_rate_value;
  Output learning_rate_feed;
  Operation set_learning_rate;
  Output eval_loss;
  std::vector<Output> eval_logs;
  // Across processes (ReplicationOptions::across_processes): the cluster,
  // and the broadcast of the weights with the graph's node count when it
  // was made.
  distribute::Cluster* cluster = nullptr;
  Operation broadcast;
  int broadcast_up_to = -1;
};

}  // namespace internal
}  // namespace keras
}  // namespace towerflow

#endif  // TOWERFLOW_KERAS_MODEL_INTERNAL_H_
