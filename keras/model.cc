#include "keras/model.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <numeric>
#include <random>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/file_io.h"
#include "core/proto_io.h"
#include "core/status_macros.h"
#include "data/dataset.h"
#include "estimator/replicate_model_fn.h"
#include "estimator/tower_optimizer.h"
#include "keras/compile_internal.h"
#include "keras/model_config.pb.h"
#include "keras/progbar.h"
#include "layers/losses.h"
#include "layers/regularizers.h"
#include "ops/initializers.h"
#include "ops/ops.h"
#include "ops/variables.h"
#include "runtime/client_session.h"
#include "train/optimizers.h"

namespace towerflow {
namespace keras {

using internal::LossKind;
using internal::Outputs;
using Topology = internal::ModelTopology;
using Compiled = internal::CompiledModel;

// ---- Optimizers ----------------------------------------------------------------

Optimizer SGD(double learning_rate, double momentum, bool nesterov) {
  return {"SGD",
          learning_rate,
          [momentum, nesterov](::towerflow::Input lr) -> std::shared_ptr<train::Optimizer> {
            if (momentum == 0) return std::make_shared<train::GradientDescentOptimizer>(lr);
            return std::make_shared<train::MomentumOptimizer>(lr, momentum, nesterov);
          },
          {{"momentum", momentum}, {"nesterov", nesterov ? 1.0 : 0.0}}};
}

Optimizer Adam(double learning_rate, double beta_1, double beta_2, double epsilon) {
  return {"Adam",
          learning_rate,
          [beta_1, beta_2, epsilon](::towerflow::Input lr) {
            return std::make_shared<train::AdamOptimizer>(lr, beta_1, beta_2, epsilon);
          },
          {{"beta_1", beta_1}, {"beta_2", beta_2}, {"epsilon", epsilon}}};
}

Optimizer RMSprop(double learning_rate, double rho, double epsilon) {
  return {"RMSprop",
          learning_rate,
          [rho, epsilon](::towerflow::Input lr) {
            return std::make_shared<train::RMSPropOptimizer>(lr, rho, 0.0, epsilon);
          },
          {{"rho", rho}, {"epsilon", epsilon}}};
}

Optimizer Adagrad(double learning_rate, double initial_accumulator_value) {
  return {"Adagrad",
          learning_rate,
          [initial_accumulator_value](::towerflow::Input lr) {
            return std::make_shared<train::AdagradOptimizer>(lr, initial_accumulator_value);
          },
          {{"initial_accumulator_value", initial_accumulator_value}}};
}

absl::StatusOr<Optimizer> OptimizerFromConfig(const std::string& name, double learning_rate,
                                              const std::map<std::string, double>& config) {
  // The defaults, overridden by `config`.
  std::map<std::string, double> values;
  if (name == "SGD") values = SGD().config;
  if (name == "Adam") values = Adam().config;
  if (name == "RMSprop") values = RMSprop().config;
  if (name == "Adagrad") values = Adagrad().config;
  if (values.empty()) return absl::InvalidArgumentError(absl::StrCat("Unknown optimizer: ", name));
  for (const auto& [key, value] : config) {
    if (values.count(key) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Optimizer ", name, ": unknown hyper-parameter ", key));
    }
    if (!std::isfinite(value)) {
      return absl::InvalidArgumentError(absl::StrCat("Optimizer ", name, ": ", key, " is ", value));
    }
    values[key] = value;
  }
  if (name == "SGD") return SGD(learning_rate, values["momentum"], values["nesterov"] != 0);
  if (name == "Adam") {
    return Adam(learning_rate, values["beta_1"], values["beta_2"], values["epsilon"]);
  }
  if (name == "RMSprop") return RMSprop(learning_rate, values["rho"], values["epsilon"]);
  return Adagrad(learning_rate, values["initial_accumulator_value"]);
}

// ---- Helpers ----------------------------------------------------------------------

namespace {

// `shape` with `rows` as its first dimension.
TensorShape WithRows(const TensorShape& shape, int64_t rows) {
  std::vector<int64_t> dims(shape.dim_sizes().begin(), shape.dim_sizes().end());
  dims[0] = rows;
  return TensorShape(absl::MakeConstSpan(dims));
}

bool IsNumeric(DataType t) { return DataTypeIsFloating(t) || DataTypeIsInteger(t); }

size_t RowBytes(const Tensor& t) {
  const int64_t rows = t.dim_size(0);
  return rows > 0 ? t.TotalBytes() / rows : 0;
}

// Rows `order[begin, end)` of `t`.
Tensor GatherRows(const Tensor& t, const std::vector<int64_t>& order, int64_t begin, int64_t end) {
  const size_t row_bytes = RowBytes(t);
  Tensor out(t.dtype(), WithRows(t.shape(), end - begin));
  const char* src = static_cast<const char*>(t.raw_data());
  char* dst = static_cast<char*>(out.raw_data());
  for (int64_t i = begin; i < end; ++i) {
    std::memcpy(dst + (i - begin) * row_bytes, src + order[i] * row_bytes, row_bytes);
  }
  return out;
}

// Rows [begin, end) of `t`.
Tensor SliceRows(const Tensor& t, int64_t begin, int64_t end) {
  const size_t row_bytes = RowBytes(t);
  Tensor out(t.dtype(), WithRows(t.shape(), end - begin));
  if (end > begin) {
    std::memcpy(out.raw_data(), static_cast<const char*>(t.raw_data()) + begin * row_bytes,
                (end - begin) * row_bytes);
  }
  return out;
}

// Where shard i of a batch of `rows` starts (i = 0..n; [n] = rows): the
// first rows % n shards have one row more, as ReplicateModelFn splits.
std::vector<int64_t> ShardStarts(int64_t rows, int n) {
  std::vector<int64_t> starts = {0};
  for (int i = 0; i < n; ++i) starts.push_back(starts.back() + rows / n + (i < rows % n ? 1 : 0));
  return starts;
}

std::string ShapeTuple(const PartialTensorShape& shape) {
  if (shape.unknown_rank()) return "?";
  std::vector<std::string> dims;
  for (int d = 0; d < shape.dims(); ++d) {
    dims.push_back(d == 0 || shape.dim_size(d) < 0 ? "None" : absl::StrCat(shape.dim_size(d)));
  }
  return dims.size() == 1 ? absl::StrCat("(", dims[0], ",)")
                          : absl::StrCat("(", absl::StrJoin(dims, ", "), ")");
}

std::vector<int64_t> Identity(int64_t n) {
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  return order;
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::vector<std::string> dims = {"None"};
  for (int64_t d : shape) dims.push_back(d < 0 ? "None" : absl::StrCat(d));
  return absl::StrCat("(", absl::StrJoin(dims, ", "), ")");
}

}  // namespace

// ---- The layer graph ------------------------------------------------------------------

// The model's layers and how they connect. Value v is input v for v <
// inputs.size(), else the output of calls[v - inputs.size()].
struct internal::ModelTopology {
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

namespace {

// The first of `base`, `base_1`, `base_2`, ... not in `taken`, taken now.
std::string UniqueName(const std::string& base, absl::flat_hash_set<std::string>* taken,
                       int first_suffix = 0) {
  std::string name = first_suffix == 0 ? base : absl::StrCat(base, "_", first_suffix);
  for (int i = first_suffix + 1; taken->contains(name); ++i) name = absl::StrCat(base, "_", i);
  taken->insert(name);
  return name;
}

// The functional model's topology: the calls that lead from `inputs` to
// `outputs`, in an order where every call follows its inputs.
absl::Status MapGraph(const std::vector<KerasTensor>& inputs,
                      const std::vector<KerasTensor>& outputs, Topology* t) {
  if (inputs.empty() || outputs.empty()) {
    return absl::InvalidArgumentError("A model needs at least one input and one output");
  }
  absl::flat_hash_map<const internal::SymbolicNode*, size_t> value_of;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const internal::SymbolicNode* n = inputs[i].node();
    if (n == nullptr || !n->is_input) {
      return absl::InvalidArgumentError(
          absl::StrCat("Model inputs must come from keras::Input; input ", i, " is ",
                       n == nullptr ? "an empty KerasTensor" : "the output of a layer"));
    }
    if (!value_of.emplace(n, i).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("The same Input is passed twice among the model's inputs (", i, ")"));
    }
    t->inputs.push_back({n->input_name, n->shape, n->dtype, ""});
  }
  // Iterative post-order from each output: a call after its inputs.
  absl::flat_hash_set<const internal::SymbolicNode*> visiting;
  for (const KerasTensor& output : outputs) {
    if (!output.valid())
      return absl::InvalidArgumentError("A model output is an empty KerasTensor");
    std::vector<std::pair<const internal::SymbolicNode*, size_t>> stack = {{output.node(), 0}};
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (value_of.contains(node)) {
        stack.pop_back();
        continue;
      }
      if (node->is_input) {
        return absl::InvalidArgumentError(
            absl::StrCat("Graph disconnected: cannot obtain value for Input \"",
                         node->input_name.empty() ? "(unnamed)" : node->input_name,
                         "\": it is not among the model's inputs"));
      }
      if (next == 0) {
        if (!visiting.insert(node).second) {
          return absl::InvalidArgumentError("The layer graph has a cycle");
        }
        const Layer& layer = *node->layer;
        const int n = static_cast<int>(node->inputs.size());
        if ((layer.unary() && n != 1) || n < layer.min_inputs()) {
          return absl::InvalidArgumentError(
              absl::StrCat("Layer ", layer.name().empty() ? layer.base_name() : layer.name(), " (",
                           layer.class_name(), ") takes ",
                           layer.unary() ? "one input"
                                         : absl::StrCat("at least ", layer.min_inputs(), " inputs"),
                           ", but is called on ", n));
        }
      }
      if (next < node->inputs.size()) {
        const KerasTensor& in = node->inputs[next++];
        if (!in.valid()) {
          return absl::InvalidArgumentError(absl::StrCat("Layer ", node->layer->class_name(),
                                                         " is called on an empty KerasTensor"));
        }
        stack.push_back({in.node(), 0});
        continue;
      }
      // Every input has a value: the call's turn.
      Topology::Call call;
      size_t layer = 0;
      while (layer < t->layers.size() && !t->layers[layer].SameAs(*node->layer)) ++layer;
      if (layer == t->layers.size()) t->layers.push_back(*node->layer);
      call.layer = layer;
      for (const KerasTensor& in : node->inputs) call.inputs.push_back(value_of.at(in.node()));
      for (const Topology::Call& c : t->calls) call.node_index += c.layer == layer ? 1 : 0;
      value_of[node] = t->inputs.size() + t->calls.size();
      t->calls.push_back(std::move(call));
      visiting.erase(node);
      stack.pop_back();
    }
  }
  // Names: the given ones, then Keras's defaults in order.
  absl::flat_hash_set<std::string> taken;
  for (const auto& feed : t->inputs) {
    if (!feed.name.empty() && !taken.insert(feed.name).second) {
      return absl::InvalidArgumentError(absl::StrCat("Two inputs are named ", feed.name));
    }
  }
  for (const Layer& layer : t->layers) {
    if (!layer.name().empty() && !taken.insert(layer.name()).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          "All layer names should be unique: ", layer.name(), " names two layers or inputs"));
    }
  }
  for (auto& feed : t->inputs) {
    if (feed.name.empty()) feed.name = UniqueName("input", &taken, 1);
    feed.key = feed.name;
  }
  for (const Layer& layer : t->layers) {
    t->layer_names.push_back(layer.name().empty() ? UniqueName(layer.base_name(), &taken)
                                                  : layer.name());
  }
  absl::flat_hash_set<std::string> output_names;
  for (const KerasTensor& output : outputs) {
    Topology::Out out;
    out.value = value_of.at(output.node());
    out.name = t->ProducerName(out.value);
    if (!output_names.insert(out.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("Two of the model's outputs come from ", out.name,
                       "; outputs are named by their layers, so each needs its own"));
    }
    out.label_key = out.prediction_key = out.name;
    out.logits_key = out.name + "/logits";
    t->outputs.push_back(std::move(out));
  }
  return absl::OkStatus();
}

}  // namespace

