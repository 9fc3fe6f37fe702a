#include "estimator/estimator.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>

#include "absl/cleanup/cleanup.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "distribute/cluster.h"
#include "distribute/server.h"
#include "distribute/variables.h"
#include "estimator/estimator_internal.h"
#include "graph/device_setter.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/state_ops.h"
#include "ops/variables.h"
#include "train/checkpoint.h"
#include "train/metrics.h"
#include "train/optimizer.h"
#include "train/session_manager.h"
#include "training/cluster_roles.h"
#include "training/loop.h"
#include "training/sync_replicas_hook.h"

namespace towerflow {

using estimator_internal::ModelGraph;

namespace estimator_internal {

absl::StatusOr<std::unique_ptr<ModelGraph>> BuildGraph(
    const ModelFn& model_fn, std::optional<int64_t> seed, const Params& params, ModeKeys mode,
    const std::function<void(ModelGraph*)>& add_inputs, bool global_step) {
  auto g = std::make_unique<ModelGraph>();
  if (seed.has_value()) g->root.graph()->set_seed(*seed);
  add_inputs(g.get());
  TW_RETURN_IF_ERROR(g->root.status());
  if (global_step) g->global_step = train::GetOrCreateGlobalStep(g->root);
  TW_RETURN_IF_ERROR(g->root.status());
  g->spec = model_fn(g->root, g->features, g->labels, mode, params);
  TW_RETURN_IF_ERROR(g->root.status());
  if (mode != ModeKeys::kPredict && !g->spec.loss.valid()) {
    return absl::InvalidArgumentError("Missing loss.");
  }
  if (mode == ModeKeys::kTrain && !g->spec.train_op.valid()) {
    return absl::InvalidArgumentError("Missing train_op.");
  }
  return g;
}

absl::StatusOr<std::unique_ptr<ModelGraph>> BuildModelGraph(const ModelFn& model_fn,
                                                            const RunConfig& config,
                                                            const Params& params, ModeKeys mode,
                                                            const Signature& features,
                                                            const Signature& labels) {
  // A worker of a parameter-server job trains with the variables on the ps
  // tasks (TF's Estimator: replica_device_setter from the RunConfig).
  std::optional<DeviceFunction> placement;
  if (mode == ModeKeys::kTrain && config.server != nullptr) {
    const distribute::ClusterSpec& cluster = config.server->cluster();
    if (cluster.num_tasks("ps") == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("RunConfig.server: the job has no ps task to hold the variables (",
                       cluster.DebugString(), ")"));
    }
    ReplicaDeviceSetterOptions setter;
    setter.ps_tasks = cluster.num_tasks("ps");
    setter.worker_device = config.server->task().name();
    TW_ASSIGN_OR_RETURN(placement, ReplicaDeviceSetter(setter));
  }
  return BuildGraph(model_fn, config.random_seed, params, mode, [&](ModelGraph* g) {
    if (placement.has_value()) g->root = g->root.WithDeviceFunction(*placement);
    const auto add = [&](const Signature& signature, FeatureMap* out) {
      for (const auto& [name, spec] : signature) {
        Output p = ops::Placeholder(g->root.WithOpName(name), spec.dtype,
                                    ops::Placeholder::Shape(spec.shape));
        (*out)[name] = p;
        g->placeholders[name] = p;
      }
    };
    add(features, &g->features);
    add(labels, &g->labels);
  });
}

absl::Status CheckConfig(const RunConfig& config) {
  if (config.model_dir.empty()) return absl::InvalidArgumentError("RunConfig.model_dir is empty");
  if (config.log == nullptr) return absl::InvalidArgumentError("RunConfig.log is null");
  if (!(config.wait_for_variables_secs >= 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "RunConfig.wait_for_variables_secs must be >= 0, got ", config.wait_for_variables_secs));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<train::Saver>> RestoringSaver(const ModelGraph& g) {
  train::SaverOptions options;
  options.var_names = g.spec.restore_var_names;
  absl::flat_hash_set<std::string> mapped;
  for (const auto& [name, var] : options.var_names) mapped.insert(var.name());
  for (const Variable& v : GetVariables(*g.root.graph())) {
    if (!mapped.contains(v.name())) options.var_names[v.name()] = v;
  }
  return train::Saver::Create(g.root, options);
}

}  // namespace estimator_internal

namespace {

using estimator_internal::CheckConfig;
using training::ScalarValue;

// An input_fn's data, with its first batch read ahead so that the graph's
// placeholders can take its dtypes and shapes.
struct OpenedInput {
  InputSpec spec;
  std::unique_ptr<data::Iterator> iterator;
  std::optional<data::Element> first;  // nullopt: no data at all
  Signature features, labels;

