#include "estimator/replicate_model_fn.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "distribute/cluster.h"
#include "estimator/replication_internal.h"
#include "estimator/tower_optimizer.h"
#include "framework/device.h"
#include "framework/device_name.h"
#include "graph/replica_context.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/concat_ops.h"
#include "ops/gen/control_ops.h"
#include "ops/gen/index_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/nccl_ops.h"
#include "ops/gen/state_ops.h"
#include "ops/variables.h"

namespace towerflow {
namespace {

using estimator_internal::kDifferentOptimizerCalls;
using estimator_internal::Replication;
using estimator_internal::ScopedReplication;

constexpr char kWrapOptimizers[] =
    "Please wrap optimizers with TowerOptimizer in order to use replicate_model_fn with "
    "multiple `devices`.";
constexpr char kDifferentMetrics[] =
    "Different `EstimatorSpec.eval_metric_ops` across `model_fn()` calls.";
constexpr char kNoneReduction[] =
    "Tower losses need to be reduced in some way, yet none reduction is specified.";

absl::StatusOr<std::vector<Output>> SplitTensor(const Scope& s, const std::string& name,
                                                const Output& x, int n, bool uneven) {
  const PartialTensorShape& shape = x.shape();
  if (!shape.unknown_rank() && shape.dims() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Input '", name, "' is a scalar; ReplicateModelFn splits inputs along dimension 0"));
  }
  const int64_t batch = shape.unknown_rank() ? -1 : shape.dim_size(0);
  if (batch >= 0 && batch % n != 0 && !uneven) {
    return absl::InvalidArgumentError(absl::StrCat("Batch size ", batch,
                                                   " needs to be divisible by the number of GPUs, "
                                                   "which is ",
                                                   n, "."));
  }
  if (!uneven) return ops::Split(s.WithOpName("split"), 0, x, n).output;
  // Sizes q + 1 for the first B mod n towers, q for the rest.
  std::vector<Output> sizes;
  if (batch >= 0) {
    for (int i = 0; i < n; ++i) {
      sizes.push_back(ops::Const(s, static_cast<int32_t>(batch / n + (i < batch % n ? 1 : 0))));
    }
  } else {
    const Output total =
        ops::StridedSlice(s, ops::Shape(s, x), {0}, {1}, {1}, ops::StridedSlice::ShrinkAxisMask(1));
    Output q = ops::FloorDiv(s, total, n);
    Output rem = ops::Sub(s, total, ops::Mul(s, q, n));
    for (int i = 0; i < n; ++i) {
      sizes.push_back(ops::Add(s, q, ops::Cast(s, ops::Less(s, i, rem), DT_INT32)));
    }
  }
  return ops::SplitV(s.WithOpName("split"), x, ops::Pack(s, sizes), 0, n).output;
}

// Splits every tensor of `map` into n maps.
absl::Status SplitMap(const Scope& s, const FeatureMap& map, int n, bool uneven,
                      std::vector<FeatureMap>* shards) {
  shards->assign(n, FeatureMap());
  for (const auto& [name, tensor] : map) {
    TW_ASSIGN_OR_RETURN(std::vector<Output> split, SplitTensor(s, name, tensor, n, uneven));
    for (int i = 0; i < n; ++i) (*shards)[i][name] = split[i];
  }
  return s.status();
}

// `tensors` joined along the batch on `s`'s device, named `name`.
Output ConcatBatch(const Scope& s, const std::string& name, const std::vector<Output>& tensors) {
  if (tensors.size() == 1) return ops::Identity(s.WithOpName(name), tensors[0]);
  return ops::ConcatV2(s.WithOpName(name), tensors, 0);
}

// Per key, what the towers that return it return, concatenated (TF's
// _concat_tensor_dicts): a key that only some towers return has only their
// rows.
absl::Status ConcatMaps(const Scope& s,
                        const std::vector<const std::map<std::string, Output>*>& maps,
                        std::map<std::string, Output>* out) {
  std::map<std::string, std::vector<Output>> parts;
  for (size_t t = 0; t < maps.size(); ++t) {
    for (const auto& [name, tensor] : *maps[t]) {
      if (!tensor.valid()) {
        return absl::InvalidArgumentError(
            absl::StrCat("Tower ", t, " returned no tensor for '", name, "'"));
      }
      parts[name].push_back(tensor);
    }
  }
  for (const auto& [name, tensors] : parts) (*out)[name] = ConcatBatch(s, name, tensors);
  return s.status();
}

// The towers' export outputs per signature key, each of tower 0's kind
// with every tensor concatenated along the batch (TF's _predict_spec).
// Beyond TF: classification classes are concatenated like the scores, not
// stacked into [towers, batch / towers, classes], which TF Serving's
// classify refuses ("Expected Tensor shape: [batch_size num_classes]").
absl::Status MergeExportOutputs(const Scope& s, const std::vector<EstimatorSpec>& specs,
                                std::map<std::string, ExportOutput>* out) {
  std::map<std::string, std::vector<const ExportOutput*>> by_key;
  for (size_t t = 0; t < specs.size(); ++t) {
    for (const auto& [key, output] : specs[t].export_outputs) {
      std::vector<const ExportOutput*>& list = by_key[key];
      if (!list.empty() && list[0]->kind() != output.kind()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Tower ", t, " returned export output '", key, "' of method ", output.method_name(),
            ", the first tower one of ", list[0]->method_name()));
      }
      list.push_back(&output);
    }
  }
  for (const auto& [key, list] : by_key) {
    std::vector<const std::map<std::string, Output>*> parts;
    for (const ExportOutput* output : list) parts.push_back(&output->outputs());
    std::map<std::string, Output> merged;
    TW_RETURN_IF_ERROR(ConcatMaps(s.NewSubScope(key), parts, &merged));
    out->insert_or_assign(key, list[0]->WithOutputs(std::move(merged)));
  }
  return absl::OkStatus();
}