Model::Model(std::string name) : name_(std::move(name)) {}

Model::Model(std::vector<KerasTensor> inputs, std::vector<KerasTensor> outputs, std::string name)
    : name_(std::move(name)) {
  auto topology = std::make_shared<Topology>();
  topology->status = MapGraph(inputs, outputs, topology.get());
  topology_ = std::move(topology);
}

absl::Status Model::status() const { return topology_->status; }

std::vector<std::string> Model::input_names() const {
  std::vector<std::string> names;
  for (const auto& feed : topology_->inputs) names.push_back(feed.name);
  return names;
}

std::vector<std::string> Model::output_names() const {
  std::vector<std::string> names;
  for (const auto& out : topology_->outputs) names.push_back(out.name);
  return names;
}

Sequential::Sequential(std::vector<int64_t> input_shape, std::vector<Layer> layers,
                       std::string name, DataType dtype)
    : Model(std::move(name)) {
  auto topology = std::make_shared<Topology>();
  topology->sequential = true;
  topology->inputs.push_back({"", std::move(input_shape), dtype, "x"});
  topology_ = std::move(topology);
  for (Layer& layer : layers) Add(std::move(layer)).IgnoreError();  // not built yet
}

absl::Status Sequential::Add(Layer layer) {
  if (built()) return absl::FailedPreconditionError("Sequential::Add: the model is already built");
  auto t = std::make_shared<Topology>(*topology_);
  size_t index = 0;
  while (index < t->layers.size() && !t->layers[index].SameAs(layer)) ++index;
  if (index == t->layers.size()) {
    // Keras's naming: the class's base name, then _1, _2 ... in this model.
    absl::flat_hash_set<std::string> taken(t->layer_names.begin(), t->layer_names.end());
    t->layer_names.push_back(layer.name().empty() ? UniqueName(layer.base_name(), &taken)
                                                  : layer.name());
    t->layers.push_back(std::move(layer));
  }
  Topology::Call call;
  call.layer = index;
  call.inputs = {t->inputs.size() + t->calls.size() - 1};
  for (const Topology::Call& c : t->calls) call.node_index += c.layer == index ? 1 : 0;
  t->calls.push_back(std::move(call));
  if (t->inputs[0].name.empty()) t->inputs[0].name = t->layer_names[index] + "_input";
  const size_t last = t->inputs.size() + t->calls.size() - 1;
  t->outputs = {{last, t->layer_names[index], "y", "output", "logits"}};
  topology_ = std::move(t);
  return absl::OkStatus();
}

// ---- Compiling ------------------------------------------------------------------------

struct internal::CompiledModel {
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
};

absl::Status Model::Compile(std::shared_ptr<train::Optimizer> optimizer, const std::string& loss,
                            std::vector<std::string> metrics) {
  return CompileWith(std::move(optimizer), std::nullopt,
                     {.loss = {{"", loss}}, .metrics = {{"", std::move(metrics)}}});
}

absl::Status Model::Compile(std::shared_ptr<train::Optimizer> optimizer, CompileOptions options) {
  return CompileWith(std::move(optimizer), std::nullopt, options);
}

absl::Status Model::Compile(Optimizer optimizer, const std::string& loss,
                            std::vector<std::string> metrics) {
  return Compile(std::move(optimizer),
                 CompileOptions{.loss = {{"", loss}}, .metrics = {{"", std::move(metrics)}}});
}

absl::Status Model::Compile(Optimizer optimizer, CompileOptions options) {
  if (!optimizer.make) return absl::InvalidArgumentError("Compile: the optimizer makes nothing");
  if (!(optimizer.learning_rate >= 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Compile: learning rate ", optimizer.learning_rate));
  }
  // The training optimizer for ToModelFn, on a constant rate.
  std::shared_ptr<train::Optimizer> fixed = optimizer.make(optimizer.learning_rate);
  return CompileWith(std::move(fixed), std::move(optimizer), options);
}

absl::Status Model::CompileWith(std::shared_ptr<train::Optimizer> optimizer,
                                std::optional<Optimizer> keras_optimizer,
                                const CompileOptions& options) {
  TW_RETURN_IF_ERROR(status());
  if (optimizer == nullptr) return absl::InvalidArgumentError("Compile: no optimizer");
  const Topology& t = *topology_;
  // Every key names an output ("" all others).
  const auto check_keys = [&t](const auto& map, const char* what) -> absl::Status {
    for (const auto& [key, value] : map) {
      const bool known = key.empty() || std::any_of(t.outputs.begin(), t.outputs.end(),
                                                    [&](const auto& o) { return o.name == key; });
      if (!known) {
        std::vector<std::string> names;
        for (const auto& o : t.outputs) names.push_back(o.name);
        return absl::InvalidArgumentError(absl::StrCat(
            "Unknown entry in ", what, " dictionary: \"", key,
            "\". Only expected the following keys: [", absl::StrJoin(names, ", "), "]"));
      }
    }
    return absl::OkStatus();
  };
  TW_RETURN_IF_ERROR(check_keys(options.loss, "loss"));
  TW_RETURN_IF_ERROR(check_keys(options.metrics, "metrics"));
  TW_RETURN_IF_ERROR(check_keys(options.loss_weights, "loss_weights"));
  const auto find = [](const auto& map, const std::string& name) {
    auto it = map.find(name);
    return it != map.end() ? it : map.find("");
  };
  auto compiled = std::make_shared<Compiled>();
  compiled->optimizer = std::move(optimizer);
  compiled->keras_optimizer = std::move(keras_optimizer);
  const bool several = t.outputs.size() > 1;
  std::vector<std::string> metric_logs;
  for (const Topology::Out& out : t.outputs) {
    Compiled::PerOutput per;
    auto loss = find(options.loss, out.name);
    if (loss == options.loss.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Compile: output ", out.name, " has no loss (CompileOptions::loss)"));
    }
    per.loss_name = loss->second;
    TW_ASSIGN_OR_RETURN(per.loss, internal::ParseLoss(loss->second));
    if (auto w = options.loss_weights.find(out.name); w != options.loss_weights.end()) {
      per.weight = w->second;
    }
    if (!std::isfinite(per.weight)) {
      return absl::InvalidArgumentError(
          absl::StrCat("Compile: the loss weight of ", out.name, " is ", per.weight));
    }
    if (auto m = find(options.metrics, out.name); m != options.metrics.end()) {
      per.metrics = m->second;
    }
    for (const std::string& m : per.metrics) {
      TW_RETURN_IF_ERROR(internal::CheckMetric(m));
      metric_logs.push_back(several ? absl::StrCat(out.name, "_", m) : m);
    }
    if (several) compiled->log_names.push_back(out.name + "_loss");
    compiled->outputs.push_back(std::move(per));
  }
  compiled->log_names.insert(compiled->log_names.end(), metric_logs.begin(), metric_logs.end());
  compiled_ = std::move(compiled);
  CarryWeights();
  built_.reset();  // a new graph with the new loss, the same weights
  return absl::OkStatus();
}

const std::vector<std::string>& Model::LogNames() const { return compiled_->log_names; }

namespace {

constexpr char kNotCompiled[] =
    "You must compile your model before training/testing. Use `model.compile(optimizer, loss)`.";

// The compiled losses of `outputs` against `targets`: each, and their
// weighted sum.
struct Losses {
  std::vector<Output> each;
  Output total;
};

template <typename PerOutput>
Losses CompiledLosses(const Scope& s, const std::vector<PerOutput>& per,
                      const std::vector<Topology::Out>& outs, const std::vector<Output>& targets,
                      const std::vector<Outputs>& outputs) {
  Losses losses;
  std::vector<Output> weighted;
  for (size_t o = 0; o < per.size(); ++o) {
    // One output keeps the loss directly under `s`, as Keras's graph has it.
    const Scope ls = per.size() == 1 ? s : s.NewSubScope(outs[o].name);
    Output loss = internal::BatchLoss(ls, per[o].loss, targets[o], outputs[o]);
    losses.each.push_back(loss);
    weighted.push_back(per[o].weight == 1
                           ? loss
                           : Output(ops::Mul(ls, loss, ops::Cast(ls, per[o].weight, loss.type()))));
  }
  losses.total = weighted.size() == 1 ? weighted[0] : Output(ops::AddN(s, weighted));
  if (!GetCollection(*s.graph(), GraphKeys::kRegularizationLosses).empty()) {
    losses.total = ops::AddV2(s, losses.total, GetRegularizationLoss(s));
  }
  return losses;
}

}  // namespace

namespace {

// The layers as a model_fn. Without `compiled` only PREDICT works. Tower
// 0's PREDICT build records each call's output in `record` (for Summary)
// when given.
ModelFn TopologyModelFn(std::shared_ptr<const Topology> t,
                        std::shared_ptr<train::Optimizer> optimizer,
                        std::shared_ptr<const Compiled> compiled,
                        std::shared_ptr<std::vector<Output>> record) {
  return [t, optimizer, compiled, record](const Scope& s, const FeatureMap& features,
                                          const FeatureMap& labels, ModeKeys mode,
                                          const Params& params) {
    EstimatorSpec spec(mode);
    const size_t updates_before = GetCollectionOps(*s.graph(), GraphKeys::kUpdateOps).size();
    const bool recording =
        record != nullptr && mode == ModeKeys::kPredict && params.tower_index == 0;
    std::vector<Output> values;
    for (const Topology::Feed& feed : t->inputs) {
      const auto it = features.find(feed.key);
      if (it == features.end()) {
        s.UpdateStatus(absl::InvalidArgumentError(absl::StrCat(
            "The Keras model_fn takes its input as feature \"", feed.key, "\", which is missing")));
        return spec;
      }
      values.push_back(it->second);
    }
    // A layer's later calls reuse the weights its first made.
    std::vector<bool> called(t->layers.size(), false);
    for (const Topology::Call& call : t->calls) {
      std::vector<Output> inputs;
      for (size_t v : call.inputs) inputs.push_back(values[v]);
      const Scope ls =
          called[call.layer] ? s.WithVariableScope("", VariableReuse::kReuse) : Scope(s);
      called[call.layer] = true;
      values.push_back(t->layers[call.layer].Call(ls, inputs, mode == ModeKeys::kTrain,
                                                  t->layer_names[call.layer]));
      if (recording) record->push_back(values.back());
      if (!s.ok()) return spec;
    }
    std::vector<Outputs> outputs;
    for (const Topology::Out& out : t->outputs) {
      outputs.push_back(internal::SplitLogits(values[out.value]));
      spec.predictions[out.prediction_key] = outputs.back().output;
      if (outputs.back().logits.valid()) spec.predictions[out.logits_key] = outputs.back().logits;
    }
    if (mode == ModeKeys::kPredict) return spec;
    if (compiled == nullptr) {
      s.UpdateStatus(absl::FailedPreconditionError("The model is not compiled"));
      return spec;
    }
    std::vector<Output> targets;
    for (const Topology::Out& out : t->outputs) {
      const auto it = labels.find(out.label_key);
      if (it == labels.end()) {
        s.UpdateStatus(absl::InvalidArgumentError(
            absl::StrCat("The Keras model_fn takes the targets of output ", out.name, " as \"",
                         out.label_key, "\", which is missing")));
        return spec;
      }
      targets.push_back(it->second);
    }
    spec.loss =
        CompiledLosses(s.NewSubScope("loss"), compiled->outputs, t->outputs, targets, outputs)
            .total;
    if (mode != ModeKeys::kTrain) return spec;
    Variable step = train::GetOrCreateGlobalStep(s);
    // The wrapped optimizer itself outside ReplicateModelFn.
    Operation minimize = TowerOptimizer(optimizer).Minimize(s, spec.loss, step);
    // The batch norms' moving averages update with the step.
    std::vector<Operation> deps = {minimize};
    const std::vector<Operation> updates = GetCollectionOps(*s.graph(), GraphKeys::kUpdateOps);
    deps.insert(deps.end(), updates.begin() + updates_before, updates.end());
    spec.train_op = ops::NoOp(s.WithOpName("train_op").WithControlDependencies(deps)).operation;
    return spec;
  };
}

}  // namespace

absl::Status Model::SetRandomSeed(int64_t seed) {
  if (built_ != nullptr) {
    return absl::FailedPreconditionError(
        "SetRandomSeed: the model is built; set the seed before its first Fit, Evaluate, "
        "Predict or Summary");
  }
  seed_ = seed;
  return absl::OkStatus();
}

absl::StatusOr<ModelFn> Model::ToModelFn() const {
  TW_RETURN_IF_ERROR(status());
  if (compiled_ == nullptr) return absl::FailedPreconditionError(kNotCompiled);
  return TopologyModelFn(topology_, compiled_->optimizer, compiled_, nullptr);
}

// ---- Building -------------------------------------------------------------------------

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
  std::vector<Outputs> predict;      // per output
  std::vector<Output> call_outputs;  // tower 0's, per call, for Summary
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
};