  // The next batch (the first one first); nullopt at the end.
  absl::StatusOr<std::optional<data::Element>> Next() {
    if (first.has_value()) return std::exchange(first, std::nullopt);
    return iterator->GetNext();
  }
};

absl::StatusOr<OpenedInput> OpenInput(const InputFn& input_fn, bool with_labels) {
  if (!input_fn) return absl::InvalidArgumentError("input_fn is empty");
  TW_ASSIGN_OR_RETURN(InputSpec spec, input_fn());
  OpenedInput in{std::move(spec)};
  in.iterator = in.spec.dataset.MakeIterator();
  TW_ASSIGN_OR_RETURN(in.first, in.iterator->GetNext());
  if (!in.first.has_value()) return in;
  const size_t wanted = in.spec.features.size() + in.spec.labels.size();
  if (in.first->size() != wanted) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input_fn names ", wanted, " components (features ", absl::StrJoin(in.spec.features, ", "),
        "; labels ", absl::StrJoin(in.spec.labels, ", "), ") but its batches have ",
        in.first->size()));
  }
  for (size_t i = 0; i < wanted; ++i) {
    const Tensor& t = (*in.first)[i];
    if (t.dims() == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("input component ", i, " is a scalar, not a batch (use Batch)"));
    }
    std::vector<int64_t> dims(t.shape().dim_sizes().begin(), t.shape().dim_sizes().end());
    dims[0] = -1;  // the batch size may change (a smaller last batch)
    TW_ASSIGN_OR_RETURN(PartialTensorShape shape, PartialTensorShape::FromDims(dims));
    const bool is_feature = i < in.spec.features.size();
    if (!is_feature && !with_labels) continue;
    const std::string& name =
        is_feature ? in.spec.features[i] : in.spec.labels[i - in.spec.features.size()];
    Signature& sig = is_feature ? in.features : in.labels;
    if (!sig.emplace(name, TensorSpec{t.dtype(), shape}).second) {
      return absl::InvalidArgumentError(absl::StrCat("input_fn names '", name, "' twice"));
    }
  }
  return in;
}

// The placeholders of a batch's components.
absl::StatusOr<ClientSession::FeedType> Feeds(const ModelGraph& g, const OpenedInput& in,
                                              const data::Element& batch) {
  ClientSession::FeedType feeds;
  const size_t n = in.spec.features.size();
  for (size_t i = 0; i < batch.size(); ++i) {
    const std::string& name = i < n ? in.spec.features[i] : in.spec.labels[i - n];
    auto it = g.placeholders.find(name);
    if (it == g.placeholders.end()) continue;  // labels while predicting
    feeds.emplace(it->second, batch[i]);
  }
  return feeds;
}

absl::StatusOr<int64_t> ReadGlobalStep(const ClientSession& session, const ModelGraph& g) {
  std::vector<Tensor> out;
  TW_RETURN_IF_ERROR(session.Run({g.global_step.value()}, &out));
  return out[0].data<int64_t>()[0];
}

