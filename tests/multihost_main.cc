// One process of a job across simulated hosts (tests/multihost_test.sh),
// training with the Estimator replicated across the processes
// (ReplicateModelFn, one tower each; rank r reads rows r, r + n, ... of 8),
// writing a checkpoint every step to $MULTIHOST_MODEL_DIR.
//   multihost_main STEPS [MARKER]
// trains y = x w (w of 2) STEPS steps; rank 0 prints "w = a b" (17 digits)
// at the end and every process "rank R finished all its steps". With
// MARKER, rank 0 creates that file once the global step reaches 3 (the test
// then breaks the job: a host's link down, its processes killed) and
// training goes on until STEPS.
//   multihost_main resnet STEPS
// trains a ResNet-style block (two 3x3 convolutions with synchronised batch
// norm, a skip connection, global pooling, a dense layer; Momentum) STEPS
// steps, two towers in each process; then rank 0 alone trains the same model as one process on the
// whole batch (in $MULTIHOST_MODEL_DIR/one) and prints "resnet: N tensors,
// max relative difference D" between the two checkpoints.
// A process whose Train fails prints "rank R: STATUS" and exits 3.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "absl/strings/numbers.h"
#include "core/status_macros.h"
#include "data/dataset.h"
#include "distribute/cluster.h"
#include "estimator/estimator.h"
#include "estimator/replicate_model_fn.h"
#include "estimator/tower_optimizer.h"
#include "layers/layers.h"
#include "layers/losses.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/nn_ops.h"
#include "ops/variables.h"
#include "train/checkpoint.h"
#include "train/optimizers.h"