namespace {

// The logs after "loss" (Compiled::log_names) of `outputs` against
// `targets`: per-output losses with several outputs, then the metrics.
absl::StatusOr<std::vector<Output>> LogValues(const Scope& s, const Compiled& c, const Topology& t,
                                              const std::vector<Output>& targets,
                                              const std::vector<Outputs>& outputs) {
  std::vector<Output> logs;
  if (t.outputs.size() > 1) {
    const Losses losses =
        CompiledLosses(s.NewSubScope("loss"), c.outputs, t.outputs, targets, outputs);
    logs = losses.each;
  }
  for (size_t o = 0; o < t.outputs.size(); ++o) {
    const Scope ms = t.outputs.size() == 1 ? s : s.NewSubScope(t.outputs[o].name);
    for (const std::string& m : c.outputs[o].metrics) {
      TW_ASSIGN_OR_RETURN(
          Output v, internal::BatchMetric(ms, m, c.outputs[o].loss, targets[o], outputs[o].output));
      logs.push_back(v);
    }
  }
  return logs;
}

}  // namespace

absl::Status Model::Build(const TensorMap* y) {
  TW_RETURN_IF_ERROR(status());
  const Topology& t = *topology_;
  if (t.calls.empty()) return absl::FailedPreconditionError("The model has no layers");
  const int n = replication_.replicas;
  ReplicateOptions options;
  options.devices = replication_.devices;
  if (options.devices.empty()) {
    for (int i = 0; i < n; ++i) options.devices.push_back(absl::StrCat("/cpu:", i));
  }
  options.uneven_batches = replication_.uneven_batches;
  options.loss_reduction = replication_.loss_reduction;
  if (options.loss_reduction != LossReduction::kMean &&
      options.loss_reduction != LossReduction::kSum) {
    return absl::InvalidArgumentError(
        "ReplicatedModel: loss_reduction must be kMean or kSum, as CrossShardOptimizer's");
  }
  if (static_cast<int>(options.devices.size()) != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("ReplicatedModel: ", options.devices.size(), " devices for ", n, " replicas"));
  }
  TW_ASSIGN_OR_RETURN(const std::vector<std::string> devices, ReplicationDevices(options));
  auto recorded = std::make_shared<std::vector<Output>>();
  Params params;
  params.num_towers = n;
  // The model's spec for `mode`, replicated over the replicas' feeds when
  // there are several, training with `optimizer`.
  const auto build_spec =
      [&](const Scope& scope, ModeKeys mode,
          std::shared_ptr<train::Optimizer> optimizer) -> absl::StatusOr<EstimatorSpec> {
    const Built& b = *built_;
    ModelFn fn = TopologyModelFn(topology_, std::move(optimizer), compiled_, recorded);
    std::vector<FeatureMap> features(n), labels(mode == ModeKeys::kPredict ? 0 : n);
    for (int r = 0; r < n; ++r) {
      for (size_t i = 0; i < t.inputs.size(); ++i) features[r][t.inputs[i].key] = b.inputs[i][r];
      if (labels.empty()) continue;
      for (size_t o = 0; o < t.outputs.size(); ++o) {
        labels[r][t.outputs[o].label_key] = b.targets[o][r];
      }
    }
    if (n == 1) {
      return fn(scope, features[0], labels.empty() ? FeatureMap() : labels[0], mode, params);
    }
    TW_ASSIGN_OR_RETURN(ShardedModelFn sharded, ReplicateShardedModelFn(fn, options));
    return sharded(scope, features, labels, mode, params);
  };
  // A feed `name`, or replica r's "infeed-enqueue-<name>-<r>" on its device.
  const auto feeds = [&](const Scope& root, const std::string& name, DataType dtype,
                         const PartialTensorShape& shape) {
    std::vector<Output> out;
    for (int r = 0; r < n; ++r) {
      const Scope s = n == 1 ? root.WithOpName(name)
                             : root.WithOpName(absl::StrCat("infeed-enqueue-", name, "-", r))
                                   .WithDevice(devices[r]);
      out.push_back(ops::Placeholder(s, dtype, ops::Placeholder::Shape(shape)));
    }
    return out;
  };

  if (built_ == nullptr) {
    built_ = std::make_shared<Built>();
    Built& b = *built_;
    const Scope& root = b.root;
    if (seed_.has_value()) root.graph()->set_seed(*seed_);
    for (const Topology::Feed& feed : t.inputs) {
      std::vector<int64_t> dims = {-1};
      dims.insert(dims.end(), feed.shape.begin(), feed.shape.end());
      b.inputs.push_back(feeds(root, feed.name, feed.dtype, PartialTensorShape(dims)));
    }
    absl::StatusOr<EstimatorSpec> spec = build_spec(root, ModeKeys::kPredict, nullptr);
    if (spec.ok() && !root.status().ok()) spec = root.status();
    if (!spec.ok()) {
      built_.reset();
      return spec.status();
    }
    for (const Topology::Out& out : t.outputs) {
      Outputs o{spec->predictions.at(out.prediction_key), Output()};
      if (spec->predictions.count(out.logits_key)) o.logits = spec->predictions.at(out.logits_key);
      b.predict.push_back(o);
    }
    b.call_outputs = *recorded;
    b.weights = GetVariables(*root.graph());
    const Scope reads = root.NewSubScope("weights");
    for (const Variable& v : b.weights) b.weight_reads.push_back(v.value(reads));
    TW_RETURN_IF_ERROR(root.status());
    SessionOptions session_options;
    session_options.device_count["CPU"] = std::max(1, n);
    session_options.allow_soft_placement = true;
    b.session = std::make_unique<ClientSession>(root, session_options);
    TW_RETURN_IF_ERROR(carried_status_);
    if (!carried_weights_.empty()) {
      const std::vector<NamedTensor> carried = std::move(carried_weights_);
      carried_weights_.clear();
      TW_RETURN_IF_ERROR(SetWeights(carried));
    }
  }
  Built& b = *built_;
  if (y == nullptr || compiled_ == nullptr || b.trained) return absl::OkStatus();

  // The training graph: the same layers reusing the weights.
  const Scope& root = b.root;
  for (const Topology::Out& out : t.outputs) {
    const Tensor& target = y->at(out.name);
    std::vector<int64_t> dims = {-1};
    for (int d = 1; d < target.dims(); ++d) dims.push_back(target.dim_size(d));
    b.targets.push_back(
        feeds(root, out.name + "_target", target.dtype(), PartialTensorShape(dims)));
    b.joined_targets.push_back(
        n == 1 ? b.targets.back()[0]
               : Output(ops::ConcatV2(root.NewSubScope("targets").WithOpName(out.name),
                                      b.targets.back(), 0)));
  }
  const Scope train_scope =
      root.NewSubScope("training").WithVariableScope("", VariableReuse::kAutoReuse);
  std::shared_ptr<train::Optimizer> optimizer = compiled_->optimizer;
  if (compiled_->keras_optimizer.has_value()) {
    // The learning rate in a variable, so that it can change between steps.
    const Optimizer& keras_optimizer = *compiled_->keras_optimizer;
    VariableOptions frozen;
    frozen.trainable = false;
    const Scope lr = root.WithNoControlDependencies();
    b.learning_rate = GetVariable(
        lr, "learning_rate", TensorShape(), DT_FLOAT,
        initializers::Constant(static_cast<float>(keras_optimizer.learning_rate)), frozen);
    TW_RETURN_IF_ERROR(root.status());
    b.learning_rate_value = b.learning_rate.value(root.NewSubScope("learning_rate_value"));
    const Scope set = root.NewSubScope("set_learning_rate");
    b.learning_rate_feed = ops::Placeholder(set, DT_FLOAT, ops::Placeholder::Shape(TensorShape()));
    b.set_learning_rate =
        ops::AssignVariableOp(set, b.learning_rate.handle(), b.learning_rate_feed).operation;
    optimizer = keras_optimizer.make(b.learning_rate.value(root.NewSubScope("training_rate")));
  }
  TW_ASSIGN_OR_RETURN(EstimatorSpec spec, build_spec(train_scope, ModeKeys::kTrain, optimizer));
  TW_RETURN_IF_ERROR(root.status());
  b.train_loss = spec.loss;
  b.train_op = spec.train_op;
  // The logs of the whole batch (the replicas' outputs concatenated).
  std::vector<Outputs> train_outputs;
  for (const Topology::Out& out : t.outputs) {
    Outputs o{spec.predictions.at(out.prediction_key), Output()};
    if (spec.predictions.count(out.logits_key)) o.logits = spec.predictions.at(out.logits_key);
    train_outputs.push_back(o);
  }
  TW_ASSIGN_OR_RETURN(b.train_logs, LogValues(root.NewSubScope("metrics"), *compiled_, t,
                                              b.joined_targets, train_outputs));
  // Evaluation: the loss and logs of the inference outputs.
  const Scope eval = root.NewSubScope("evaluation");
  b.eval_loss = CompiledLosses(eval.NewSubScope("loss"), compiled_->outputs, t.outputs,
                               b.joined_targets, b.predict)
                    .total;
  TW_ASSIGN_OR_RETURN(b.eval_logs, LogValues(eval, *compiled_, t, b.joined_targets, b.predict));
  TW_RETURN_IF_ERROR(root.status());
  b.trained = true;
  return absl::OkStatus();
}

