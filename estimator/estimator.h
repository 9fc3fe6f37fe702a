// Estimator: trains, evaluates, predicts with and exports a model_fn, as
// TensorFlow 1.x's tf.estimator.Estimator.
//
//   RunConfig config;
//   config.model_dir = "/tmp/fashion";
//   config.session_options.device_count["CPU"] = 2;
//   TW_ASSIGN_OR_RETURN(ModelFn towers, ReplicateModelFn(MyModel, {.devices = {...}}));
//   Estimator estimator(towers, config);
//   auto train_input = [&]() -> absl::StatusOr<InputSpec> {
//     return InputSpec{dataset.Shuffle(10000, 1).Repeat().Batch(128, true).Prefetch(2),
//                      {"images"}, {"labels"}};
//   };
//   TW_ASSIGN_OR_RETURN(TrainResult r, estimator.Train(train_input, {.max_steps = 5000}));
//   TW_ASSIGN_OR_RETURN(MetricMap m, estimator.Evaluate(eval_input));  // m["accuracy"]
//
// Each call builds a fresh graph: placeholders named after the input's
// components (their dtype and shape, with an unknown batch size, come from
// the first batch), the global step, then model_fn's graph. Training
// resumes from the latest checkpoint in model_dir and writes one at the end;
// Evaluate and Predict restore the latest. A batch is fed per step; the end
// of the data ends Train, Evaluate and Predict cleanly.
//
// Not thread-safe: one call at a time.
#ifndef TOWERFLOW_ESTIMATOR_ESTIMATOR_H_
#define TOWERFLOW_ESTIMATOR_ESTIMATOR_H_

#include <cstdint>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/tensor_shape.h"
#include "data/dataset.h"
#include "estimator/model_fn.h"
#include "estimator/serving_input_receiver.h"
#include "runtime/session.h"
#include "train/warm_start.h"
#include "training/hooks.h"

namespace towerflow {

namespace distribute {
class Server;  // distribute/server.h
}  // namespace distribute

struct RunConfig {
  // Where checkpoints go and come from. Required by Train, Evaluate,
  // Predict and Export.
  std::string model_dir;
  // Checkpoint every this many steps, or seconds (TF's default 600 s);
  // 0 turns either off. A checkpoint is always written at the start and end.
  int64_t save_checkpoints_steps = 0;
  double save_checkpoints_secs = 600;
  int keep_checkpoint_max = 5;
  // The step log line and global_step/sec every this many steps (0: off).
  int64_t log_step_count_steps = 100;
  // TensorBoard events (loss, global_step/sec, the graph's summaries) in
  // model_dir every this many steps (0: off), as TF's default 100.
  int64_t save_summary_steps = 100;
  // Devices (device_count["CPU"] = 2 for two virtual CPUs), soft placement
  // (on by default, as the Estimator's sessions), threads.
  SessionOptions session_options = DefaultSessionOptions();
  // The graph-level random seed (tf.set_random_seed).
  std::optional<int64_t> random_seed;
  // Warm start (TF's RunConfig... warm_start_from): when model_dir has no
  // checkpoint yet, Train starts the chosen variables from this checkpoint
  // instead of their initializers (train/warm_start.h).
  std::optional<train::WarmStartSettings> warm_start_from;
  // Under mpirun (a distribute::Cluster of several processes), Train runs
  // the processes as one job: variables broadcast from rank 0 after they
  // are initialized or restored, the processes stepping together until the
  // first input ends, and rank 0 alone logging and writing checkpoints and
  // summaries. Each process's input_fn should read its part of the data
  // (Dataset::Shard(size, rank)). The model_fn replicates across processes
  // through ReplicateModelFn (ReplicateOptions::across_processes).
  // Evaluate sums the processes' metric variables at the end, so each gets
  // the metrics of all their data; Predict is per process. false: this
  // process trains and evaluates alone.
  bool across_processes = true;
  // This process's task of a TF 1.x parameter-server job
  // (distribute/server.h), as TF's RunConfig takes it from TF_CONFIG; null:
  // no such job. Train on a ps task serves the workers until each of them
  // has stopped its Server (Server::Stop, or its destructor), then returns
  // no steps (TF's train_and_evaluate joins the server there). Train on a
  // worker builds the model under ReplicaDeviceSetter -- the variables, the
  // global step among them, round robin over the ps tasks, everything else
  // on this task -- and runs it in a session over the whole job: the chief
  // (Server::is_chief) initializes or restores the variables and alone logs
  // and writes checkpoints and summaries; the other workers wait up to
  // wait_for_variables_secs for them. Each worker steps on its own input
  // and the updates are asynchronous (TF's default), or synchronous with a
  // train::SyncReplicasOptimizer and its training::SyncReplicasHook in the
  // EstimatorSpec's training_hooks (TF's make_session_run_hook): the global
  // step advances once per replicas_to_aggregate gradients, and the chief's
  // end releases every worker waiting for a token. The stop hooks read the shared
  // global step, so max_steps ends every worker. Evaluate, Predict and the
  // exports run on this process alone, from model_dir's checkpoints, and
  // across_processes is ignored: the ps tasks take part in no collective,
  // so a model_fn replicated with ReplicateModelFn needs
  // ReplicateOptions::across_processes = false (Train's InvalidArgument
  // otherwise).
  std::shared_ptr<distribute::Server> server;
  double wait_for_variables_secs = 600;
  // Where the log goes.
  std::ostream* log = &std::cerr;
  // A progress bar on `log`: kAuto draws one when stderr is a terminal and
  // `log` is std::cerr.
  enum class ProgressBar { kAuto, kOn, kOff };
  ProgressBar progress_bar = ProgressBar::kAuto;

