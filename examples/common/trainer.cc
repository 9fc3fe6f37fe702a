#include "examples/common/trainer.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/file_io.h"
#include "core/status_macros.h"
#include "distribute/cluster.h"
#include "estimator/estimator.h"
#include "estimator/mixed_precision.h"
#include "estimator/replicate_model_fn.h"
#include "examples/common/input.h"
#include "framework/device.h"
#include "graph/graph_io.h"
#include "saved_model/loader.h"
#include "tools/dot.h"
#include "tools/flags.h"
#include "train/checkpoint.h"

namespace towerflow {
namespace examples {
constexpr int64_t kTutorialMaxSteps = 1000000;
}  // namespace examples
}  // namespace towerflow

ABSL_FLAG(std::string, data_dir, "",
          "CIFAR-10 binaries (data_batch_1.bin ... test_batch.bin); without them the "
          "program trains on Fashion-MNIST");
ABSL_FLAG(std::string, fashion_mnist_dir, towerflow::examples::kFashionMnistDir,
          "Fashion-MNIST's IDX files (Debian's dataset-fashion-mnist)");
ABSL_FLAG(std::string, model_dir, "",
          "checkpoints, events, the graph and the export (empty: /tmp/<program>); "
          "training resumes from its latest checkpoint");
ABSL_FLAG(int64_t, num_towers, 0, "towers (0: one per GPU, else 2 on virtual CPUs)");
ABSL_FLAG(std::vector<std::string>, devices, {},
          "the towers' devices instead, comma-separated (/gpu:0,/gpu:1)");
ABSL_FLAG(std::string, aggregation, "parameter_server",
          "parameter_server (the tutorial's: variables and gradient sums on one device) or "
          "all_reduce (variables mirrored per tower, NCCL on GPUs)");
ABSL_FLAG(int64_t, batch_size, 128, "examples per tower per step");
ABSL_FLAG(int64_t, max_steps, towerflow::examples::kTutorialMaxSteps,
          "stop at this global step (the tutorial's)");
ABSL_FLAG(double, train_seconds, 0, "also stop after this many seconds (0: no limit)");
ABSL_FLAG(int64_t, log_every, 10, "a step line every N steps (the tutorial's 10)");
ABSL_FLAG(int64_t, profile_every, 0,
          "a Chrome trace of every Nth step in model_dir (timeline-<step>.json) and the time "
          "per op type at the end (0: none)");
ABSL_FLAG(int64_t, seed, 1, "random seed of the initializers and the input order");
ABSL_FLAG(bool, eval, true, "evaluate on the test set after training");
ABSL_FLAG(int32_t, inter_op_threads, 0,
          "kernels run side by side (TF's inter_op_parallelism_threads; 0: the session's "
          "default, 1 on CPUs alone)");
ABSL_FLAG(int32_t, intra_op_threads, 0,
          "threads one kernel's work is split over (TF's intra_op_parallelism_threads; 0: one "
          "per hardware thread)");
ABSL_FLAG(int64_t, save_summary_steps, 100,
          "write the loss and global_step/sec to the event file every N steps (RunConfig's "
          "save_summary_steps)");
ABSL_FLAG(bool, replay_steps, false,
          "record the training step once on a GPU and replay it (SessionOptions::replay; "
          "runtime/step_replay.h)");
ABSL_FLAG(std::string, precision, "float32",
          "float32, mixed_float16 or mixed_bfloat16: products and what lies between them in "
          "the 16-bit type, float32 variables, a dynamic loss scale for float16 "
          "(estimator/mixed_precision.h)");
ABSL_FLAG(bool, graph_optimizer, true,
          "rewrite each step's graph before it runs (fused convolutions and matrix products, "
          "padding folded into convolutions); false runs the graph as written");

namespace towerflow {
namespace examples {
namespace {

// Ends training after a wall-clock budget.
class TimeLimitHook : public SessionRunHook {
 public:
  explicit TimeLimitHook(double seconds) : seconds_(seconds) {}
  absl::Status AfterCreateSession(const ClientSession&, int64_t) override {
    start_ = std::chrono::steady_clock::now();
    return absl::OkStatus();
  }
  absl::Status AfterRun(const StepResult&, const std::vector<Tensor>&,
                        bool* request_stop) override {
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start_;
    if (elapsed.count() >= seconds_) *request_stop = true;
    return absl::OkStatus();
  }