absl::Status Model::InitializeNewVariables() const {
  Built& b = *built_;
  // Every step asks; only a graph that has grown can hold new variables.
  const int nodes = b.root.graph()->num_node_ids();
  if (nodes == b.initialized_up_to) return absl::OkStatus();
  std::vector<Operation> inits;
  std::vector<std::string> names;
  for (const Variable& v : GetVariables(*b.root.graph(), GraphKeys::kGlobalVariables)) {
    if (!b.initialized.contains(v.name())) {
      inits.push_back(v.initializer());
      names.push_back(v.name());
    }
  }
  if (!inits.empty()) {
    TW_RETURN_IF_ERROR(b.session->Run({}, {}, inits, nullptr));
  }
  b.initialized.insert(names.begin(), names.end());
  b.initialized_up_to = nodes;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<NamedTensor>> Model::GetWeights() {
  TW_RETURN_IF_ERROR(Build(nullptr));
  return BuiltWeights();
}

void Model::CarryWeights() {
  if (built_ == nullptr) return;
  absl::StatusOr<std::vector<NamedTensor>> weights = BuiltWeights();
  if (weights.ok()) {
    carried_weights_ = std::move(*weights);
  } else {
    carried_status_ = weights.status();
  }
}

absl::StatusOr<std::vector<NamedTensor>> Model::BuiltWeights() const {
  TW_RETURN_IF_ERROR(InitializeNewVariables());
  const Built& b = *built_;
  std::vector<Tensor> values;
  TW_RETURN_IF_ERROR(b.session->Run(b.weight_reads, &values));
  std::vector<NamedTensor> weights;
  for (size_t i = 0; i < b.weights.size(); ++i) {
    weights.push_back({b.weights[i].name(), values[i]});
  }
  return weights;
}

absl::Status Model::SetWeights(const std::vector<NamedTensor>& weights) {
  TW_RETURN_IF_ERROR(Build(nullptr));
  TW_RETURN_IF_ERROR(InitializeNewVariables());
  Built& b = *built_;
  ClientSession::FeedType feeds;
  std::vector<Operation> assigns;
  for (const NamedTensor& w : weights) {
    auto v = std::find_if(b.weights.begin(), b.weights.end(),
                          [&w](const Variable& v) { return v.name() == w.name; });
    if (v == b.weights.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("SetWeights: the model has no weight named ", w.name));
    }
    if (w.tensor.dtype() != v->dtype() || w.tensor.shape() != v->shape()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "SetWeights: ", w.name, " is ", DataTypeString(v->dtype()), " ", v->shape().DebugString(),
          ", got ", DataTypeString(w.tensor.dtype()), " ", w.tensor.shape().DebugString()));
    }
    auto it = b.assigners.find(w.name);
    if (it == b.assigners.end()) {
      const Scope s = b.root.NewSubScope("set_weights").ColocateWith(v->handle());
      Output value = ops::Placeholder(s, v->dtype(), ops::Placeholder::Shape(v->shape()));
      Operation assign = ops::AssignVariableOp(s, v->handle(), value).operation;
      TW_RETURN_IF_ERROR(s.status());
      it = b.assigners.emplace(w.name, std::make_pair(value, assign)).first;
    }
    feeds.emplace(it->second.first, w.tensor);
    assigns.push_back(it->second.second);
  }
  return b.session->Run(feeds, {}, assigns, nullptr);
}

absl::Status Model::SaveWeights(const std::string& path) {
  TW_ASSIGN_OR_RETURN(std::vector<NamedTensor> weights, GetWeights());
  return WriteCheckpoint(path, weights);
}

absl::Status Model::LoadWeights(const std::string& path) {
  TW_ASSIGN_OR_RETURN(std::vector<NamedTensor> saved, ReadCheckpoint(path));
  TW_RETURN_IF_ERROR(Build(nullptr));
  for (const Variable& v : built_->weights) {
    const bool found = std::any_of(saved.begin(), saved.end(),
                                   [&v](const NamedTensor& t) { return t.name == v.name(); });
    if (!found) {
      return absl::NotFoundError(absl::StrCat(path, ": no weight ", v.name(), " in the file"));
    }
  }
  std::vector<NamedTensor> weights;
  for (NamedTensor& t : saved) {
    const bool ours = std::any_of(built_->weights.begin(), built_->weights.end(),
                                  [&t](const Variable& v) { return v.name() == t.name; });
    if (ours) weights.push_back(std::move(t));
  }
  return SetWeights(weights);
}

absl::Status Model::CheckBatches(int64_t n, int64_t batch_size) const {
  TW_RETURN_IF_ERROR(CheckBatch(std::min(n, batch_size)));
  return n % batch_size == 0 ? absl::OkStatus() : CheckBatch(n % batch_size);
}

absl::Status Model::CheckBatch(int64_t batch) const {
  if (replication_.replicas > 1 && !replication_.uneven_batches &&
      batch % replication_.replicas != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "batch_size must be divisible by num_replicas (batch_size ", batch, ", num_replicas ",
        replication_.replicas, "); ReplicationOptions::uneven_batches accepts it"));
  }
  return absl::OkStatus();
}

absl::StatusOr<double> Model::GetLearningRate() {
  if (compiled_ == nullptr || !compiled_->keras_optimizer.has_value()) {
    return absl::FailedPreconditionError(
        "GetLearningRate: compile the model with a keras::Optimizer (keras::SGD, keras::Adam, "
        "...) to have a learning rate that can change");
  }
  if (built_ == nullptr || !built_->learning_rate.valid()) {
    return compiled_->keras_optimizer->learning_rate;
  }
  TW_RETURN_IF_ERROR(InitializeNewVariables());
  std::vector<Tensor> out;
  TW_RETURN_IF_ERROR(built_->session->Run({built_->learning_rate_value}, &out));
  return static_cast<double>(out[0].scalar<float>()());
}