// The global step a checkpoint holds; nullopt without checkpoint or step.
std::optional<int64_t> CheckpointGlobalStep(const std::string& path) {
  absl::StatusOr<std::vector<NamedTensor>> tensors = ReadCheckpoint(path);
  if (!tensors.ok()) return std::nullopt;
  for (const NamedTensor& nt : *tensors) {
    if (nt.name == "global_step" && nt.tensor.dtype() == DT_INT64 && nt.tensor.NumElements() == 1) {
      return nt.tensor.data<int64_t>()[0];
    }
  }
  return std::nullopt;
}

bool DrawProgressBar(const RunConfig& config) {
  switch (config.progress_bar) {
    case RunConfig::ProgressBar::kOn:
      return true;
    case RunConfig::ProgressBar::kOff:
      return false;
    case RunConfig::ProgressBar::kAuto:
      return config.log == &std::cerr && isatty(STDERR_FILENO);
  }
  return false;
}

// The Estimator's own hooks around the user's: the NaN guard first, the
// checkpoint saver last, so that a failed step is never saved.
struct TrainingHooks {
  HookList list;
  std::shared_ptr<StopAtStepHook> stop;  // null without steps / max_steps
};

// `chief`: this process writes (alone in a cluster): logs, summaries and
// checkpoints.
TrainingHooks MakeTrainingHooks(const RunConfig& config, const TrainOptions& options,
                                const EstimatorSpec& spec, const train::Saver* saver, bool chief) {
  TrainingHooks hooks;
  hooks.list.push_back(std::make_shared<NanGuardHook>());
  if (options.steps.has_value()) {
    hooks.stop = std::make_shared<StopAtStepHook>(StopAtStepHook::NumSteps(*options.steps));
  } else if (options.max_steps.has_value()) {
    hooks.stop = std::make_shared<StopAtStepHook>(StopAtStepHook::LastStep(*options.max_steps));
  }
  if (hooks.stop != nullptr) hooks.list.push_back(hooks.stop);
  hooks.list.insert(hooks.list.end(), options.hooks.begin(), options.hooks.end());
  hooks.list.insert(hooks.list.end(), spec.training_hooks.begin(), spec.training_hooks.end());
  if (!chief) return hooks;
  const bool progress_bar = hooks.stop != nullptr && DrawProgressBar(config);
  if (config.log_step_count_steps > 0) {
    hooks.list.push_back(std::make_shared<LoggingHook>(config.log_step_count_steps, config.log,
                                                       /*clear_line=*/progress_bar));
    hooks.list.push_back(std::make_shared<StepCounterHook>(config.log_step_count_steps, config.log,
                                                           /*clear_line=*/progress_bar));
  }
  if (config.save_summary_steps > 0) {
    hooks.list.push_back(
        std::make_shared<SummarySaverHook>(config.model_dir, config.save_summary_steps));
  }
  // The bar ends at the stop hook's last step, known once it has seen where
  // training starts.
  if (progress_bar) hooks.list.push_back(std::make_shared<ProgressBarHook>(hooks.stop, config.log));
  hooks.list.push_back(
      std::make_shared<CheckpointSaverHook>(saver, config.model_dir, config.save_checkpoints_steps,
                                            config.save_checkpoints_secs, config.log));
  return hooks;
}

// The role of this process in `config`'s training (or evaluation).
absl::StatusOr<training::ProcessRole> RoleOf(const RunConfig& config) {
  return training::RoleOf(config.across_processes, config.server.get());
}

// A failed Train or Evaluate on one process of a cluster stops the others.
template <typename T>
absl::StatusOr<T> StopClusterOnError(const RunConfig& config, absl::StatusOr<T> result) {
  if (result.ok()) return result;
  absl::StatusOr<training::ProcessRole> role = RoleOf(config);
  return training::StopOthersOnError(role.ok() ? role->cluster : nullptr, std::move(result));
}

}  // namespace