// Every tower's metrics with tower 0's names and variable counts.
absl::Status CheckSameMetrics(const std::vector<EstimatorSpec>& specs) {
  for (size_t t = 1; t < specs.size(); ++t) {
    const std::map<std::string, train::Metric>& metrics = specs[t].eval_metric_ops;
    for (const auto& [name, metric] : specs[0].eval_metric_ops) {
      auto it = metrics.find(name);
      if (it == metrics.end() || it->second.variables.size() != metric.variables.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat(kDifferentMetrics, " Tower ", t, " has no metric '", name, "' of ",
                         metric.variables.size(), " variables, as tower 0 has."));
      }
    }
    if (metrics.size() != specs[0].eval_metric_ops.size()) {
      return absl::InvalidArgumentError(absl::StrCat(kDifferentMetrics, " Tower ", t, " has ",
                                                     metrics.size(), " metrics; tower 0 has ",
                                                     specs[0].eval_metric_ops.size(), "."));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Operation> ReduceMetrics(const Scope& root,
                                        const std::vector<EstimatorSpec>& specs) {
  TW_RETURN_IF_ERROR(CheckSameMetrics(specs));
  std::vector<Operation> updates;
  for (const EstimatorSpec& spec : specs) {
    for (const auto& [name, metric] : spec.eval_metric_ops) updates.push_back(metric.update);
  }
  const Scope s = root.NewSubScope("eval_metric_reduction").WithControlDependencies(updates);
  std::vector<Operation> reduced;
  for (const auto& [name, metric] : specs[0].eval_metric_ops) {
    for (size_t j = 0; j < metric.variables.size(); ++j) {
      const Variable& target = metric.variables[j];
      std::vector<Output> replicas;
      for (size_t t = 1; t < specs.size(); ++t) {
        replicas.push_back(specs[t].eval_metric_ops.at(name).variables[j].value(s));
      }
      Output sum = replicas.size() == 1 ? replicas[0] : Output(ops::AddN(s, replicas));
      reduced.push_back(ops::AssignAddVariableOp(s, target.handle(), sum).operation);
      const Scope after_read = s.WithControlDependencies({sum.op()});
      for (size_t t = 1; t < specs.size(); ++t) {
        reduced.push_back(ops::AssignVariableOp(
                              after_read, specs[t].eval_metric_ops.at(name).variables[j].handle(),
                              ops::ZerosLike(after_read, sum))
                              .operation);
      }
    }
  }
  Operation done = ops::NoOp(s.WithControlDependencies(reduced).WithOpName("group_deps"));
  TW_RETURN_IF_ERROR(root.status());
  return done;
}

// An initializer that copies `from` (a read on its device).
initializers::Initializer CopyOf(const Variable& from) {
  return initializers::Initializer(
      "mirror", [from](const Scope& s, const TensorShape&, DataType) { return from.value(s); });
}

// The variable `name` copies, when it is one of `r`'s mirrors or a
// variable under one ("<mirror>/Momentum", an optimizer's slot):
// "conv/w/replica_1/Momentum" -> "conv/w/Momentum". Empty otherwise.
std::string MirroredName(const std::string& name, const Replication& r) {
  for (size_t slash = name.rfind('/'); slash != std::string::npos && slash > 0;
       slash = name.rfind('/', slash - 1)) {
    auto it = r.variable_of.find(name.substr(0, slash));
    if (it != r.variable_of.end()) return it->second + name.substr(slash);
  }
  return "";
}

// Serves tower `tower`'s variable requests under all-reduce (see kAllReduce
// in the header):
// - a trainable variable: the tower's mirror "<name>/replica_<tower>", made
//   on first request under the caller's scope (whose device setter puts it
//   on the tower's device), local, initialised from the variable;
// - a new variable under a mirror's name (an optimizer's slot of it): local
//   too, initialised from the variable's own slot when there is one, so
//   that it follows a restore as the mirror does;
// - anything else as asked.
Variable Mirrored(const Scope& scope, const VariableRequest& request, const VariableGetter& next,
                  int tower, Replication* r) {
  const std::string mirrored = MirroredName(request.full_name, *r);
  if (!mirrored.empty()) {
    VariableRequest local = request;
    local.options.trainable = false;
    local.options.collections = {GraphKeys::kLocalVariables};
    Variable original;
    if (const VariableRecord* own = scope.graph()->variable_store().Find(mirrored)) {
      original = next(scope, {mirrored,
                              VariableReuse::kReuse,
                              own->shape,
                              own->dtype,
                              initializers::Initializer(),
                              {}});
      if (original.valid()) local.initializer = CopyOf(original);
    }
    const Variable made = next(scope, local);
    if (made.valid() && original.valid()) r->sources[made.name()] = original;
    return made;
  }
  const Variable v = next(scope, request);
  if (!v.valid() || !v.trainable() || r->variable_of.count(v.name()) > 0) return v;
  VariableRequest mirror;
  mirror.full_name = absl::StrCat(v.name(), "/replica_", tower);
  mirror.reuse = VariableReuse::kAutoReuse;
  mirror.shape = v.shape();
  mirror.dtype = v.dtype();
  mirror.initializer = CopyOf(v);
  mirror.options.trainable = false;
  mirror.options.collections = {GraphKeys::kLocalVariables};
  const Variable made = next(scope, mirror);
  if (made.valid()) {
    r->mirrors[tower][v.name()] = made;
    r->variable_of[made.name()] = v.name();
    r->sources[made.name()] = v;
  }
  return made;
}

// The inputs of every tower.
struct TowerInputs {
  std::vector<FeatureMap> features;
  std::vector<FeatureMap> labels;
};

// What the model_fn calls built.
struct Towers {
  std::vector<Scope> scopes;
  std::vector<EstimatorSpec> specs;
  // update_marks[i] (metric_marks[i]): the size of GraphKeys::kUpdateOps
  // (kMetricVariables) before tower i was built; [n] after the last tower.
  std::vector<size_t> update_marks;
  std::vector<size_t> metric_marks;
};

class Replicator {
 public:
  Replicator(ModelFn model_fn, ReplicateOptions options, std::vector<std::string> devices)
      : model_fn_(std::move(model_fn)), options_(std::move(options)), devices_(std::move(devices)) {
    const bool single_gpu = devices_.size() == 1 && absl::StrContains(devices_[0], "GPU");
    consolidation_ = single_gpu ? devices_[0] : "/device:CPU:0";
    ps_devices_ = options_.variable_placement == VariablePlacement::kRoundRobin
                      ? devices_
                      : std::vector<std::string>{consolidation_};
    all_reduce_ = options_.aggregation == GradientAggregation::kAllReduce && devices_.size() > 1;
  }

  EstimatorSpec operator()(const Scope& root, const FeatureMap& features, const FeatureMap& labels,
                           ModeKeys mode, const Params& params) const {
    EstimatorSpec result(mode);
    if (!root.ok()) return result;
    absl::StatusOr<TowerInputs> inputs = SplitInputs(root, features, labels);
    root.UpdateStatus(inputs.ok() ? Build(root, *inputs, mode, params, &result) : inputs.status());
    return result;
  }

  // Over inputs already split per tower (ShardedModelFn).
  EstimatorSpec operator()(const Scope& root, const std::vector<FeatureMap>& features,
                           const std::vector<FeatureMap>& labels, ModeKeys mode,
                           const Params& params) const {
    EstimatorSpec result(mode);
    if (!root.ok()) return result;
    absl::StatusOr<TowerInputs> inputs = ShardedInputs(root, features, labels);
    root.UpdateStatus(inputs.ok() ? Build(root, *inputs, mode, params, &result) : inputs.status());
    return result;
  }

 private:
  int num_towers() const { return static_cast<int>(devices_.size()); }

  // The steps, in order.
  absl::Status Build(const Scope& root, const TowerInputs& inputs, ModeKeys mode,
                     const Params& params, EstimatorSpec* result) const;
  absl::StatusOr<TowerInputs> SplitInputs(const Scope& root, const FeatureMap& features,
                                          const FeatureMap& labels) const;
  // Checks the towers' inputs.
  absl::StatusOr<TowerInputs> ShardedInputs(const Scope& root,
                                            const std::vector<FeatureMap>& features,
                                            const std::vector<FeatureMap>& labels) const;
  absl::StatusOr<Towers> BuildTowers(const Scope& root, const TowerInputs& inputs, ModeKeys mode,
                                     const Params& params, Replication* replication) const;
  absl::StatusOr<Output> ReduceLoss(const Scope& root, const Towers& towers,
                                    const Replication& replication, bool uneven,
                                    ModeKeys mode) const;
  absl::StatusOr<Operation> TrainOp(const Scope& root, const Towers& towers,
                                    const Replication& replication) const;
  absl::StatusOr<std::map<std::string, train::Metric>> EvalMetrics(const Scope& root,
                                                                   const Towers& towers) const;
  absl::Status ConcatOutputs(const Scope& root, const Towers& towers, EstimatorSpec* result) const;

  ModelFn model_fn_;
  ReplicateOptions options_;
  std::vector<std::string> devices_;
  std::string consolidation_;
  std::vector<std::string> ps_devices_;
  bool all_reduce_ = false;
};

absl::Status Replicator::Build(const Scope& root, const TowerInputs& inputs, ModeKeys mode,
                               const Params& params, EstimatorSpec* result) const {
  Replication replication;
  replication.num_towers = num_towers();
  replication.apply_scope = root;
  replication.all_reduce = all_reduce_;
  replication.mirrors.resize(num_towers());
  if (mode == ModeKeys::kTrain && options_.across_processes) {
    TW_ASSIGN_OR_RETURN(distribute::Cluster * cluster, distribute::Cluster::Get());
    replication.num_processes = cluster->size();
    replication.fusion_threshold_bytes = options_.fusion_threshold_bytes;
    replication.nccl_across_processes = options_.nccl_across_processes;
  }
  // Each tower's loss weighed by its rows when the towers' batches may
  // differ: uneven splits, and processes whose batches differ (the ends of
  // their inputs).
  replication.weigh_by_rows = options_.uneven_batches || replication.num_processes > 1;
  if (replication.weigh_by_rows) {
    replication.weights_scope = root.NewSubScope("tower_weights").WithDevice(consolidation_);
    for (int i = 0; i < num_towers(); ++i) {
      if (inputs.features[i].empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("ReplicateModelFn: tower ", i, " has no features to count rows of"));
      }
      replication.row_sources.push_back(inputs.features[i].begin()->second);
    }
  }
  if (options_.loss_reduction != LossReduction::kSum) {
    replication.loss_factor = 1.0 / (static_cast<double>(num_towers()) * replication.num_processes);
  }
  TW_ASSIGN_OR_RETURN(Towers towers, BuildTowers(root, inputs, mode, params, &replication));

  // Tower 0's hooks and restore map (the variables are shared), as TF's
  // replicate_model_fn keeps tower 0's spec.
  result->training_hooks = towers.specs[0].training_hooks;
  result->restore_var_names = towers.specs[0].restore_var_names;
  result->mirrored_from = replication.sources;
  if (mode != ModeKeys::kPredict) {
    TW_ASSIGN_OR_RETURN(result->loss,
                        ReduceLoss(root, towers, replication, replication.weigh_by_rows, mode));
  }
  if (mode == ModeKeys::kTrain) {
    TW_ASSIGN_OR_RETURN(result->train_op, TrainOp(root, towers, replication));
  }
  if (mode == ModeKeys::kEval) {
    TW_ASSIGN_OR_RETURN(result->eval_metric_ops, EvalMetrics(root, towers));
  }
  TW_RETURN_IF_ERROR(ConcatOutputs(root, towers, result));
  return root.status();
}

absl::StatusOr<TowerInputs> Replicator::SplitInputs(const Scope& root, const FeatureMap& features,
                                                    const FeatureMap& labels) const {
  TowerInputs inputs;
  if (num_towers() == 1) {
    inputs.features = {features};
    inputs.labels = {labels};
    return inputs;
  }
  const Scope split = root.NewSubScope("split_inputs").WithDevice(consolidation_);
  TW_RETURN_IF_ERROR(
      SplitMap(split, features, num_towers(), options_.uneven_batches, &inputs.features));
  TW_RETURN_IF_ERROR(
      SplitMap(split, labels, num_towers(), options_.uneven_batches, &inputs.labels));
  return inputs;
}

absl::StatusOr<TowerInputs> Replicator::ShardedInputs(const Scope& root,
                                                      const std::vector<FeatureMap>& features,
                                                      const std::vector<FeatureMap>& labels) const {
  const size_t n = devices_.size();
  if (features.size() != n || (!labels.empty() && labels.size() != n)) {
    return absl::InvalidArgumentError(absl::StrCat("ReplicateShardedModelFn: ", n,
                                                   " towers got features for ", features.size(),
                                                   " and labels for ", labels.size()));
  }
  TowerInputs inputs;
  inputs.features = features;
  inputs.labels = labels.empty() ? std::vector<FeatureMap>(n) : labels;
  return inputs;
}

absl::StatusOr<Towers> Replicator::BuildTowers(const Scope& root, const TowerInputs& inputs,
                                               ModeKeys mode, const Params& params,
                                               Replication* replication) const {
  const int n = num_towers();
  const ScopedReplication active(replication);
  // Round robin over the ps devices continues from tower to tower.
  const PsStrategy next_ps =
      ps_devices_.empty() ? nullptr : RoundRobinStrategy(static_cast<int>(ps_devices_.size()));
  const Collections& collections = root.graph()->collections();
  Towers towers;
  auto mark = [&collections, &towers] {
    towers.update_marks.push_back(collections.Get(GraphKeys::kUpdateOps).size());
    towers.metric_marks.push_back(collections.Get(GraphKeys::kMetricVariables).size());
  };
  mark();
  for (int i = 0; i < n; ++i) {
    replication->tower = i;
    Scope tower = i == 0 ? root
                         : root.NewSubScope(absl::StrCat("tower_", i))
                               .WithVariableScope("", VariableReuse::kReuse);
    // With all-reduce each tower's variables live on its own device.
    tower = tower.WithDeviceFunction(all_reduce_
                                         ? LocalDeviceSetter(devices_[i], {devices_[i]})
                                         : LocalDeviceSetter(devices_[i], ps_devices_, next_ps));
    Params tower_params = params;
    tower_params.tower_index = i;
    tower_params.num_towers = n;
    std::optional<ScopedVariableCreator> mirroring;
    if (all_reduce_ && i > 0) {
      mirroring.emplace([i, replication](const Scope& s, const VariableRequest& request,
                                         const VariableGetter& next) {
        return Mirrored(s, request, next, i, replication);
      });
    }
    // The tower's layers see it too (synchronised batch norm).
    const ScopedReplicaContext replica({.num_replicas = n, .replica_id = i});
    towers.specs.push_back(
        model_fn_(tower, inputs.features[i], inputs.labels[i], mode, tower_params));
    mirroring.reset();
    TW_RETURN_IF_ERROR(root.status());
    towers.scopes.push_back(tower);
    mark();
  }
  return towers;
}

absl::StatusOr<Output> Replicator::ReduceLoss(const Scope& root, const Towers& towers,
                                              const Replication& replication, bool uneven,
                                              ModeKeys mode) const {
  std::vector<Output> losses;
  for (int i = 0; i < num_towers(); ++i) {
    Output loss = towers.specs[i].loss;
    if (!loss.valid()) {
      return absl::InvalidArgumentError(
          absl::StrCat("model_fn returned no loss for tower ", i, " in mode ", ModeKeyName(mode)));
    }
    const Scope& t = towers.scopes[i];
    const Output factor = estimator_internal::LossScale(t, replication, i);
    if (factor.valid()) {
      const Output scale = ops::Cast(t, factor, loss.type());
      loss =
          ops::Mul(t.WithOpName(replication.loss_factor != 1.0 ? "averaged_loss" : "weighted_loss"),
                   loss, scale);
      if (uneven) {
        // A tower left without examples (a batch smaller than the number
        // of towers) adds 0, not its empty mean's NaN.
        loss = ops::SelectV2(t, ops::Greater(t, scale, ops::ZerosLike(t, scale)), loss,
                             ops::ZerosLike(t, loss));
      }
    }
    losses.push_back(loss);
  }
  if (replication.num_processes == 1) {
    const Output sum = ops::AddN(root.WithDevice(consolidation_).WithOpName("loss"), losses);
    TW_RETURN_IF_ERROR(root.status());
    return sum;
  }
  // The cluster's loss: this process's sum summed over the processes.
  const Output local = ops::AddN(root.WithDevice(consolidation_).WithOpName("local_loss"), losses);
  const ops::MpiAllReduce total(
      root.WithDevice("/device:CPU:0").WithOpName("loss"), {local},
      ops::MpiAllReduce::FusionThresholdBytes(replication.fusion_threshold_bytes));
  TW_RETURN_IF_ERROR(root.status());
  return total.sum[0];
}

absl::StatusOr<Operation> Replicator::TrainOp(const Scope& root, const Towers& towers,
                                              const Replication& replication) const {
  const int n = num_towers();
  if (n > 1 && !replication.tower_optimizer_used) {
    return absl::InvalidArgumentError(kWrapOptimizers);
  }
  for (const auto& calls : replication.calls) {
    if (calls.size() != replication.calls[0].size()) {
      return absl::InvalidArgumentError(kDifferentOptimizerCalls);
    }
  }
  std::vector<Operation> deps;
  for (int i = 0; i < n; ++i) {
    if (!towers.specs[i].train_op.valid()) {
      return absl::InvalidArgumentError(
          absl::StrCat("model_fn returned no train_op for tower ", i, " in mode train"));
    }
    deps.push_back(towers.specs[i].train_op);
  }
  const std::vector<Operation> update_ops = GetCollectionOps(*root.graph(), GraphKeys::kUpdateOps);
  const size_t last =
      options_.update_ops_from_first_tower_only ? towers.update_marks[1] : towers.update_marks[n];
  for (size_t k = towers.update_marks[0]; k < last; ++k) deps.push_back(update_ops[k]);
  const Operation train_op = ops::NoOp(
      root.WithDevice(consolidation_).WithControlDependencies(deps).WithOpName("train_op"));
  TW_RETURN_IF_ERROR(root.status());
  return train_op;
}

absl::StatusOr<std::map<std::string, train::Metric>> Replicator::EvalMetrics(
    const Scope& root, const Towers& towers) const {
  const int n = num_towers();
  if (n == 1) return towers.specs[0].eval_metric_ops;
  // TF's check, over the metric variables the towers created.
  const size_t per_tower = towers.metric_marks[1] - towers.metric_marks[0];
  const size_t created = towers.metric_marks[n] - towers.metric_marks[0];
  if (created != per_tower * n) {
    return absl::InvalidArgumentError(absl::StrCat(kDifferentMetrics, " Expected ", per_tower * n,
                                                   " local variables, but got ", created,
                                                   " instead."));
  }
  TW_ASSIGN_OR_RETURN(Operation reduced, ReduceMetrics(root, towers.specs));
  std::map<std::string, train::Metric> metrics;
  for (const auto& [name, metric] : towers.specs[0].eval_metric_ops) {
    metrics[name] = train::Metric{metric.value, reduced, metric.variables};
  }
  return metrics;
}

absl::Status Replicator::ConcatOutputs(const Scope& root, const Towers& towers,
                                       EstimatorSpec* result) const {
  std::vector<const std::map<std::string, Output>*> predictions;
  for (const EstimatorSpec& spec : towers.specs) predictions.push_back(&spec.predictions);
  const Scope consolidation = root.WithDevice(consolidation_);
  TW_RETURN_IF_ERROR(
      ConcatMaps(consolidation.NewSubScope("predictions"), predictions, &result->predictions));
  return MergeExportOutputs(consolidation.NewSubScope("export_outputs"), towers.specs,
                            &result->export_outputs);
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ReplicationDevices(const ReplicateOptions& options) {
  std::vector<std::string> devices;
  if (options.devices.empty()) {
    const int gpus = NumLocalDevices(kDeviceGpu);
    for (int i = 0; i < gpus; ++i) devices.push_back(absl::StrCat("/device:GPU:", i));
    if (devices.empty()) devices.push_back("/device:CPU:0");
    return devices;
  }
  for (const std::string& d : options.devices) {
    TW_ASSIGN_OR_RETURN(std::string canonical, CanonicalDeviceName(d));
    if (canonical.empty()) {
      return absl::InvalidArgumentError("ReplicateModelFn got an empty device string");
    }
    devices.push_back(canonical);
  }
  return devices;
}

absl::StatusOr<ModelFn> ReplicateModelFn(ModelFn model_fn, const ReplicateOptions& options) {
  if (options.loss_reduction == LossReduction::kNone) {
    return absl::InvalidArgumentError(kNoneReduction);
  }
  if (!model_fn) return absl::InvalidArgumentError("ReplicateModelFn got an empty model_fn");
  if (options.aggregation == GradientAggregation::kAllReduce &&
      options.variable_placement != VariablePlacement::kConsolidationDevice) {
    return absl::InvalidArgumentError(
        "ReplicateModelFn: all-reduce aggregation mirrors every variable on every tower's "
        "device, so it takes no variable_placement");
  }
  TW_ASSIGN_OR_RETURN(std::vector<std::string> devices, ReplicationDevices(options));
  if (options.aggregation == GradientAggregation::kAllReduce) {
    for (size_t i = 0; i < devices.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (devices[i] == devices[j]) {
          return absl::InvalidArgumentError(absl::StrCat(
              "ReplicateModelFn: all-reduce aggregation needs one device per tower, but towers ", j,
              " and ", i, " are both on ", devices[i]));
        }
      }
    }
  }
  return ModelFn(Replicator(std::move(model_fn), options, std::move(devices)));
}

absl::StatusOr<ShardedModelFn> ReplicateShardedModelFn(ModelFn model_fn,
                                                       const ReplicateOptions& options) {
  // The same checks and devices; then the sharded entry point.
  TW_RETURN_IF_ERROR(ReplicateModelFn(model_fn, options).status());
  TW_ASSIGN_OR_RETURN(std::vector<std::string> devices, ReplicationDevices(options));
  return ShardedModelFn(Replicator(std::move(model_fn), options, std::move(devices)));
}

}  // namespace towerflow