  // Fluent setters, as TF's RunConfig().replace(...):
  //   RunConfig().set_model_dir(dir).set_session_options(options)
  RunConfig& set_model_dir(std::string dir) {
    model_dir = std::move(dir);
    return *this;
  }
  RunConfig& set_save_checkpoints_steps(int64_t steps) {
    save_checkpoints_steps = steps;
    return *this;
  }
  RunConfig& set_save_checkpoints_secs(double secs) {
    save_checkpoints_secs = secs;
    return *this;
  }
  RunConfig& set_keep_checkpoint_max(int max) {
    keep_checkpoint_max = max;
    return *this;
  }
  RunConfig& set_log_step_count_steps(int64_t steps) {
    log_step_count_steps = steps;
    return *this;
  }
  RunConfig& set_save_summary_steps(int64_t steps) {
    save_summary_steps = steps;
    return *this;
  }
  RunConfig& set_session_options(SessionOptions options) {
    session_options = std::move(options);
    return *this;
  }
  RunConfig& set_random_seed(int64_t seed) {
    random_seed = seed;
    return *this;
  }
  // All trainable variables, under their own names.
  RunConfig& set_warm_start_from(std::string checkpoint) {
    warm_start_from = train::WarmStartSettings{std::move(checkpoint)};
    return *this;
  }
  RunConfig& set_warm_start_from(train::WarmStartSettings settings) {
    warm_start_from = std::move(settings);
    return *this;
  }

  static SessionOptions DefaultSessionOptions() {
    SessionOptions options;
    options.allow_soft_placement = true;
    return options;
  }
};

// What an input_fn returns: a dataset of batches whose leading components
// are the features, named by `features`, and the rest the labels, named by
// `labels` (empty for prediction). Component i's placeholder is named after
// its feature or label.
struct InputSpec {
  data::Dataset dataset;
  std::vector<std::string> features;
  std::vector<std::string> labels;
};
using InputFn = std::function<absl::StatusOr<InputSpec>()>;

struct TrainOptions {
  // At most one: train `steps` more steps, or until global step `max_steps`
  // (nothing to do when the checkpoint is there already). Neither: until the
  // data ends.
  std::optional<int64_t> steps;
  std::optional<int64_t> max_steps;
  HookList hooks;
};

struct TrainResult {
  int64_t global_step = 0;  // where training ended
  int64_t steps_run = 0;    // by this call
  double loss = 0;          // of the last step (NaN when none ran)
};

// One example's predictions: name -> its row of each prediction.
using PredictionMap = std::map<std::string, Tensor>;

// Metric name -> value; includes "loss" (the mean of the batches' losses)
// and "global_step" (of the checkpoint evaluated).
using MetricMap = std::map<std::string, double>;

class Estimator {
 public:
  Estimator(ModelFn model_fn, RunConfig config, Params params = {})
      : model_fn_(std::move(model_fn)), config_(std::move(config)), params_(std::move(params)) {}