absl::StatusOr<TrainResult> Estimator::Train(const InputFn& input_fn, const TrainOptions& options) {
  return StopClusterOnError(config_, TrainOnThisProcess(input_fn, options));
}

absl::StatusOr<MetricMap> Estimator::Evaluate(const InputFn& input_fn, std::optional<int64_t> steps,
                                              const std::string& checkpoint_path) {
  return StopClusterOnError(config_, EvaluateOnThisProcess(input_fn, steps, checkpoint_path));
}

absl::StatusOr<TrainResult> Estimator::TrainOnThisProcess(const InputFn& input_fn,
                                                          const TrainOptions& options) {
  TW_RETURN_IF_ERROR(CheckConfig(config_));
  if (options.steps.has_value() && options.max_steps.has_value()) {
    return absl::InvalidArgumentError("Can not provide both steps and max_steps.");
  }
  if (options.steps.has_value() && *options.steps <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Must specify steps > 0, given: ", *options.steps));
  }
  if (options.max_steps.has_value() && *options.max_steps <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Must specify max_steps > 0, given: ", *options.max_steps));
  }
  // A ps task of a parameter-server job serves the workers' steps. In a
  // cluster (under mpirun) every process trains its towers of one
  // replicated model; rank 0 alone logs and writes. In a parameter-server
  // job the chief does.
  TW_ASSIGN_OR_RETURN(const training::ProcessRole role, RoleOf(config_));
  if (role.is_ps_task()) {
    TW_RETURN_IF_ERROR(role.server->Join());
    return TrainResult{.loss = std::numeric_limits<double>::quiet_NaN()};
  }
  std::ostream quiet(nullptr);  // discards
  std::ostream& log = role.chief ? *config_.log : quiet;
  // What ends Train early is decided for the whole cluster: rank 0's
  // checkpoint decides the skip, and one empty input ends every process.
  const absl::StatusOr<std::string> latest = LatestCheckpoint(config_.model_dir);
  TrainResult result;
  result.loss = std::numeric_limits<double>::quiet_NaN();
  std::optional<int64_t> saved;
  if (latest.ok()) saved = CheckpointGlobalStep(*latest);
  TW_ASSIGN_OR_RETURN(
      const bool skip,
      training::RankZeroDecides(role.cluster, options.max_steps.has_value() && saved.has_value() &&
                                                  *saved >= *options.max_steps));
  if (skip) {
    log << LogTimestamp() << ": Skipping training since max_steps has already saved.\n";
    result.global_step = saved.value_or(*options.max_steps);
    return result;
  }

  TW_ASSIGN_OR_RETURN(OpenedInput in, OpenInput(input_fn, /*with_labels=*/true));
  TW_ASSIGN_OR_RETURN(const bool have_input,
                      training::EveryProcess(role.cluster, in.first.has_value()));
  if (!have_input) {
    log << LogTimestamp() << ": The input is empty: nothing to train.\n";
    if (latest.ok()) result.global_step = CheckpointGlobalStep(*latest).value_or(0);
    return result;
  }
  TW_ASSIGN_OR_RETURN(std::unique_ptr<ModelGraph> g,
                      estimator_internal::BuildModelGraph(
                          model_fn_, config_, params_, ModeKeys::kTrain, in.features, in.labels));
  const Scope& root = g->root;
  // Where a TF user who imports a checkpoint's .meta looks for it.
  AddToCollection(root.graph(), GraphKeys::kTrainOp, g->spec.train_op);
  // The global step once the step's updates are done.
  Output step_after = ops::ReadVariableOp(
      root.WithOpName("global_step_after_train").WithControlDependencies({g->spec.train_op}),
      g->global_step.handle(), DT_INT64);
  train::SaverOptions saver_options;
  saver_options.max_to_keep = config_.keep_checkpoint_max;
  TW_ASSIGN_OR_RETURN(std::unique_ptr<train::Saver> saver,
                      train::Saver::Create(root, saver_options));
  // Rewires initializers only: a checkpoint of model_dir, restored below,
  // still wins over the warm start.
  if (config_.warm_start_from.has_value() && !latest.ok()) {
    log << LogTimestamp() << ": Warm-starting from "
        << config_.warm_start_from->ckpt_to_initialize_from << "\n";
    TW_RETURN_IF_ERROR(train::WarmStart(root, *config_.warm_start_from));
  }
  training::SessionStart start;
  start.init_global = GlobalVariablesInitializer(root);
  start.init_local = LocalVariablesInitializer(root);
  if (role.cluster != nullptr) start.broadcast = distribute::BroadcastGlobalVariables(root);
  if (role.server != nullptr) {
    // The other workers wait for the chief's variables.
    TW_RETURN_IF_ERROR(training::CheckNoCollectiveAcrossProcesses(*root.graph()));
    TW_ASSIGN_OR_RETURN(start.ready, train::ReportUninitializedVariables(root));
    start.wait_for_variables = absl::Seconds(config_.wait_for_variables_secs);
  }
  start.saver = saver.get();
  if (latest.ok()) start.checkpoint = *latest;
  TW_RETURN_IF_ERROR(root.status());

  TrainingHooks hooks = MakeTrainingHooks(config_, options, g->spec, saver.get(), role.chief);
  // Synchronous workers (TF's SyncReplicasOptimizer.make_session_run_hook):
  // the hook's End closes the chief's session, so it runs after every
  // other's (the last checkpoint's), with this process's role.
  std::stable_partition(hooks.list.begin(), hooks.list.end(), [](const auto& hook) {
    return dynamic_cast<training::SyncReplicasHook*>(hook.get()) == nullptr;
  });
  std::vector<training::SyncReplicasHook*> sync_hooks;
  for (const auto& hook : hooks.list) {
    if (auto* sync = dynamic_cast<training::SyncReplicasHook*>(hook.get())) {
      sync->set_chief(role.chief);
      sync_hooks.push_back(sync);
    }
  }
  training::Loop loop(
      {.loss = g->spec.loss, .train_ops = {g->spec.train_op}, .global_step = step_after},
      hooks.list, role.cluster);
  TW_RETURN_IF_ERROR(loop.Begin(root));

  // A worker of a parameter-server job runs a session over the whole job.
  TW_ASSIGN_OR_RETURN(std::unique_ptr<Session> session_of_step,
                      role.server != nullptr ? role.server->NewSession(config_.session_options)
                                             : NewSession(config_.session_options));
  const ClientSession session(root, std::move(session_of_step));
  // When training fails, a synchronous chief still releases the workers
  // waiting for its tokens and ends its sync loop before the session goes.
  absl::Cleanup stop_sync = [&] {
    for (training::SyncReplicasHook* sync : sync_hooks) sync->Stop(session).IgnoreError();
  };
  TW_RETURN_IF_ERROR(training::StartSession(session, role, start, log));
  TW_ASSIGN_OR_RETURN(result.global_step, ReadGlobalStep(session, *g));
  TW_RETURN_IF_ERROR(loop.AfterCreateSession(session, result.global_step));
  // As TF's StopAtStepHook.after_create_session: a worker of a
  // parameter-server job that starts once the others have reached the last
  // step takes none.
  if (hooks.stop != nullptr && result.global_step >= hooks.stop->last_step()) loop.RequestStop();
  TW_RETURN_IF_ERROR(loop.Run(session, [&]() -> absl::StatusOr<std::optional<training::Batch>> {
    TW_ASSIGN_OR_RETURN(std::optional<data::Element> batch, in.Next());
    if (!batch.has_value()) return std::nullopt;
    training::Batch step;
    TW_ASSIGN_OR_RETURN(step.feeds, Feeds(*g, in, *batch));
    step.examples = (*batch)[0].dim_size(0);
    return step;
  }));
  TW_RETURN_IF_ERROR(loop.End(session));
  result.global_step = loop.global_step();
  result.steps_run = loop.steps_run();
  if (loop.steps_run() > 0) result.loss = loop.loss();
  log << LogTimestamp() << ": Loss for final step: " << result.loss << ".\n" << std::flush;
  return result;
}