absl::Status Model::SetLearningRate(double learning_rate) {
  TW_RETURN_IF_ERROR(GetLearningRate().status());
  if (!(learning_rate >= 0)) {
    return absl::InvalidArgumentError(absl::StrCat("SetLearningRate: ", learning_rate));
  }
  if (built_ == nullptr || !built_->learning_rate.valid()) {
    // Not trained yet: training starts from it.
    auto compiled = std::make_shared<Compiled>(*compiled_);
    compiled->keras_optimizer->learning_rate = learning_rate;
    compiled_ = std::move(compiled);
    return absl::OkStatus();
  }
  TW_RETURN_IF_ERROR(InitializeNewVariables());
  Tensor value(DT_FLOAT, TensorShape());
  value.scalar<float>()() = static_cast<float>(learning_rate);
  return built_->session->Run({{built_->learning_rate_feed, value}}, {},
                              {built_->set_learning_rate}, nullptr);
}

// ---- Data and steps ---------------------------------------------------------------------

absl::StatusOr<TensorMap> Model::InputMap(const Tensor& x) const {
  TW_RETURN_IF_ERROR(status());
  if (topology_->inputs.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat("The model has ", topology_->inputs.size(),
                                                   " inputs (", absl::StrJoin(input_names(), ", "),
                                                   "): pass them as a TensorMap"));
  }
  return TensorMap{{topology_->inputs[0].name, x}};
}

absl::StatusOr<TensorMap> Model::TargetMap(const Tensor& y) const {
  TW_RETURN_IF_ERROR(status());
  if (topology_->outputs.size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("The model has ", topology_->outputs.size(), " outputs (",
                     absl::StrJoin(output_names(), ", "), "): pass their targets as a TensorMap"));
  }
  return TensorMap{{topology_->outputs[0].name, y}};
}

absl::StatusOr<int64_t> Model::CheckData(const TensorMap& x, const TensorMap* y) const {
  TW_RETURN_IF_ERROR(status());
  const Topology& t = *topology_;
  // Every key is known, every feed given: Keras's messages.
  const auto check_keys = [](const TensorMap& data, const std::vector<std::string>& names,
                             const char* what) -> absl::Status {
    for (const std::string& name : names) {
      if (data.count(name) == 0) {
        return absl::InvalidArgumentError(absl::StrCat("No data provided for \"", name,
                                                       "\". Need data for each key in: [",
                                                       absl::StrJoin(names, ", "), "]"));
      }
    }
    for (const auto& [name, tensor] : data) {
      if (std::find(names.begin(), names.end(), name) == names.end()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Unknown entry in ", what, " data dictionary: \"", name,
            "\". Only expected the following keys: [", absl::StrJoin(names, ", "), "]"));
      }
    }
    return absl::OkStatus();
  };
  TW_RETURN_IF_ERROR(check_keys(x, input_names(), "input"));
  int64_t rows = -1;
  for (const Topology::Feed& feed : t.inputs) {
    const Tensor& v = x.at(feed.name);
    bool fits = v.dtype() == feed.dtype && v.dims() == static_cast<int>(feed.shape.size()) + 1;
    for (size_t d = 0; fits && d < feed.shape.size(); ++d) {
      fits = feed.shape[d] < 0 || v.dim_size(d + 1) == feed.shape[d];
    }
    if (!fits) {
      return absl::InvalidArgumentError(
          absl::StrCat("Error when checking input: expected ", feed.name, " to be ",
                       DataTypeString(feed.dtype), " of shape ", ShapeString(feed.shape), ", got ",
                       DataTypeString(v.dtype()), " ", v.shape().DebugString()));
    }
    if (!IsNumeric(v.dtype())) {
      return absl::InvalidArgumentError(absl::StrCat("Input ", feed.name, " must be numeric"));
    }
    if (v.dim_size(0) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Error when checking input: ", feed.name, " has no examples (0 rows)"));
    }
    if (rows >= 0 && v.dim_size(0) != rows) {
      return absl::InvalidArgumentError(absl::StrCat(
          "All input arrays should have the same number of samples. Got array sizes: ", rows,
          " and ", v.dim_size(0), " (", feed.name, ")"));
    }
    rows = v.dim_size(0);
  }
  if (y == nullptr) return rows;
  TW_RETURN_IF_ERROR(check_keys(*y, output_names(), "target"));
  for (size_t o = 0; o < t.outputs.size(); ++o) {
    const Topology::Out& out = t.outputs[o];
    const Tensor& v = y->at(out.name);
    if (v.dims() < 1 || v.dim_size(0) != rows || !IsNumeric(v.dtype())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Input arrays should have the same number of samples as target arrays. Found ", rows,
          " input samples and ", v.dims() < 1 ? 0 : v.dim_size(0), " target samples (", out.name,
          ", ", DataTypeString(v.dtype()), ")."));
    }
    // A graph built for other targets cannot take these.
    if (built_ != nullptr && built_->trained) {
      const Output& target = built_->targets[o][0];
      const PartialTensorShape& fed = target.shape();
      bool fits = !fed.unknown_rank() && fed.dims() == v.dims() && target.type() == v.dtype();
      for (int d = 1; fits && d < v.dims(); ++d) fits = fed.dim_size(d) == v.dim_size(d);
      if (!fits) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Error when checking target ", out.name, ": the model trains on ", fed.DebugString(),
            " targets, got ", v.shape().DebugString(), " (", DataTypeString(v.dtype()), ")"));
      }
    }
  }
  return rows;
}

absl::StatusOr<std::vector<Tensor>> Model::RunStep(const TensorMap& x, const TensorMap* y,
                                                   bool train) {
  TW_RETURN_IF_ERROR(InitializeNewVariables());
  Built& b = *built_;
  const Topology& t = *topology_;
  std::vector<Output> fetches;
  std::vector<Operation> targets;
  if (train) {
    fetches.push_back(b.train_loss);
    fetches.insert(fetches.end(), b.train_logs.begin(), b.train_logs.end());
    targets.push_back(b.train_op);
  } else if (y != nullptr) {
    fetches.push_back(b.eval_loss);
    fetches.insert(fetches.end(), b.eval_logs.begin(), b.eval_logs.end());
  } else {
    for (const Outputs& o : b.predict) fetches.push_back(o.output);
  }
  // Each replica's placeholders take its shard of the batch.
  ClientSession::FeedType feeds;
  const auto feed = [&feeds](const std::vector<Output>& placeholders, const Tensor& v) {
    if (placeholders.size() == 1) {
      feeds.emplace(placeholders[0], v);
      return;
    }
    const std::vector<int64_t> starts =
        ShardStarts(v.dim_size(0), static_cast<int>(placeholders.size()));
    for (size_t r = 0; r < placeholders.size(); ++r) {
      feeds.emplace(placeholders[r], SliceRows(v, starts[r], starts[r + 1]));
    }
  };
  for (size_t i = 0; i < t.inputs.size(); ++i) feed(b.inputs[i], x.at(t.inputs[i].name));
  if (y != nullptr) {
    for (size_t o = 0; o < t.outputs.size(); ++o) feed(b.targets[o], y->at(t.outputs[o].name));
  }
  std::vector<Tensor> out;
  TW_RETURN_IF_ERROR(b.session->Run(feeds, fetches, targets, &out));
  return out;
}

absl::Status Model::RunBatches(const TensorMap& x, const TensorMap* y, int64_t batch_size,
                               bool train, const std::vector<int64_t>& order, const StepFn& each) {
  const int64_t n = x.begin()->second.dim_size(0);
  int64_t step = 0;
  for (int64_t begin = 0; begin < n; begin += batch_size, ++step) {
    const int64_t end = std::min(n, begin + batch_size);
    TensorMap xb, yb;
    for (const auto& [name, v] : x) xb[name] = GatherRows(v, order, begin, end);
    if (y != nullptr) {
      for (const auto& [name, v] : *y) yb[name] = GatherRows(v, order, begin, end);
    }
    TW_ASSIGN_OR_RETURN(std::vector<Tensor> out, RunStep(xb, y != nullptr ? &yb : nullptr, train));
    TW_RETURN_IF_ERROR(each(step, end - begin, out));
  }
  return absl::OkStatus();
}