  // See TrainOptions. Errors: model_fn's (the scope's status, or
  // InvalidArgument "Missing loss." / "Missing train_op."), the data's, a
  // hook's (the NaN guard: "Model diverged with loss = NaN ...").
  // Across processes (RunConfig::across_processes under mpirun) an error on
  // one process stops the cluster (distribute::Cluster::Abort): the others'
  // Train returns Aborted, naming the process and its error.
  absl::StatusOr<TrainResult> Train(const InputFn& input_fn, const TrainOptions& options = {});

  // Runs every eval metric's update over the data (or `steps` batches) from
  // the latest checkpoint (or `checkpoint_path`). NotFound when there is
  // no checkpoint. Across processes, an error stops the cluster as Train's.
  absl::StatusOr<MetricMap> Evaluate(const InputFn& input_fn,
                                     std::optional<int64_t> steps = std::nullopt,
                                     const std::string& checkpoint_path = "");

  // model_fn's predictions for every example of the data, in order (TF's
  // predict() yields one dict per example). The rows share the batches'
  // buffers.
  absl::StatusOr<std::vector<PredictionMap>> Predict(const InputFn& input_fn);

  // Writes the GraphDef model_fn builds in `mode` over placeholders of
  // `features` and `labels` (text for .pbtxt), e.g. to draw the towers.
  absl::Status ExportGraph(ModeKeys mode, const Signature& features, const Signature& labels,
                           const std::string& path);

  // Exports the PREDICT graph for serving, frozen with the latest
  // checkpoint's values (TF's freeze_graph: variable reads become
  // constants), as `<export_dir>/model.meta`: a MetaGraphDef whose
  // signatures (see ExportSavedModel) take a placeholder per feature; its
  // "serving_default" maps each output to "outputs/<name>:0". Load it with
  // ExportedModel (or TF's import_meta_graph). Returns export_dir.
  absl::StatusOr<std::string> Export(const std::string& export_dir, const Signature& features);

  // TF's export_savedmodel: writes the PREDICT graph over the receiver as a
  // SavedModel (saved_model/builder.h) in `<export_dir_base>/<timestamp>`,
  // tag "serve": the graph with its variables and TF's saver subgraph, the
  // latest checkpoint's values (the moving averages where model_fn restores
  // them) in variables/, and a SignatureDef per export output
  // (EstimatorSpec::export_outputs; BuildServingMetaGraph in
  // estimator/export.h says how they are made), a signature the receiver
  // cannot feed being left out with a line in the log. LoadSavedModel — or
  // TensorFlow's loader and TF Serving — serves it. NotFound without a
  // checkpoint. Returns the export directory.
  absl::StatusOr<std::string> ExportSavedModel(const std::string& export_dir_base,
                                               const ServingInputReceiverFn& receiver_fn);
  // With BuildRawServingInputReceiverFn(features): a placeholder per feature.
  absl::StatusOr<std::string> ExportSavedModel(const std::string& export_dir_base,
                                               const Signature& features);

  const RunConfig& config() const { return config_; }

 private:
  absl::StatusOr<TrainResult> TrainOnThisProcess(const InputFn& input_fn,
                                                 const TrainOptions& options);
  absl::StatusOr<MetricMap> EvaluateOnThisProcess(const InputFn& input_fn,
                                                  std::optional<int64_t> steps,
                                                  const std::string& checkpoint_path);

  ModelFn model_fn_;
  RunConfig config_;
  Params params_;
};

// A model Estimator::Export wrote, ready to serve.
class ExportedModel {
 public:
  static absl::StatusOr<ExportedModel> Load(const std::string& export_dir,
                                            const SessionOptions& options = {});
  // Feeds `inputs` (every input of the signature) and returns every output.
  absl::StatusOr<std::map<std::string, Tensor>> Run(
      const std::map<std::string, Tensor>& inputs) const;

  const Signature& inputs() const { return inputs_; }
  // Output name -> tensor name ("outputs/classes:0").
  const std::map<std::string, std::string>& outputs() const { return outputs_; }

 private:
  std::shared_ptr<Session> session_;
  Signature inputs_;
  std::map<std::string, std::string> input_tensors_;  // input name -> tensor name
  std::map<std::string, std::string> outputs_;
};

}  // namespace towerflow

#endif  // TOWERFLOW_ESTIMATOR_ESTIMATOR_H_
