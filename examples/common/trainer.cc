#include "examples/common/trainer.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/file_io.h"
#include "core/status_macros.h"
#include "distribute/cluster.h"
#include "estimator/estimator.h"
#include "estimator/replicate_model_fn.h"
#include "examples/common/input.h"
#include "framework/device.h"
#include "graph/graph_io.h"
#include "saved_model/loader.h"
#include "tools/dot.h"
#include "train/checkpoint.h"

namespace towerflow {
namespace examples {
namespace {

struct Flags {
  std::map<std::string, std::string> values;

  std::string Get(const std::string& name, const std::string& fallback) const {
    auto it = values.find(name);
    return it == values.end() ? fallback : it->second;
  }
  absl::StatusOr<int64_t> Int(const std::string& name, int64_t fallback) const {
    return Number(name, fallback);
  }
  absl::StatusOr<double> Double(const std::string& name, double fallback) const {
    return Number(name, fallback);
  }

 private:
  template <typename T>
  absl::StatusOr<T> Number(const std::string& name, T fallback) const {
    auto it = values.find(name);
    if (it == values.end()) return fallback;
    T v;
    bool ok;
    if constexpr (std::is_integral_v<T>) {
      ok = absl::SimpleAtoi(it->second, &v);
    } else {
      ok = absl::SimpleAtod(it->second, &v);
    }
    if (!ok) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", name, std::is_integral_v<T> ? " needs an integer" : " needs a number",
                       ", got '", it->second, "'"));
    }
    return v;
  }
};

absl::StatusOr<Flags> ParseFlags(int argc, char** argv, const std::vector<std::string>& extra) {
  std::vector<std::string> known = {
      "data_dir",     "fashion_mnist_dir", "model_dir",     "num_towers", "devices", "aggregation",
      "batch_size",   "max_steps",         "train_seconds", "log_every",  "seed",    "eval",
      "profile_every"};
  known.insert(known.end(), extra.begin(), extra.end());
  Flags flags;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const size_t eq = arg.find('=');
    if (arg.rfind("--", 0) != 0 || eq == std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat("expected --name=value, got '", arg, "'"));
    }
    const std::string name = arg.substr(2, eq - 2);
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag --", name));
    }
    flags.values[name] = arg.substr(eq + 1);
  }
  return flags;
}

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