namespace {

absl::Status CheckBatchSize(int64_t batch_size) {
  if (batch_size <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch_size must be positive, got ", batch_size));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<History> Model::Fit(const Tensor& x, const Tensor& y, const FitOptions& options) {
  TW_ASSIGN_OR_RETURN(TensorMap xs, InputMap(x));
  TW_ASSIGN_OR_RETURN(TensorMap ys, TargetMap(y));
  return Fit(xs, ys, options);
}

absl::Status Model::ValidationData(const FitOptions& options, TensorMap* x, TensorMap* y,
                                   const TensorMap** validation_x,
                                   const TensorMap** validation_y) const {
  *validation_x = options.validation_inputs;
  *validation_y = options.validation_targets;
  if ((options.validation_x == nullptr) != (options.validation_y == nullptr) ||
      (options.validation_inputs == nullptr) != (options.validation_targets == nullptr) ||
      (options.validation_x != nullptr && options.validation_inputs != nullptr)) {
    return absl::InvalidArgumentError(
        "validation data needs both inputs and targets, as tensors or as maps");
  }
  if (options.validation_x != nullptr) {
    TW_ASSIGN_OR_RETURN(*x, InputMap(*options.validation_x));
    TW_ASSIGN_OR_RETURN(*y, TargetMap(*options.validation_y));
    *validation_x = x;
    *validation_y = y;
  }
  return absl::OkStatus();
}

absl::StatusOr<History> Model::Fit(const TensorMap& x_all, const TensorMap& y_all,
                                   const FitOptions& options) {
  TW_RETURN_IF_ERROR(status());
  if (compiled_ == nullptr) return absl::FailedPreconditionError(kNotCompiled);
  TW_RETURN_IF_ERROR(CheckBatchSize(options.batch_size));
  TW_ASSIGN_OR_RETURN(const int64_t rows, CheckData(x_all, &y_all));
  TensorMap vx, vy;
  const TensorMap* validation_x = nullptr;
  const TensorMap* validation_y = nullptr;
  TW_RETURN_IF_ERROR(ValidationData(options, &vx, &vy, &validation_x, &validation_y));
  if (!(options.validation_split >= 0 && options.validation_split < 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("validation_split must be in [0, 1), got ", options.validation_split));
  }
  // Keras's validation_split: the last rows, before shuffling.
  TensorMap x = x_all, y = y_all, split_x, split_y;
  if (validation_x == nullptr && options.validation_split > 0) {
    const int64_t train_rows = static_cast<int64_t>(rows * (1 - options.validation_split));
    for (auto [from, held_out] : {std::make_pair(&x, &split_x), std::make_pair(&y, &split_y)}) {
      for (auto& [name, v] : *from) {
        (*held_out)[name] = SliceRows(v, train_rows, rows);
        v = SliceRows(v, 0, train_rows);
      }
    }
    validation_x = &split_x;
    validation_y = &split_y;
  }
  const int64_t n = x.begin()->second.dim_size(0);
  if (n == 0) return absl::InvalidArgumentError("Fit: no training examples");
  TW_RETURN_IF_ERROR(CheckBatches(n, options.batch_size));
  TW_RETURN_IF_ERROR(Build(&y));
  const int64_t steps = (n + options.batch_size - 1) / options.batch_size;
  std::vector<int64_t> order = Identity(n);
  return FitEpochs(options, steps, validation_x, validation_y, [&](int epoch, const StepFn& each) {
    if (options.shuffle) {
      std::mt19937_64 rng(options.seed * 1000003 + epoch);
      std::shuffle(order.begin(), order.end(), rng);
    }
    return RunBatches(x, &y, options.batch_size, /*train=*/true, order, each);
  });
}

absl::StatusOr<std::optional<Model::Batch>> Model::NextBatch(data::Iterator* it, int64_t step,
                                                             const char* what,
                                                             bool targets_optional) const {
  const Topology& t = *topology_;
  TW_ASSIGN_OR_RETURN(std::optional<data::Element> e, it->GetNext());
  if (!e.has_value()) return std::nullopt;
  // The inputs, then the targets.
  const size_t arity = t.inputs.size() + t.outputs.size();
  const bool inputs_only = targets_optional && e->size() == t.inputs.size();
  if (e->size() != arity && !inputs_only) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": a dataset element must be a batch ",
        arity == 2
            ? "(x, y)"
            : absl::StrCat("of ", t.inputs.size(), " inputs and ", t.outputs.size(), " targets"),
        targets_optional ? " (or of the inputs alone)" : "", ", got ", e->size(),
        " tensors at step ", step));
  }
  Batch batch;
  for (size_t i = 0; i < t.inputs.size(); ++i) batch.x[t.inputs[i].name] = (*e)[i];
  if (!inputs_only) {
    for (size_t o = 0; o < t.outputs.size(); ++o) {
      batch.y[t.outputs[o].name] = (*e)[t.inputs.size() + o];
    }
  }
  TW_ASSIGN_OR_RETURN(batch.rows, CheckData(batch.x, targets_optional ? nullptr : &batch.y));
  TW_RETURN_IF_ERROR(CheckBatch(batch.rows));
  return batch;
}

absl::StatusOr<History> Model::Fit(const data::Dataset& dataset, const FitOptions& options) {
  TW_RETURN_IF_ERROR(status());
  if (compiled_ == nullptr) return absl::FailedPreconditionError(kNotCompiled);
  TensorMap vx, vy;
  const TensorMap* validation_x = nullptr;
  const TensorMap* validation_y = nullptr;
  TW_RETURN_IF_ERROR(ValidationData(options, &vx, &vy, &validation_x, &validation_y));
  {
    std::unique_ptr<data::Iterator> first = dataset.MakeIterator();
    TW_ASSIGN_OR_RETURN(std::optional<Batch> batch, NextBatch(first.get(), 0, "Fit"));
    if (!batch.has_value()) return absl::InvalidArgumentError("Fit: the dataset is empty");
    TW_RETURN_IF_ERROR(Build(&batch->y));
  }
  return FitEpochs(options, /*steps=*/0, validation_x, validation_y,
                   [&](int, const StepFn& each) -> absl::Status {
                     std::unique_ptr<data::Iterator> it = dataset.MakeIterator();
                     for (int64_t step = 0;; ++step) {
                       TW_ASSIGN_OR_RETURN(std::optional<Batch> batch,
                                           NextBatch(it.get(), step, "Fit"));
                       if (!batch.has_value()) return absl::OkStatus();
                       TW_ASSIGN_OR_RETURN(std::vector<Tensor> values,
                                           RunStep(batch->x, &batch->y, /*train=*/true));
                       TW_RETURN_IF_ERROR(each(step, batch->rows, values));
                     }
                   });
}

absl::StatusOr<Logs> Model::Evaluate(const data::Dataset& dataset) {
  TW_RETURN_IF_ERROR(status());
  if (compiled_ == nullptr) return absl::FailedPreconditionError(kNotCompiled);
  const std::vector<std::string>& log_names = LogNames();
  std::vector<double> sums(1 + log_names.size(), 0.0);
  int64_t n = 0;
  std::unique_ptr<data::Iterator> it = dataset.MakeIterator();
  for (int64_t step = 0;; ++step) {
    TW_ASSIGN_OR_RETURN(std::optional<Batch> batch, NextBatch(it.get(), step, "Evaluate"));
    if (!batch.has_value()) break;
    TW_RETURN_IF_ERROR(Build(&batch->y));
    TW_ASSIGN_OR_RETURN(std::vector<Tensor> values, RunStep(batch->x, &batch->y, /*train=*/false));
    for (size_t i = 0; i < sums.size(); ++i) sums[i] += values[i].scalar<float>()() * batch->rows;
    n += batch->rows;
  }
  if (n == 0) return absl::InvalidArgumentError("Evaluate: the dataset is empty");
  Logs result;
  result["loss"] = sums[0] / n;
  for (size_t m = 0; m < log_names.size(); ++m) result[log_names[m]] = sums[m + 1] / n;
  return result;
}

absl::StatusOr<TensorMap> Model::Predict(const data::Dataset& dataset) {
  TW_RETURN_IF_ERROR(status());
  const Topology& t = *topology_;
  std::vector<std::vector<Tensor>> parts(t.outputs.size());
  int64_t n = 0;
  std::unique_ptr<data::Iterator> it = dataset.MakeIterator();
  for (int64_t step = 0;; ++step) {
    TW_ASSIGN_OR_RETURN(std::optional<Batch> batch,
                        NextBatch(it.get(), step, "Predict", /*targets_optional=*/true));
    if (!batch.has_value()) break;
    TW_RETURN_IF_ERROR(Build(nullptr));
    TW_ASSIGN_OR_RETURN(std::vector<Tensor> values, RunStep(batch->x, nullptr, /*train=*/false));
    for (size_t o = 0; o < values.size(); ++o) {
      if (values[o].dims() < 1 || values[o].dim_size(0) != batch->rows ||
          (!parts[o].empty() &&
           (parts[o][0].dtype() != values[o].dtype() ||
            parts[o][0].shape() != WithRows(values[o].shape(), parts[o][0].dim_size(0))))) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Predict: output ", t.outputs[o].name, " is ", values[o].shape().DebugString(),
            " at step ", step, ", which does not join the batches before"));
      }
      parts[o].push_back(values[o]);
    }
    n += batch->rows;
  }
  if (n == 0) return absl::InvalidArgumentError("Predict: the dataset is empty");
  // Each output's batches joined in order.
  TensorMap result;
  for (size_t o = 0; o < t.outputs.size(); ++o) {
    Tensor joined(parts[o][0].dtype(), WithRows(parts[o][0].shape(), n));
    char* dst = static_cast<char*>(joined.raw_data());
    for (const Tensor& part : parts[o]) {
      std::memcpy(dst, part.raw_data(), part.TotalBytes());
      dst += part.TotalBytes();
    }
    result[t.outputs[o].name] = joined;
  }
  return result;
}

absl::StatusOr<History> Model::FitEpochs(
    const FitOptions& options, int64_t steps, const TensorMap* validation_x,
    const TensorMap* validation_y,
    const std::function<absl::Status(int epoch, const StepFn& each)>& run_epoch) {
  std::ostream* out = options.out != nullptr ? options.out : &std::cout;
  const bool dynamic = IsTerminal(out);
  const std::vector<std::string>& log_names = LogNames();
  History history;
  stop_training_ = false;
  for (const auto& c : options.callbacks) TW_RETURN_IF_ERROR(c->OnTrainBegin(this));
  for (int epoch = options.initial_epoch; epoch < options.epochs && !stop_training_; ++epoch) {
    for (const auto& c : options.callbacks) TW_RETURN_IF_ERROR(c->OnEpochBegin(this, epoch));
    if (options.verbose > 0) *out << "Epoch " << epoch + 1 << "/" << options.epochs << "\n";
    Progbar bar(steps, options.verbose > 0 ? out : nullptr, dynamic);
    TW_RETURN_IF_ERROR(run_epoch(epoch, [&](int64_t step, int64_t rows,
                                            const std::vector<Tensor>& values) {
      std::vector<std::pair<std::string, double>> named = {{"loss", values[0].scalar<float>()()}};
      for (size_t m = 0; m < log_names.size(); ++m) {
        named.push_back({log_names[m], values[m + 1].scalar<float>()()});
      }
      bar.Update(step + 1, named, static_cast<double>(rows));
      const Logs logs(named.begin(), named.end());
      for (const auto& c : options.callbacks) {
        TW_RETURN_IF_ERROR(c->OnBatchEnd(this, step, logs));
      }
      return absl::OkStatus();
    }));
    std::vector<std::pair<std::string, double>> extra;
    if (validation_x != nullptr) {
      TW_ASSIGN_OR_RETURN(Logs val, Evaluate(*validation_x, *validation_y, options.batch_size));
      extra.push_back({"val_loss", val["loss"]});
      for (const std::string& m : log_names) extra.push_back({"val_" + m, val[m]});
    }
    bar.Finish(extra);
    history.epochs.push_back(epoch);
    Logs logs;
    for (const auto& [name, value] : bar.Means()) logs[name] = value;
    for (const auto& [name, value] : extra) logs[name] = value;
    for (const auto& [name, value] : logs) history.history[name].push_back(value);
    for (const auto& c : options.callbacks) TW_RETURN_IF_ERROR(c->OnEpochEnd(this, epoch, logs));
  }
  for (const auto& c : options.callbacks) TW_RETURN_IF_ERROR(c->OnTrainEnd(this));
  return history;
}