namespace towerflow {
namespace {

EstimatorSpec Regression(const Scope& s, const FeatureMap& features, const FeatureMap& labels,
                         ModeKeys mode, const Params&) {
  Variable w = GetVariable(s, "w", TensorShape({2, 1}), DT_DOUBLE, initializers::Zeros());
  EstimatorSpec spec(mode);
  Output prediction = ops::MatMul(s, features.at("x"), w.value());
  spec.loss = ops::Mean(s, ops::Square(s, ops::Sub(s, prediction, labels.at("y"))), {0, 1});
  TowerOptimizer optimizer(std::make_shared<train::GradientDescentOptimizer>(0.05));
  spec.train_op = optimizer.Minimize(s, spec.loss, train::GetOrCreateGlobalStep(s));
  return spec;
}

// The ResNet-style block; its batch norms synchronised over the towers and,
// with `across_processes`, the processes.
ModelFn ResNetBlock(bool across_processes) {
  return [across_processes](const Scope& s, const FeatureMap& features, const FeatureMap& labels,
                            ModeKeys mode, const Params&) {
    const auto bn = [&](const Output& x, const std::string& name) {
      layers::BatchNormalizationOptions o;
      o.training = mode == ModeKeys::kTrain;
      o.synchronized = true;  // over the towers ReplicateModelFn builds
      o.across_processes = across_processes;
      o.name = name;
      return layers::BatchNormalization(s, x, o);
    };
    const auto conv = [&](const Output& x, const std::string& name, int64_t seed) {
      return layers::Conv2D(s, x, 8, 3,
                            {.padding = "same",
                             .use_bias = false,
                             .kernel_initializer = initializers::GlorotUniform(seed),
                             .name = name});
    };
    Output h = ops::Relu(s, bn(conv(features.at("x"), "conv1", 11), "bn1"));
    Output r = bn(conv(h, "conv2", 12), "bn2");
    h = ops::Relu(s, ops::AddV2(s, h, r));
    Output logits =
        layers::Dense(s, layers::GlobalAveragePooling2D(s, h), 2,
                      {.kernel_initializer = initializers::GlorotUniform(13), .name = "dense"});
    EstimatorSpec spec(mode);
    spec.loss = losses::SparseSoftmaxCrossEntropy(s, labels.at("y"), logits);
    TowerOptimizer optimizer(std::make_shared<train::MomentumOptimizer>(0.1, 0.9));
    spec.train_op = optimizer.Minimize(s, spec.loss, train::GetOrCreateGlobalStep(s));
    return spec;
  };
}

// Rows `rank`, `rank + size`, ... of 8 images of 6x6x3 and their labels.
InputFn Images(int rank, int size) {
  return [rank, size]() -> absl::StatusOr<InputSpec> {
    const int rows = 8 / size;
    Tensor x(DT_FLOAT, TensorShape({rows, 6, 6, 3})), y(DT_INT32, TensorShape({rows}));
    float* px = x.data<float>();
    for (int j = 0; j < rows; ++j) {
      const int i = rank + j * size;
      for (int k = 0; k < 6 * 6 * 3; ++k) {
        *px++ = static_cast<float>(std::sin(0.37 * i + 0.11 * k) + 0.1 * (i % 3));
      }
      y.data<int32_t>()[j] = i % 2;
    }
    TW_ASSIGN_OR_RETURN(data::Dataset d, data::Dataset::FromTensorSlices({x, y}));
    return InputSpec{d.Batch(rows).Repeat(), {"x"}, {"y"}};
  };
}

absl::StatusOr<std::map<std::string, Tensor>> Latest(const std::string& model_dir) {
  TW_ASSIGN_OR_RETURN(const std::string latest, LatestCheckpoint(model_dir));
  TW_ASSIGN_OR_RETURN(std::vector<NamedTensor> tensors, ReadCheckpoint(latest));
  std::map<std::string, Tensor> out;
  for (NamedTensor& t : tensors) out[t.name] = std::move(t.tensor);
  return out;
}

RunConfig Config(const std::string& model_dir) {
  RunConfig config;
  config.model_dir = model_dir;
  config.random_seed = 1;
  config.progress_bar = RunConfig::ProgressBar::kOff;
  config.log_step_count_steps = 0;
  return config;
}

// The job trains the block; then rank 0 trains it alone on the whole batch
// and compares.
int ResNet(int rank, int size, int64_t steps, const std::string& model_dir) {
  // Two towers in each process (2 rows each), on its two virtual CPUs.
  absl::StatusOr<ModelFn> replicated =
      ReplicateModelFn(ResNetBlock(/*across_processes=*/true), {.devices = {"/cpu:0", "/cpu:1"}});
  if (!replicated.ok()) return 2;
  RunConfig job_config = Config(model_dir);
  job_config.session_options.device_count["CPU"] = 2;
  Estimator job(*replicated, job_config);
  absl::StatusOr<TrainResult> trained = job.Train(Images(rank, size), {.max_steps = steps});
  if (!trained.ok()) {
    std::fprintf(stderr, "rank %d: %s\n", rank, trained.status().ToString().c_str());
    return 3;
  }
  std::printf("rank %d finished all its steps\n", rank);
  if (rank != 0) return 0;
  ReplicateOptions alone_options{.devices = {"/cpu:0"}};
  alone_options.across_processes = false;
  absl::StatusOr<ModelFn> alone = ReplicateModelFn(ResNetBlock(false), alone_options);
  if (!alone.ok()) return 2;
  RunConfig config = Config(model_dir + "/one");
  config.across_processes = false;
  Estimator one(*alone, config);
  trained = one.Train(Images(0, 1), {.max_steps = steps});
  absl::StatusOr<std::map<std::string, Tensor>> a = Latest(model_dir),
                                                b = Latest(model_dir + "/one");
  if (!trained.ok() || !a.ok() || !b.ok()) {
    std::fprintf(stderr, "rank 0: one process: %s %s %s\n", trained.status().ToString().c_str(),
                 a.status().ToString().c_str(), b.status().ToString().c_str());
    return 3;
  }
  double worst = 0;
  int compared = 0;
  for (const auto& [name, t] : *b) {
    auto it = a->find(name);
    if (it == a->end() || it->second.NumElements() != t.NumElements() ||
        it->second.dtype() != t.dtype()) {
      std::printf("resnet: %s is not in the job's checkpoint alike\n", name.c_str());
      return 3;
    }
    if (t.dtype() != DT_FLOAT) continue;
    ++compared;
    for (int64_t i = 0; i < t.NumElements(); ++i) {
      const double x = it->second.data<float>()[i], y = t.data<float>()[i];
      worst = std::max(worst, std::abs(x - y) / (1e-3 + std::abs(y)));
    }
  }
  std::printf("resnet: %d tensors, max relative difference %.3g\n", compared, worst);
  return 0;
}

// Creates `path` after the step that reaches global step 3.
class MarkerHook : public SessionRunHook {
 public:
  explicit MarkerHook(std::string path) : path_(std::move(path)) {}
  absl::Status AfterRun(const StepResult& step, const std::vector<Tensor>&, bool*) override {
    if (step.global_step >= 3 && !written_) {
      written_ = true;
      std::ofstream(path_) << step.global_step << "\n";
    }
    return absl::OkStatus();
  }