 private:
  const double seconds_;
  std::chrono::steady_clock::time_point start_;
};

// The SavedModel against the Estimator in process: the classes of the first
// 100 test images must agree.
absl::Status CheckSavedModel(Estimator& estimator, const std::string& export_dir,
                             const InputFn& test_input) {
  constexpr int64_t kImages = 100;
  TW_ASSIGN_OR_RETURN(InputSpec spec, test_input());
  std::unique_ptr<data::Iterator> it = spec.dataset.MakeIterator();
  TW_ASSIGN_OR_RETURN(std::optional<data::Element> batch, it->GetNext());
  if (!batch.has_value()) return absl::OkStatus();  // no test data
  const int64_t n = std::min(kImages, (*batch)[0].dim_size(0));
  TW_ASSIGN_OR_RETURN(Tensor images, (*batch)[0].Slice(0, n));
  InputFn first = [&]() -> absl::StatusOr<InputSpec> {
    TW_ASSIGN_OR_RETURN(data::Dataset d, data::Dataset::FromTensorSlices({images}));
    return InputSpec{d.Batch(n), {spec.features[0]}, {}};
  };
  TW_ASSIGN_OR_RETURN(std::vector<PredictionMap> in_process, estimator.Predict(first));
  TW_ASSIGN_OR_RETURN(SavedModelBundle bundle, LoadSavedModel(export_dir, {kSavedModelTagServe}));
  TW_ASSIGN_OR_RETURN(SignatureTensors served,
                      bundle.Run("serving_default", {{spec.features[0], images}}, {"classes"}));
  const Tensor& classes = served.at("classes");
  int64_t agree = 0;
  for (int64_t i = 0; i < n && i < static_cast<int64_t>(in_process.size()); ++i) {
    agree += classes.data<int64_t>()[i] == in_process[i].at("classes").data<int64_t>()[0];
  }
  std::cout << "SavedModel check: " << agree << " of " << n
            << " test images get the same class from LoadSavedModel as in process\n";
  if (agree != n) {
    return absl::InternalError(absl::StrCat("the SavedModel in ", export_dir, " disagrees on ",
                                            n - agree, " of ", n, " classes"));
  }
  return absl::OkStatus();
}

absl::Status Main(const ExampleModel& model) {
  const std::string data_dir = absl::GetFlag(FLAGS_data_dir);
  const std::string fashion_dir = absl::GetFlag(FLAGS_fashion_mnist_dir);
  std::string model_dir = absl::GetFlag(FLAGS_model_dir);
  if (model_dir.empty()) model_dir = "/tmp/" + model.name;
  const int64_t per_tower_batch = absl::GetFlag(FLAGS_batch_size);
  const int64_t max_steps = absl::GetFlag(FLAGS_max_steps);
  const double train_seconds = absl::GetFlag(FLAGS_train_seconds);
  const int64_t log_every = absl::GetFlag(FLAGS_log_every);
  const int64_t profile_every = absl::GetFlag(FLAGS_profile_every);
  const int64_t seed = absl::GetFlag(FLAGS_seed);
  const bool evaluate = absl::GetFlag(FLAGS_eval);

  // Towers: the devices given, one per GPU, or virtual CPUs.
  const int gpus = NumLocalDevices("GPU");
  int64_t num_towers = absl::GetFlag(FLAGS_num_towers);
  if (num_towers == 0) num_towers = gpus > 0 ? gpus : 2;
  ReplicateOptions replicate;
  replicate.uneven_batches = true;  // the test set's last batch
  for (const std::string& device : absl::GetFlag(FLAGS_devices)) {
    if (!device.empty()) replicate.devices.push_back(device);
  }
  if (replicate.devices.empty()) {
    for (int i = 0; i < num_towers; ++i) {
      replicate.devices.push_back(absl::StrCat(i < gpus ? "/gpu:" : "/cpu:", i));
    }
  }
  const std::string aggregation = absl::GetFlag(FLAGS_aggregation);
  if (aggregation == "all_reduce") {
    replicate.aggregation = GradientAggregation::kAllReduce;
  } else if (aggregation != "parameter_server") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--aggregation must be parameter_server or all_reduce, not '", aggregation, "'"));
  }
  num_towers = static_cast<int64_t>(replicate.devices.size());
  TW_ASSIGN_OR_RETURN(ModelFn towers, ReplicateModelFn(model.model_fn, replicate));

