// keras::Model's private parts, shared by the files that implement it:
// the layer graph (topology.cc), the compile settings, the built graph and
// session, and helpers on tensors' rows. Private to //keras.
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

}  // namespace internal

struct Model::Built {
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

}  // namespace keras
}  // namespace towerflow

#endif  // TOWERFLOW_KERAS_MODEL_INTERNAL_H_