absl::StatusOr<MetricMap> Estimator::EvaluateOnThisProcess(const InputFn& input_fn,
                                                           std::optional<int64_t> steps,
                                                           const std::string& checkpoint_path) {
  TW_RETURN_IF_ERROR(CheckConfig(config_));
  std::string path = checkpoint_path;
  if (path.empty()) {
    absl::StatusOr<std::string> latest = LatestCheckpoint(config_.model_dir);
    if (!latest.ok()) {
      return absl::NotFoundError(
          absl::StrCat("Could not find trained model in model_dir: ", config_.model_dir));
    }
    path = *latest;
  }
  // In a cluster each process evaluates its part of the data and the metric
  // variables are summed over the processes at the end, so every process
  // gets the metrics of all of it.
  TW_ASSIGN_OR_RETURN(const training::ProcessRole role, RoleOf(config_));
  distribute::Cluster* const cluster = role.cluster;
  TW_ASSIGN_OR_RETURN(OpenedInput in, OpenInput(input_fn, /*with_labels=*/true));
  TW_ASSIGN_OR_RETURN(const bool all_have_input,
                      training::EveryProcess(cluster, in.first.has_value()));
  if (!all_have_input) {
    return absl::InvalidArgumentError(cluster == nullptr
                                          ? "Evaluate: the input is empty"
                                          : "Evaluate: the input of a process is empty");
  }
  TW_ASSIGN_OR_RETURN(std::unique_ptr<ModelGraph> g,
                      estimator_internal::BuildModelGraph(model_fn_, config_, params_,
                                                          ModeKeys::kEval, in.features, in.labels));
  const Scope& root = g->root;
  std::map<std::string, train::Metric> metrics = g->spec.eval_metric_ops;
  if (metrics.count("loss") == 0) {
    metrics["loss"] = train::Mean(root.NewSubScope("loss_metric"), g->spec.loss);
  }
  std::vector<Operation> updates;
  std::vector<Output> values;
  for (const auto& [name, metric] : metrics) {
    updates.push_back(metric.update);
    values.push_back(metric.value);
  }
  TW_ASSIGN_OR_RETURN(std::unique_ptr<train::Saver> saver, estimator_internal::RestoringSaver(*g));
  Operation init_global = GlobalVariablesInitializer(root);
  Operation init_local = LocalVariablesInitializer(root);
  std::optional<Operation> reduce_metrics;
  if (cluster != nullptr) {
    reduce_metrics =
        distribute::AllReduceVariables(root.NewSubScope("reduce_metrics"),
                                       GetVariables(*root.graph(), GraphKeys::kMetricVariables));
  }
  TW_RETURN_IF_ERROR(root.status());

  ClientSession session(root, config_.session_options);
  TW_RETURN_IF_ERROR(session.Run({}, {}, {init_global}, nullptr));
  TW_RETURN_IF_ERROR(saver->Restore(session, path));
  TW_RETURN_IF_ERROR(session.Run({}, {}, {init_local}, nullptr));
  for (int64_t step = 0; !steps.has_value() || step < *steps; ++step) {
    TW_ASSIGN_OR_RETURN(std::optional<data::Element> batch, in.Next());
    if (!batch.has_value()) break;
    TW_ASSIGN_OR_RETURN(ClientSession::FeedType feeds, Feeds(*g, in, *batch));
    TW_RETURN_IF_ERROR(session.Run(feeds, {}, updates, nullptr));
  }
  if (reduce_metrics.has_value()) {
    TW_RETURN_IF_ERROR(session.Run({}, {}, {*reduce_metrics}, nullptr));
  }
  std::vector<Tensor> out;
  TW_RETURN_IF_ERROR(session.Run(values, &out));
  MetricMap result;
  size_t i = 0;
  for (const auto& [name, metric] : metrics) {
    TW_ASSIGN_OR_RETURN(result[name], ScalarValue(out[i++], absl::StrCat("metric ", name)));
  }
  TW_ASSIGN_OR_RETURN(int64_t global_step, ReadGlobalStep(session, *g));
  result["global_step"] = static_cast<double>(global_step);
  std::vector<std::string> parts;
  for (const auto& [name, value] : result) parts.push_back(absl::StrCat(name, " = ", value));
  if (cluster == nullptr || cluster->is_chief()) {
    *config_.log << LogTimestamp() << ": Saving dict for global step " << global_step << ": "
                 << absl::StrJoin(parts, ", ") << "\n"
                 << std::flush;
  }
  return result;
}

