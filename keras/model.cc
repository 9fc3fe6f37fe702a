#include "keras/model.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "distribute/cluster.h"
#include "distribute/variables.h"
#include "estimator/replicate_model_fn.h"
#include "estimator/tower_optimizer.h"
#include "framework/tensor_views.h"
#include "keras/mixed_precision.h"
#include "keras/model_internal.h"
#include "layers/losses.h"
#include "layers/regularizers.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/concat_ops.h"
#include "ops/gen/control_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/state_ops.h"
#include "ops/initializers.h"
#include "ops/variables.h"
#include "saved_model/signature_constants.h"
#include "train/optimizers.h"
#include "training/cluster_roles.h"

namespace towerflow {
namespace keras {

using internal::ModelImpl;

using Topology = internal::ModelTopology;
using Compiled = internal::CompiledModel;
using internal::kNotCompiled;
using internal::Outputs;
using internal::WithRows;

// ---- Helpers ------------------------------------------------------------------------

namespace internal {

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

}  // namespace internal

// ---- Compiling ------------------------------------------------------------------------

absl::Status ModelImpl::Compile(std::shared_ptr<train::Optimizer> optimizer,
                                const std::string& loss, std::vector<std::string> metrics) {
  return CompileWith(std::move(optimizer), std::nullopt,
                     {.loss = {{"", loss}}, .metrics = {{"", std::move(metrics)}}});
}

absl::Status ModelImpl::Compile(std::shared_ptr<train::Optimizer> optimizer,
                                CompileOptions options) {
  return CompileWith(std::move(optimizer), std::nullopt, options);
}

absl::Status ModelImpl::Compile(Optimizer optimizer, const std::string& loss,
                                std::vector<std::string> metrics) {
  return Compile(std::move(optimizer),
                 CompileOptions{.loss = {{"", loss}}, .metrics = {{"", std::move(metrics)}}});
}

absl::Status ModelImpl::Compile(Optimizer optimizer, CompileOptions options) {
  if (!optimizer.make) return absl::InvalidArgumentError("Compile: the optimizer makes nothing");
  if (!(optimizer.learning_rate >= 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Compile: learning rate ", optimizer.learning_rate));
  }
  // The training optimizer for ToModelFn, on a constant rate.
  std::shared_ptr<train::Optimizer> fixed = optimizer.make(optimizer.learning_rate);
  return CompileWith(std::move(fixed), std::move(optimizer), options);
}

absl::Status ModelImpl::CompileWith(std::shared_ptr<train::Optimizer> optimizer,
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
  compiled->replay = options.replay;
  compiled->precision = mixed_precision::GlobalPolicy().precision();
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

const std::vector<std::string>& ModelImpl::LogNames() const { return compiled_->log_names; }

namespace {

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

namespace internal {

ModelFn ServingModelFn(std::shared_ptr<const Topology> topology) {
  ModelFn predict = TopologyModelFn(topology, nullptr, nullptr, nullptr);
  return [topology, predict](const Scope& s, const FeatureMap& features, const FeatureMap& labels,
                             ModeKeys mode, const Params& params) {
    EstimatorSpec spec = predict(s, features, labels, mode, params);
    if (!s.ok()) return spec;
    std::map<std::string, Output> outputs;
    for (const Topology::Out& out : topology->outputs) {
      outputs[out.name] = spec.predictions.at(out.prediction_key);
    }
    spec.export_outputs.emplace(kDefaultServingSignatureDefKey,
                                ExportOutput::Predict(std::move(outputs)));
    return spec;
  };
}

}  // namespace internal

absl::Status ModelImpl::SetRandomSeed(int64_t seed) {
  if (built_ != nullptr) {
    return absl::FailedPreconditionError(
        "SetRandomSeed: the model is built; set the seed before its first Fit, Evaluate, "
        "Predict or Summary");
  }
  seed_ = seed;
  return absl::OkStatus();
}

absl::StatusOr<ModelFn> ModelImpl::ToModelFn() const {
  TW_RETURN_IF_ERROR(status());
  if (compiled_ == nullptr) return absl::FailedPreconditionError(kNotCompiled);
  // Under mixed_float16, in a loss scale, as Keras's compile wraps it.
  return TopologyModelFn(topology_,
                         MixedPrecisionOptimizer(compiled_->precision, compiled_->optimizer),
                         compiled_, nullptr);
}

// ---- Building -------------------------------------------------------------------------

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

absl::Status ModelImpl::Build(const TensorMap* y) {
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
  options.across_processes = replication_.across_processes;
  TW_ASSIGN_OR_RETURN(distribute::Cluster* const cluster, TrainingCluster());
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
    // One replica alone is the model itself; across processes it is a
    // tower of the cluster's replication.
    if (n == 1 && cluster == nullptr) {
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
    b.cluster = cluster;
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
    if (compiled_ != nullptr) {
      session_options.replay = compiled_->replay;
      SetPrecision(compiled_->precision, &session_options);
    }
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
  optimizer = MixedPrecisionOptimizer(compiled_->precision, std::move(optimizer));
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

absl::Status ModelImpl::InitializeNewVariables() const {
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

absl::StatusOr<std::vector<NamedTensor>> ModelImpl::GetWeights() {
  TW_RETURN_IF_ERROR(Build(nullptr));
  return BuiltWeights();
}

void ModelImpl::CarryWeights() {
  if (built_ == nullptr) return;
  absl::StatusOr<std::vector<NamedTensor>> weights = BuiltWeights();
  if (weights.ok()) {
    carried_weights_ = std::move(*weights);
  } else {
    carried_status_ = weights.status();
  }
}

absl::StatusOr<std::vector<NamedTensor>> ModelImpl::BuiltWeights() const {
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

absl::Status ModelImpl::SetWeights(const std::vector<NamedTensor>& weights) {
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

absl::Status ModelImpl::SaveWeights(const std::string& path) {
  TW_ASSIGN_OR_RETURN(std::vector<NamedTensor> weights, GetWeights());
  return WriteCheckpoint(path, weights);
}

absl::Status ModelImpl::LoadWeights(const std::string& path) {
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

absl::Status ModelImpl::CheckBatches(int64_t n, int64_t batch_size) const {
  TW_RETURN_IF_ERROR(CheckBatch(std::min(n, batch_size)));
  return n % batch_size == 0 ? absl::OkStatus() : CheckBatch(n % batch_size);
}

absl::StatusOr<distribute::Cluster*> ModelImpl::TrainingCluster() const {
  TW_ASSIGN_OR_RETURN(const training::ProcessRole role,
                      training::RoleOf(replication_.across_processes, /*server=*/nullptr));
  return role.cluster;
}

absl::Status ModelImpl::BroadcastWeights() {
  Built& b = *built_;
  if (b.cluster == nullptr) return absl::OkStatus();
  TW_RETURN_IF_ERROR(InitializeNewVariables());
  if (b.broadcast_up_to != b.root.graph()->num_node_ids()) {
    b.broadcast = distribute::BroadcastGlobalVariables(b.root.NewSubScope("broadcast_weights"));
    TW_RETURN_IF_ERROR(b.root.status());
    b.broadcast_up_to = b.root.graph()->num_node_ids();
    b.initialized_up_to = b.broadcast_up_to;  // the broadcast adds no variable
  }
  return b.session->Run({}, {}, {b.broadcast}, nullptr);
}

absl::Status ModelImpl::CheckBatch(int64_t batch) const {
  // Across processes the towers weigh by their rows: any split is exact.
  TW_ASSIGN_OR_RETURN(distribute::Cluster * cluster, TrainingCluster());
  if (replication_.replicas > 1 && !replication_.uneven_batches && cluster == nullptr &&
      batch % replication_.replicas != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "batch_size must be divisible by num_replicas (batch_size ", batch, ", num_replicas ",
        replication_.replicas, "); ReplicationOptions::uneven_batches accepts it"));
  }
  return absl::OkStatus();
}

absl::StatusOr<double> ModelImpl::GetLearningRate() {
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

absl::Status ModelImpl::SetLearningRate(double learning_rate) {
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

absl::StatusOr<GraphDef> ModelImpl::ExportGraphDef() const {
  if (built_ == nullptr) {
    return absl::FailedPreconditionError("ExportGraphDef: the model is not built yet");
  }
  return built_->root.ToGraphDef();
}

}  // namespace keras
}  // namespace towerflow