  // The data: the model's own, CIFAR-10's binaries, or Fashion-MNIST.
  DataSource source;
  std::optional<DataSource> own;
  if (model.own_data) {
    TW_ASSIGN_OR_RETURN(own, model.own_data(data_dir));
  }
  if (own.has_value()) {
    source = *std::move(own);
  } else if (HasCifar10(data_dir)) {
    source = {"CIFAR-10 from " + data_dir,
              [&model, data_dir](bool train, int64_t batch, uint64_t seed) {
                return model.cifar10_input(data_dir, train, batch, seed, PipelineOptions());
              },
              model.cifar10_side};
  } else if (HasFashionMnist(fashion_dir)) {
    source = {"Fashion-MNIST from " + fashion_dir,
              [fashion_dir](bool train, int64_t batch, uint64_t seed) {
                return FashionMnistInput(fashion_dir, train, batch, seed);
              },
              28,
              1,
              10,
              60000};
  } else {
    return absl::NotFoundError(absl::StrCat("no CIFAR-10 binaries in --data_dir='", data_dir,
                                            "' and no Fashion-MNIST in ", fashion_dir,
                                            " (tools/bootstrap.sh installs it)"));
  }
  const int64_t train_examples = source.train_examples;
  // Under mpirun every process trains and evaluates its towers on its part
  // of the data (the input shards itself); rank 0 alone writes and exports.
  TW_ASSIGN_OR_RETURN(distribute::Cluster * cluster, distribute::Cluster::Get());
  const int64_t batch = per_tower_batch * num_towers;  // per process
  const int64_t global_batch = batch * cluster->size();
  if (cluster->is_chief()) {
    std::cerr << "Training on " << source.description << " with "
              << (cluster->size() > 1 ? absl::StrCat(cluster->size(), " processes of ") : "")
              << num_towers << " towers (" << absl::StrJoin(replicate.devices, ", ") << "), "
              << global_batch << " examples per step, " << aggregation << " aggregation\n";
  }
  auto input = [&](bool train) -> InputFn {
    return [=]() { return source.input(train, batch, seed); };
  };

  RunConfig config;
  config.model_dir = model_dir;
  config.log_step_count_steps = log_every;
  config.random_seed = seed;
  config.save_summary_steps = absl::GetFlag(FLAGS_save_summary_steps);
  // A progress bar towards the default 1,000,000 steps would not move when a
  // time limit ends training; the log lines show its progress.
  if (train_seconds > 0 && max_steps == kTutorialMaxSteps) {
    config.progress_bar = RunConfig::ProgressBar::kOff;
  }
  config.session_options.device_count["CPU"] = static_cast<int>(std::max<int64_t>(num_towers, 1));
  config.session_options.inter_op_parallelism_threads = absl::GetFlag(FLAGS_inter_op_threads);
  config.session_options.intra_op_parallelism_threads = absl::GetFlag(FLAGS_intra_op_threads);
  config.session_options.replay.enabled = absl::GetFlag(FLAGS_replay_steps);
  if (!absl::GetFlag(FLAGS_graph_optimizer)) {
    config.session_options.optimizer = GraphOptimizerOptions::None();
  }
  Params params = model.params;
  TW_ASSIGN_OR_RETURN(const Precision precision, ParsePrecision(absl::GetFlag(FLAGS_precision)));
  SetPrecision(precision, &config.session_options, &params);
  params.values["num_classes"] = source.num_classes;
  params.values["batch_size"] = static_cast<double>(batch);
  params.values["steps_per_epoch"] = static_cast<double>(train_examples / global_batch);
  if (model.flags_to_params) model.flags_to_params(&params);
  Estimator estimator(towers, config, params);