absl::StatusOr<std::vector<PredictionMap>> Estimator::Predict(const InputFn& input_fn) {
  TW_RETURN_IF_ERROR(CheckConfig(config_));
  TW_ASSIGN_OR_RETURN(std::string path, LatestCheckpoint(config_.model_dir));
  TW_ASSIGN_OR_RETURN(OpenedInput in, OpenInput(input_fn, /*with_labels=*/false));
  std::vector<PredictionMap> result;
  if (!in.first.has_value()) return result;
  TW_ASSIGN_OR_RETURN(std::unique_ptr<ModelGraph> g,
                      estimator_internal::BuildModelGraph(model_fn_, config_, params_,
                                                          ModeKeys::kPredict, in.features, {}));
  if (g->spec.predictions.empty()) {
    return absl::InvalidArgumentError("model_fn returned no predictions in PREDICT mode");
  }
  std::vector<std::string> names;
  std::vector<Output> fetches;
  for (const auto& [name, output] : g->spec.predictions) {
    names.push_back(name);
    fetches.push_back(output);
  }
  TW_ASSIGN_OR_RETURN(std::unique_ptr<train::Saver> saver, estimator_internal::RestoringSaver(*g));
  Operation init_local = LocalVariablesInitializer(g->root);
  TW_RETURN_IF_ERROR(g->root.status());
  ClientSession session(g->root, config_.session_options);
  TW_RETURN_IF_ERROR(saver->Restore(session, path));
  TW_RETURN_IF_ERROR(session.Run({}, {}, {init_local}, nullptr));
  while (true) {
    TW_ASSIGN_OR_RETURN(std::optional<data::Element> batch, in.Next());
    if (!batch.has_value()) break;
    TW_ASSIGN_OR_RETURN(ClientSession::FeedType feeds, Feeds(*g, in, *batch));
    std::vector<Tensor> out;
    TW_RETURN_IF_ERROR(session.Run(feeds, fetches, &out));
    const int64_t rows = (*batch)[0].dim_size(0);
    const size_t first = result.size();
    result.resize(first + rows);
    for (size_t i = 0; i < out.size(); ++i) {
      if (out[i].dims() == 0 || out[i].dim_size(0) != rows) {
        return absl::InvalidArgumentError(
            absl::StrCat("prediction '", names[i], "' has shape ", out[i].shape().DebugString(),
                         ", not one row per example of the batch of ", rows));
      }
      const std::vector<int64_t> row_dims(out[i].shape().dim_sizes().begin() + 1,
                                          out[i].shape().dim_sizes().end());
      TW_ASSIGN_OR_RETURN(TensorShape row_shape, TensorShape::FromDims(row_dims));
      for (int64_t r = 0; r < rows; ++r) {
        TW_ASSIGN_OR_RETURN(Tensor row, out[i].Slice(r, r + 1));
        TW_ASSIGN_OR_RETURN(result[first + r][names[i]], row.Reshaped(row_shape));
      }
    }
  }
  return result;
}

}  // namespace towerflow