 private:
  const std::string path_;
  bool written_ = false;
};

int Main(int argc, char** argv) {
  int64_t steps = 0;
  const char* model_dir = std::getenv("MULTIHOST_MODEL_DIR");
  const bool resnet = argc > 1 && std::string(argv[1]) == "resnet";
  if (resnet) {
    ++argv;
    --argc;
  }
  if (argc < 2 || !absl::SimpleAtoi(argv[1], &steps) || steps <= 0 || model_dir == nullptr) {
    std::fprintf(stderr, "usage: MULTIHOST_MODEL_DIR=DIR multihost_main [resnet] STEPS [MARKER]\n");
    return 2;
  }
  absl::StatusOr<distribute::Cluster*> cluster = distribute::Cluster::Get();
  if (!cluster.ok()) {
    std::fprintf(stderr, "%s\n", cluster.status().ToString().c_str());
    return 2;
  }
  const int rank = (*cluster)->rank(), size = (*cluster)->size();
  if (resnet) return ResNet(rank, size, steps, model_dir);
  absl::StatusOr<ModelFn> replicated = ReplicateModelFn(Regression, {.devices = {"/cpu:0"}});
  if (!replicated.ok()) return 2;
  RunConfig config = Config(model_dir);
  config.save_checkpoints_steps = 1;
  config.save_checkpoints_secs = 0;
  Estimator estimator(*replicated, config);
  // Rank r's rows of x = (i, 1) and y = 2i - 1, i = 0..7: the global batch
  // is all 8 every step.
  InputFn input = [rank, size]() -> absl::StatusOr<InputSpec> {
    const int rows = 8 / size;
    Tensor x(DT_DOUBLE, TensorShape({rows, 2})), y(DT_DOUBLE, TensorShape({rows, 1}));
    for (int j = 0; j < rows; ++j) {
      const int i = rank + j * size;
      x.data<double>()[2 * j] = i;
      x.data<double>()[2 * j + 1] = 1;
      y.data<double>()[j] = 2.0 * i - 1;
    }
    TW_ASSIGN_OR_RETURN(data::Dataset d, data::Dataset::FromTensorSlices({x, y}));
    return InputSpec{d.Batch(rows).Repeat(), {"x"}, {"y"}};
  };
  TrainOptions options{.max_steps = steps};
  if (argc > 2 && rank == 0) options.hooks.push_back(std::make_shared<MarkerHook>(argv[2]));
  const absl::StatusOr<TrainResult> trained = estimator.Train(input, options);
  if (!trained.ok()) {
    std::fprintf(stderr, "rank %d: %s\n", rank, trained.status().ToString().c_str());
    return 3;
  }
  if (rank == 0) {
    absl::StatusOr<std::map<std::string, Tensor>> saved = Latest(model_dir);
    if (saved.ok() && saved->count("w") > 0) {
      const double* w = saved->at("w").data<double>();
      std::printf("w = %.17g %.17g\n", w[0], w[1]);
    }
  }
  std::printf("rank %d finished all its steps\n", rank);
  return 0;
}

}  // namespace
}  // namespace towerflow

int main(int argc, char** argv) { return towerflow::Main(argc, argv); }