absl::StatusOr<Logs> Model::Evaluate(const Tensor& x, const Tensor& y, int64_t batch_size) {
  TW_ASSIGN_OR_RETURN(TensorMap xs, InputMap(x));
  TW_ASSIGN_OR_RETURN(TensorMap ys, TargetMap(y));
  return Evaluate(xs, ys, batch_size);
}

absl::StatusOr<Logs> Model::Evaluate(const TensorMap& x, const TensorMap& y, int64_t batch_size) {
  TW_RETURN_IF_ERROR(status());
  if (compiled_ == nullptr) return absl::FailedPreconditionError(kNotCompiled);
  TW_RETURN_IF_ERROR(CheckBatchSize(batch_size));
  TW_ASSIGN_OR_RETURN(const int64_t n, CheckData(x, &y));
  TW_RETURN_IF_ERROR(CheckBatches(n, batch_size));
  TW_RETURN_IF_ERROR(Build(&y));
  const std::vector<std::string>& log_names = LogNames();
  std::vector<double> sums(1 + log_names.size(), 0.0);
  TW_RETURN_IF_ERROR(RunBatches(x, &y, batch_size, /*train=*/false, Identity(n),
                                [&](int64_t, int64_t rows, const std::vector<Tensor>& values) {
                                  for (size_t i = 0; i < sums.size(); ++i) {
                                    sums[i] += values[i].scalar<float>()() * rows;
                                  }
                                  return absl::OkStatus();
                                }));
  Logs result;
  result["loss"] = sums[0] / n;
  for (size_t m = 0; m < log_names.size(); ++m) result[log_names[m]] = sums[m + 1] / n;
  return result;
}

absl::StatusOr<Tensor> Model::Predict(const Tensor& x, int64_t batch_size) {
  TW_ASSIGN_OR_RETURN(TensorMap xs, InputMap(x));
  if (topology_->outputs.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat("The model has ", topology_->outputs.size(),
                                                   " outputs: Predict a TensorMap to get them"));
  }
  TW_ASSIGN_OR_RETURN(TensorMap out, Predict(xs, batch_size));
  return out.begin()->second;
}

absl::StatusOr<TensorMap> Model::Predict(const TensorMap& x, int64_t batch_size) {
  TW_RETURN_IF_ERROR(CheckBatchSize(batch_size));
  TW_ASSIGN_OR_RETURN(const int64_t n, CheckData(x, nullptr));
  TW_RETURN_IF_ERROR(CheckBatches(n, batch_size));
  TW_RETURN_IF_ERROR(Build(nullptr));
  const Topology& t = *topology_;
  std::vector<Tensor> results(t.outputs.size());
  TW_RETURN_IF_ERROR(RunBatches(
      x, nullptr, batch_size, /*train=*/false, Identity(n),
      [&](int64_t step, int64_t rows, const std::vector<Tensor>& values) {
        for (size_t o = 0; o < values.size(); ++o) {
          const Tensor& out = values[o];
          if (out.dims() < 1 || out.dim_size(0) != rows) {
            return absl::InternalError(absl::StrCat("Output ", t.outputs[o].name, " of ", rows,
                                                    " rows is ", out.shape().DebugString()));
          }
          if (step == 0) results[o] = Tensor(out.dtype(), WithRows(out.shape(), n));
          std::memcpy(static_cast<char*>(results[o].raw_data()) + step * batch_size * RowBytes(out),
                      out.raw_data(), out.TotalBytes());
        }
        return absl::OkStatus();
      }));
  TensorMap result;
  for (size_t o = 0; o < t.outputs.size(); ++o) result[t.outputs[o].name] = results[o];
  return result;
}

absl::StatusOr<Logs> Model::TrainOnBatch(const Tensor& x, const Tensor& y) {
  TW_ASSIGN_OR_RETURN(TensorMap xs, InputMap(x));
  TW_ASSIGN_OR_RETURN(TensorMap ys, TargetMap(y));
  return TrainOnBatch(xs, ys);
}

absl::StatusOr<Logs> Model::TrainOnBatch(const TensorMap& x, const TensorMap& y) {
  TW_RETURN_IF_ERROR(status());
  if (compiled_ == nullptr) return absl::FailedPreconditionError(kNotCompiled);
  TW_ASSIGN_OR_RETURN(const int64_t rows, CheckData(x, &y));
  TW_RETURN_IF_ERROR(CheckBatch(rows));
  TW_RETURN_IF_ERROR(Build(&y));
  TW_ASSIGN_OR_RETURN(std::vector<Tensor> values, RunStep(x, &y, /*train=*/true));
  Logs logs;
  logs["loss"] = values[0].scalar<float>()();
  const std::vector<std::string>& log_names = LogNames();
  for (size_t m = 0; m < log_names.size(); ++m)
    logs[log_names[m]] = values[m + 1].scalar<float>()();
  return logs;
}

absl::StatusOr<Tensor> Model::PredictOnBatch(const Tensor& x) {
  return Predict(x, std::max<int64_t>(1, x.dims() > 0 ? x.dim_size(0) : 1));
}

absl::StatusOr<TensorMap> Model::PredictOnBatch(const TensorMap& x) {
  const int64_t rows =
      x.empty() || x.begin()->second.dims() < 1 ? 1 : x.begin()->second.dim_size(0);
  return Predict(x, std::max<int64_t>(1, rows));
}

// ---- Summary --------------------------------------------------------------------------

namespace {

// Keras's print_row: each field cut at its column and padded to it, a
// field running into the next column losing its last character to a space.
std::string Row(const std::vector<std::string>& fields, const std::vector<int>& positions) {
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) line = line.substr(0, line.size() - 1) + " ";
    line += fields[i];
    line = line.substr(0, positions[i]);
    line += std::string(positions[i] - line.size(), ' ');
  }
  return line + "\n";
}