  TrainOptions train;
  train.max_steps = max_steps;
  if (train_seconds > 0) train.hooks.push_back(std::make_shared<TimeLimitHook>(train_seconds));
  if (profile_every > 0) {
    // The traces, and at the end the time per op type (printed by the chief).
    train.hooks.push_back(std::make_shared<ProfilerHook>(
        model_dir, profile_every, cluster->is_chief() ? &std::cerr : nullptr));
  }
  TW_ASSIGN_OR_RETURN(TrainResult trained, estimator.Train(input(true), train));
  if (cluster->is_chief()) {
    std::cerr << "Trained to global step " << trained.global_step << " ("
              << trained.steps_run * global_batch / static_cast<double>(train_examples)
              << " epochs in this run)\n";
  }
  if (evaluate) {  // every process its part of the test set
    TW_ASSIGN_OR_RETURN(MetricMap metrics, estimator.Evaluate(input(false)));
    if (cluster->is_chief()) {
      std::cout << LogTimestamp()
                << ": precision @ 1 = " << absl::StrFormat("%.4f", metrics["accuracy"])
                << " (test set, global step " << metrics["global_step"] << ")\n";
    }
  }
  if (!cluster->is_chief()) return absl::OkStatus();

  // The graph and a picture of the towers; the serving export.
  const int64_t side = source.side, channels = source.channels;
  Signature features = {{"images", {DT_FLOAT, PartialTensorShape({-1, side, side, channels})}}};
  Signature labels = {{"labels", {DT_INT32, PartialTensorShape({-1})}}};
  const std::string graph_path = model_dir + "/graph.pbtxt";
  TW_RETURN_IF_ERROR(estimator.ExportGraph(ModeKeys::kTrain, features, labels, graph_path));
  TW_ASSIGN_OR_RETURN(GraphDef graph, ReadGraphDef(graph_path));
  const std::string dot_path = model_dir + "/towers.dot";
  TW_RETURN_IF_ERROR(WriteFileAtomically(dot_path, tools::DotFromGraphDef(graph)));
  TW_ASSIGN_OR_RETURN(std::string export_dir,
                      estimator.ExportSavedModel(model_dir + "/export", features));
  TW_RETURN_IF_ERROR(CheckSavedModel(estimator, export_dir, input(false)));
  TW_ASSIGN_OR_RETURN(const std::string frozen_dir,
                      estimator.Export(model_dir + "/frozen", features));
  TW_ASSIGN_OR_RETURN(std::string checkpoint, LatestCheckpoint(model_dir));
  std::cout << "checkpoint: " << checkpoint << "\n"
            << "training graph: " << graph_path << " (" << graph.node_size() << " nodes)\n"
            << "towers picture: " << dot_path << " (dot -Tsvg " << dot_path << " -o towers.svg)\n"
            << "serving export (SavedModel): " << export_dir << " (towerflow saved_model show "
            << export_dir << " --tag_set serve)\n"
            << "frozen serving graph: " << frozen_dir << "/model.meta\n";
  return absl::OkStatus();
}

}  // namespace

int TrainMain(const ExampleModel& model, int argc, char** argv) {
  // oneDNN's OpenMP threads spin after each convolution and take a core
  // from the executor's pool; libgomp reads OMP_WAIT_POLICY when it loads,
  // so set it and start again (bench/README.md has the figures).
  if (std::getenv("OMP_WAIT_POLICY") == nullptr) {
    setenv("OMP_WAIT_POLICY", "passive", 1);
    execv("/proc/self/exe", argv);  // returns only on failure: go on as we are
  }
  const std::vector<std::string> args = ParseCommandLine(
      argc, argv,
      absl::StrCat(model.description, "\n\nusage: ", model.name,
                   " [FLAGS]\n\nTrains on CIFAR-10 when --data_dir has its binaries, else on "
                   "Fashion-MNIST; then\nevaluates on the test set, exports a SavedModel and a "
                   "frozen serving graph, and\nwrites the training graph and a picture of the "
                   "towers into --model_dir. Under\nmpirun the processes train as one model."));
  if (!args.empty()) {
    std::cerr << model.name << ": unexpected argument '" << args[0]
              << "' (flags are --name=value; --help lists them)\n";
    return 2;
  }
  const absl::Status status = Main(model);
  if (!status.ok()) {
    std::cerr << model.name << ": " << status << "\n";
    return 1;
  }
  return 0;
}

}  // namespace examples
}  // namespace towerflow