absl::Status Main(const ExampleModel& model, int argc, char** argv) {
  TW_ASSIGN_OR_RETURN(Flags flags, ParseFlags(argc, argv, model.param_flags));
  const std::string data_dir = flags.Get("data_dir", "");
  const std::string fashion_dir = flags.Get("fashion_mnist_dir", kFashionMnistDir);
  const std::string model_dir = flags.Get("model_dir", "/tmp/" + model.name);
  TW_ASSIGN_OR_RETURN(int64_t per_tower_batch, flags.Int("batch_size", 128));
  TW_ASSIGN_OR_RETURN(int64_t max_steps, flags.Int("max_steps", 1000000));
  TW_ASSIGN_OR_RETURN(double train_seconds, flags.Double("train_seconds", 0));
  TW_ASSIGN_OR_RETURN(int64_t log_every, flags.Int("log_every", 10));
  TW_ASSIGN_OR_RETURN(int64_t profile_every, flags.Int("profile_every", 0));
  TW_ASSIGN_OR_RETURN(int64_t seed, flags.Int("seed", 1));
  const bool evaluate = flags.Get("eval", "true") != "false";

  // Towers: the devices given, one per GPU, or virtual CPUs.
  const int gpus = NumLocalDevices("GPU");
  TW_ASSIGN_OR_RETURN(int64_t num_towers, flags.Int("num_towers", gpus > 0 ? gpus : 2));
  ReplicateOptions replicate;
  replicate.uneven_batches = true;  // the test set's last batch
  if (flags.values.count("devices") > 0) {
    replicate.devices = absl::StrSplit(flags.Get("devices", ""), ',', absl::SkipEmpty());
  } else {
    for (int i = 0; i < num_towers; ++i) {
      replicate.devices.push_back(absl::StrCat(i < gpus ? "/gpu:" : "/cpu:", i));
    }
  }
  const std::string aggregation = flags.Get("aggregation", "parameter_server");
  if (aggregation == "all_reduce") {
    replicate.aggregation = GradientAggregation::kAllReduce;
  } else if (aggregation != "parameter_server") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--aggregation must be parameter_server or all_reduce, not '", aggregation, "'"));
  }
  num_towers = static_cast<int64_t>(replicate.devices.size());
  TW_ASSIGN_OR_RETURN(ModelFn towers, ReplicateModelFn(model.model_fn, replicate));

  const bool cifar = HasCifar10(data_dir);
  const int64_t train_examples = cifar ? 50000 : 60000;
  // Under mpirun every process trains and evaluates its towers on its part
  // of the data (the input shards itself); rank 0 alone writes and exports.
  TW_ASSIGN_OR_RETURN(distribute::Cluster * cluster, distribute::Cluster::Get());
  const int64_t batch = per_tower_batch * num_towers;  // per process
  const int64_t global_batch = batch * cluster->size();
  if (!cifar && !HasFashionMnist(fashion_dir)) {
    return absl::NotFoundError(absl::StrCat("no CIFAR-10 binaries in --data_dir='", data_dir,
                                            "' and no Fashion-MNIST in ", fashion_dir,
                                            " (tools/bootstrap.sh installs it)"));
  }
  if (cluster->is_chief()) {
    std::cerr << "Training on "
              << (cifar ? "CIFAR-10 from " + data_dir : "Fashion-MNIST from " + fashion_dir)
              << " with "
              << (cluster->size() > 1 ? absl::StrCat(cluster->size(), " processes of ") : "")
              << num_towers << " towers (" << absl::StrJoin(replicate.devices, ", ") << "), "
              << global_batch << " examples per step, " << aggregation << " aggregation\n";
  }
  auto input = [&](bool train) -> InputFn {
    return [=]() {
      return cifar ? model.cifar10_input(data_dir, train, batch, seed, PipelineOptions())
                   : FashionMnistInput(fashion_dir, train, batch, seed);
    };
  };

  RunConfig config;
  config.model_dir = model_dir;
  config.log_step_count_steps = log_every;
  config.random_seed = seed;
  // A progress bar towards the default 1,000,000 steps would not move when a
  // time limit ends training; the log lines show its progress.
  if (train_seconds > 0 && flags.values.count("max_steps") == 0) {
    config.progress_bar = RunConfig::ProgressBar::kOff;
  }
  config.session_options.device_count["CPU"] = static_cast<int>(std::max<int64_t>(num_towers, 1));
  Params params = model.params;
  params.values["num_classes"] = 10;
  params.values["batch_size"] = static_cast<double>(batch);
  params.values["steps_per_epoch"] = static_cast<double>(train_examples / global_batch);
  for (const std::string& name : model.param_flags) {
    if (flags.values.count(name) == 0) continue;
    TW_ASSIGN_OR_RETURN(params.values[name], flags.Double(name, 0));
  }
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
  const int64_t side = cifar ? model.cifar10_side : 28, channels = cifar ? 3 : 1;
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
  TW_ASSIGN_OR_RETURN(std::string checkpoint, LatestCheckpoint(model_dir));
  std::cout << "checkpoint: " << checkpoint << "\n"
            << "training graph: " << graph_path << " (" << graph.node_size() << " nodes)\n"
            << "towers picture: " << dot_path << " (dot -Tsvg " << dot_path << " -o towers.svg)\n"
            << "serving export (SavedModel): " << export_dir << " (towerflow saved_model show "
            << export_dir << " --tag_set serve)\n";
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
  const absl::Status status = Main(model, argc, argv);
  if (!status.ok()) {
    std::cerr << model.name << ": " << status << "\n";
    return 1;
  }
  return 0;
}

}  // namespace examples
}  // namespace towerflow