std::string Commas(int64_t v) {
  std::string digits = absl::StrCat(v), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// Whether Keras prints the model as a chain: one input, each layer called
// once on the previous call's output.
bool SequentialLike(const Topology& t) {
  if (t.sequential) return true;
  if (t.inputs.size() != 1 || t.outputs.size() != 1 || t.calls.size() != t.layers.size()) {
    return false;
  }
  for (size_t k = 0; k < t.calls.size(); ++k) {
    if (t.calls[k].inputs != std::vector<size_t>{t.inputs.size() + k - 1}) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::string> Model::Summary() {
  TW_RETURN_IF_ERROR(Build(nullptr));
  const Built& b = *built_;
  const Topology& t = *topology_;
  const size_t num_inputs = t.inputs.size();
  const bool chain = SequentialLike(t);
  // Keras's columns: 65 wide for a chain, else 98 with the connections.
  const int line_length = chain ? 65 : 98;
  const std::vector<int> positions =
      chain ? std::vector<int>{29, 55, 65} : std::vector<int>{32, 53, 65, 98};
  std::vector<std::string> header = {"Layer (type)", "Output Shape", "Param #"};
  if (!chain) header.push_back("Connected to");

  // Rows: the input layers (but a Sequential's) and the layers, ordered as
  // Keras orders a network's layers: by decreasing depth from the outputs,
  // then by when a walk from the outputs first meets them.
  struct Entry {
    int layer;  // -1: input `input`
    size_t input = 0;
    int depth = 0;
    int index = 0;
  };
  std::vector<int> depth(num_inputs + t.calls.size(), 0);
  for (size_t k = t.calls.size(); k-- > 0;) {
    for (size_t u : t.calls[k].inputs) {
      depth[u] = std::max(depth[u], depth[num_inputs + k] + 1);
    }
  }
  std::vector<int> found(num_inputs + t.layers.size(), -1);  // inputs, then layers
  int next_index = 0;
  std::vector<bool> seen(depth.size(), false);
  for (const Topology::Out& out : t.outputs) {
    std::vector<size_t> stack = {out.value};
    while (!stack.empty()) {
      const size_t v = stack.back();
      stack.pop_back();
      if (seen[v]) continue;
      seen[v] = true;
      const size_t slot = v < num_inputs ? v : num_inputs + t.calls[v - num_inputs].layer;
      if (found[slot] < 0) found[slot] = next_index++;
      if (v >= num_inputs) {
        const auto& in = t.calls[v - num_inputs].inputs;
        for (auto it = in.rbegin(); it != in.rend(); ++it) stack.push_back(*it);
      }
    }
  }
  std::vector<Entry> entries;
  if (!t.sequential) {
    for (size_t i = 0; i < num_inputs; ++i) entries.push_back({-1, i, depth[i], found[i]});
  }
  for (size_t l = 0; l < t.layers.size(); ++l) {
    Entry e{static_cast<int>(l), 0, 0, found[num_inputs + l]};
    for (size_t k = 0; k < t.calls.size(); ++k) {
      if (t.calls[k].layer == l) e.depth = std::max(e.depth, depth[num_inputs + k]);
    }
    entries.push_back(e);
  }
  if (!chain) {
    std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
      return a.depth != b.depth ? a.depth > b.depth : a.index < b.index;
    });
  }

  std::string s = absl::StrCat("Model: \"", name_, "\"\n", std::string(line_length, '_'), "\n");
  s += Row(header, positions);
  s += std::string(line_length, '=') + "\n";
  int64_t trainable = 0, frozen = 0;
  // The layers' weights only: not the optimizer's slots ("dense/kernel/Adam").
  const std::vector<Variable>& variables = b.weights;
  for (size_t e = 0; e < entries.size(); ++e) {
    const Entry& entry = entries[e];
    std::vector<std::string> fields;
    std::vector<std::string> connections;
    if (entry.layer < 0) {
      fields = {absl::StrCat(t.inputs[entry.input].name, " (InputLayer)"),
                ShapeTuple(b.inputs[entry.input][0].shape()), "0"};
    } else {
      const std::string& name = t.layer_names[entry.layer];
      int64_t params = 0;
      for (const Variable& v : variables) {
        if (!absl::StartsWith(v.name(), name + "/")) continue;
        params += v.shape().num_elements();
        (v.trainable() ? trainable : frozen) += v.shape().num_elements();
      }
      // Its output shape: the same from every call, or "multiple".
      std::string shape;
      for (size_t k = 0; k < t.calls.size(); ++k) {
        if (static_cast<int>(t.calls[k].layer) != entry.layer) continue;
        const Output& out = b.call_outputs[k];
        const std::string this_shape = out.valid() ? ShapeTuple(out.shape()) : "multiple";
        shape = shape.empty() || shape == this_shape ? this_shape : "multiple";
        for (size_t u : t.calls[k].inputs) {
          const int node = u < num_inputs ? 0 : t.calls[u - num_inputs].node_index;
          connections.push_back(absl::StrCat(t.ProducerName(u), "[", node, "][0]"));
        }
      }
      fields = {absl::StrCat(name, " (", t.layers[entry.layer].class_name(), ")"), shape,
                absl::StrCat(params)};
    }
    if (!chain) fields.push_back(connections.empty() ? "" : connections[0]);
    s += Row(fields, positions);
    for (size_t c = 1; !chain && c < connections.size(); ++c) {
      s += Row({"", "", "", connections[c]}, positions);
    }
    s += std::string(line_length, e + 1 == entries.size() ? '=' : '_') + "\n";
  }
  absl::StrAppend(&s, "Total params: ", Commas(trainable + frozen), "\n",
                  "Trainable params: ", Commas(trainable), "\n",
                  "Non-trainable params: ", Commas(frozen), "\n", std::string(line_length, '_'),
                  "\n");
  return s;
}

absl::StatusOr<GraphDef> Model::ExportGraphDef() const {
  if (built_ == nullptr) {
    return absl::FailedPreconditionError("ExportGraphDef: the model is not built yet");
  }
  return built_->root.ToGraphDef();
}

// ---- Saving and loading -----------------------------------------------------------------

namespace {

constexpr char kConfigFile[] = "model.pbtxt";
constexpr char kWeightsFile[] = "weights";

std::string JoinPath(const std::string& dir, const std::string& file) {
  return absl::EndsWith(dir, "/") ? dir + file : absl::StrCat(dir, "/", file);
}

}  // namespace

absl::Status Model::Save(const std::string& dir) {
  TW_RETURN_IF_ERROR(status());
  const Topology& t = *topology_;
  ModelConfig config;
  config.set_class_name(t.sequential ? "Sequential" : "Model");
  config.set_name(name_);
  for (const Topology::Feed& feed : t.inputs) {
    InputConfig* input = config.add_inputs();
    input->set_name(feed.name);
    for (int64_t d : feed.shape) input->add_shape(d);
    input->set_dtype(DataTypeString(feed.dtype));
  }
  for (size_t l = 0; l < t.layers.size(); ++l) {
    const Layer& layer = t.layers[l];
    if (!layer.config().has_value()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "Save: layer ", t.layer_names[l], " (", layer.class_name(),
          ") has no config: a layer built from a function, or given an activation or a "
          "regularizer as a function, cannot be saved (SaveWeights saves its weights)"));
    }
    LayerConfig* out = config.add_layers();
    out->set_class_name(layer.class_name());
    out->set_name(t.layer_names[l]);
    for (const auto& [key, value] : *layer.config()) (*out->mutable_config())[key] = value;
  }
  for (const Topology::Call& call : t.calls) {
    NodeConfig* node = config.add_nodes();
    node->set_layer(static_cast<int>(call.layer));
    for (size_t v : call.inputs) node->add_inputs(static_cast<int>(v));
  }
  for (const Topology::Out& out : t.outputs) config.add_outputs(static_cast<int>(out.value));
  // Keras keeps the training config of its own optimizers only.
  if (compiled_ != nullptr && compiled_->keras_optimizer.has_value()) {
    TrainingConfig* training = config.mutable_training_config();
    training->set_optimizer(compiled_->keras_optimizer->name);
    TW_ASSIGN_OR_RETURN(const double learning_rate, GetLearningRate());
    training->set_learning_rate(learning_rate);
    for (const auto& [key, value] : compiled_->keras_optimizer->config) {
      (*training->mutable_optimizer_config())[key] = value;
    }
    for (size_t o = 0; o < t.outputs.size(); ++o) {
      const Compiled::PerOutput& per = compiled_->outputs[o];
      (*training->mutable_loss())[t.outputs[o].name] = per.loss_name;
      (*training->mutable_loss_weights())[t.outputs[o].name] = per.weight;
      Strings* metrics = &(*training->mutable_metrics())[t.outputs[o].name];
      for (const std::string& m : per.metrics) metrics->add_values(m);
    }
  }
  const std::string text = PrintTextProto(config);
  TW_RETURN_IF_ERROR(CreateDirectories(dir));
  // The weights first: a config names a complete model.
  TW_RETURN_IF_ERROR(SaveWeights(JoinPath(dir, kWeightsFile)));
  return WriteFileAtomically(JoinPath(dir, kConfigFile), text);
}

namespace {

// The model `config` describes (`file` names it in errors).
absl::StatusOr<Model> ModelFromConfig(const ModelConfig& config, const std::string& file) {
  const auto bad = [&file](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": ", what));
  };
  if (config.class_name() != "Sequential" && config.class_name() != "Model") {
    return bad(
        absl::StrCat("class_name is \"", config.class_name(), "\", expected Sequential or Model"));
  }
  const bool sequential = config.class_name() == "Sequential";
  if (config.inputs_size() == 0 || config.nodes_size() == 0 || config.outputs_size() == 0) {
    return bad("a model needs inputs, nodes and outputs");
  }
  std::vector<Layer> layers;
  for (const LayerConfig& l : config.layers()) {
    Layer::Config args(l.config().begin(), l.config().end());
    absl::StatusOr<Layer> layer = LayerFromConfig(l.class_name(), l.name(), args);
    if (!layer.ok()) return bad(std::string(layer.status().message()));
    layers.push_back(*std::move(layer));
  }
  std::vector<KerasTensor> values;
  std::vector<std::pair<std::vector<int64_t>, DataType>> inputs;
  for (const InputConfig& in : config.inputs()) {
    DataType dtype;
    if (!DataTypeFromString(in.dtype(), &dtype)) {
      return bad(absl::StrCat("input ", in.name(), " has unknown dtype \"", in.dtype(), "\""));
    }
    for (int64_t d : in.shape()) {
      if (d < -1) return bad(absl::StrCat("input ", in.name(), " has dimension ", d));
    }
    std::vector<int64_t> shape(in.shape().begin(), in.shape().end());
    inputs.push_back({shape, dtype});
    values.push_back(Input(shape, {.name = in.name(), .dtype = dtype}));
  }
  std::vector<int> node_layers;
  for (int n = 0; n < config.nodes_size(); ++n) {
    const NodeConfig& node = config.nodes(n);
    if (node.layer() < 0 || node.layer() >= static_cast<int>(layers.size())) {
      return bad(absl::StrCat("node ", n, " calls layer ", node.layer(), " of ", layers.size()));
    }
    std::vector<KerasTensor> args;
    for (int v : node.inputs()) {
      if (v < 0 || v >= static_cast<int>(values.size())) {
        return bad(absl::StrCat("node ", n, " takes value ", v, ", which no input or earlier ",
                                "node gives"));
      }
      args.push_back(values[v]);
    }
    if (sequential && (args.size() != 1 || node.inputs(0) != static_cast<int>(values.size()) - 1 ||
                       config.inputs_size() != 1)) {
      return bad(absl::StrCat("node ", n, " of a Sequential does not follow the one before"));
    }
    node_layers.push_back(node.layer());
    values.push_back(layers[node.layer()](std::move(args)));
  }
  std::vector<KerasTensor> outputs;
  for (int v : config.outputs()) {
    if (v < 0 || v >= static_cast<int>(values.size())) {
      return bad(absl::StrCat("output value ", v, " of ", values.size()));
    }
    outputs.push_back(values[v]);
  }
  if (sequential) {
    if (outputs.size() != 1 || config.outputs(0) != static_cast<int>(values.size()) - 1) {
      return bad("a Sequential's output is its last node's");
    }
    std::vector<Layer> chain;
    for (int l : node_layers) chain.push_back(layers[l]);
    Sequential model(inputs[0].first, chain, config.name(), inputs[0].second);
    TW_RETURN_IF_ERROR(model.status());
    return Model(std::move(model));
  }
  Model model(std::vector<KerasTensor>(values.begin(), values.begin() + config.inputs_size()),
              outputs, config.name());
  if (!model.status().ok()) return bad(std::string(model.status().message()));
  return model;
}

}  // namespace

absl::StatusOr<Model> LoadModel(const std::string& dir) {
  const std::string file = JoinPath(dir, kConfigFile);
  TW_ASSIGN_OR_RETURN(const std::string text, ReadFileToString(file));
  ModelConfig config;
  TW_RETURN_IF_ERROR(AddErrorContext(ParseTextProto(text, &config), file));
  TW_ASSIGN_OR_RETURN(Model model, ModelFromConfig(config, file));
  if (config.has_training_config()) {
    const TrainingConfig& training = config.training_config();
    TW_ASSIGN_OR_RETURN(Optimizer optimizer,
                        OptimizerFromConfig(training.optimizer(), training.learning_rate(),
                                            {training.optimizer_config().begin(),
                                             training.optimizer_config().end()}));
    CompileOptions options;
    options.loss = {training.loss().begin(), training.loss().end()};
    options.loss_weights = {training.loss_weights().begin(), training.loss_weights().end()};
    for (const auto& [name, metrics] : training.metrics()) {
      options.metrics[name] = {metrics.values().begin(), metrics.values().end()};
    }
    absl::Status compiled = model.Compile(std::move(optimizer), options);
    if (!compiled.ok())
      return absl::InvalidArgumentError(absl::StrCat(file, ": ", compiled.message()));
  }
  TW_RETURN_IF_ERROR(model.LoadWeights(JoinPath(dir, kWeightsFile)));
  return model;
}

Model ReplicatedModel(const Model& model, const ReplicationOptions& options) {
  Model copy = model;
  copy.replication_ = options;
  if (copy.replication_.replicas < 1) copy.replication_.replicas = 1;
  copy.CarryWeights();
  copy.built_.reset();
  return copy;
}

}  // namespace keras
}  // namespace towerflow
