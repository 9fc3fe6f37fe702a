// Replayed training steps on one GPU (runtime/step_replay.h) against the
// same steps run eagerly (bench/README.md, tools/gpu_check.sh's replay
// phase). For each model, one tower on /gpu:0 of the examples' training step
// (the CIFAR-10 tutorial's model at 24x24, ResNet-20 and ResNet-56 at
// 32x32, ImageNet's ResNet-50 at 224x224 in NCHW: "resnet50"), a batch of synthetic input already
// on the GPU (images and labels constants; with --feed, fed each step from four batches, as the
// Estimator feeds them: float images and int32 labels, which stay in host memory), seeded initial
// values:
//  1. agreement: --check_steps steps in a session with replay off and in
//     one with it on, from the same initial values; every trainable
//     variable compared, bit for bit and by the largest relative
//     difference;
//  2. timing: --steps more steps in each; the median wall time of a
//     Session::Run, the process's CPU time per step (the host's work), and
//     for the replayed session the step that recorded, the recording's
//     operations and the device memory reserved for it.
// Prints one line per model and mode.
//
//   gpu_replay [--models=cifar10,resnet20,resnet56] [--batch=128] [--steps=200] [--check_steps=30]
//              [--feed] [--precision=float32|mixed_float16|mixed_bfloat16]
//
// --precision trains in mixed precision (estimator/mixed_precision.h): the
// session's rewrite, and a dynamic loss scale under mixed_float16; the peer
// is bench/models_torch.py --autocast.
//
// TF_CUDNN_USE_AUTOTUNE=0 TF_CUDNN_DETERMINISTIC=1 NVIDIA_TF32_OVERRIDE=0
// make both sessions choose the same deterministic algorithms, so replayed
// and eager variables can agree bit for bit. Built with --config=cuda;
// without it the program says so and exits 1.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tools/flags.h"

#ifdef TOWERFLOW_CUDA
#include "core/status_macros.h"
#include "estimator/mixed_precision.h"
#include "estimator/replicate_model_fn.h"
#include "examples/cifar10/model.h"
#include "examples/resnet/imagenet_model.h"
#include "examples/resnet/model.h"
#include "graph/scope.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/variables.h"
#include "runtime/session.h"
#endif

ABSL_FLAG(std::vector<std::string>, models,
          std::vector<std::string>({"cifar10", "resnet20", "resnet56"}),
          "models to time: cifar10, resnet20, resnet32, resnet56");
ABSL_FLAG(int64_t, batch, 128, "examples per step");
ABSL_FLAG(int64_t, steps, 200, "timed steps per mode");
ABSL_FLAG(int64_t, check_steps, 30, "steps before the variables are compared");
ABSL_FLAG(bool, feed, false, "feed each step's images and labels instead of constants");
ABSL_FLAG(std::string, precision, "float32",
          "float32, mixed_float16 or mixed_bfloat16 (estimator/mixed_precision.h)");

namespace towerflow {
namespace {

#ifdef TOWERFLOW_CUDA

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double CpuSeconds() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         1e-6 * (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

struct Step {
  Precision precision = Precision::kFloat32;
  GraphDef graph;
  std::string loss, train, init;
  std::vector<std::string> variables;  // reads of the trainable variables
  // With --feed, the batches fed in turn; else none.
  std::vector<std::vector<std::pair<std::string, Tensor>>> batches;
};

// Batch `k` of synthetic images [batch, side, side, 3] and int32 labels.
std::pair<Tensor, Tensor> SyntheticBatch(int64_t batch, int64_t side, int k) {
  Tensor images(DT_FLOAT, TensorShape({batch, side, side, 3}));
  for (int64_t i = 0; i < images.NumElements(); ++i) {
    images.data<float>()[i] = static_cast<float>(std::sin(0.37 * i + k));
  }
  Tensor labels(DT_INT32, TensorShape({batch}));
  for (int64_t i = 0; i < batch; ++i)
    labels.data<int32_t>()[i] = static_cast<int32_t>((i + k) % 10);
  return {images, labels};
}

absl::StatusOr<Step> BuildStep(const std::string& model, int64_t batch) {
  Params params;
  params.values = {
      {"num_classes", 10}, {"batch_size", static_cast<double>(batch)}, {"steps_per_epoch", 390}};
  ModelFn model_fn = cifar10::ModelFn;
  int64_t side = 24;
  if (model == "resnet50") {  // ImageNet's ResNet-50 v1, NCHW as on GPUs
    params.values = {
        {"resnet_size", 50}, {"batch_size", static_cast<double>(batch)}, {"channels_first", 1}};
    model_fn = resnet::ImageNetModelFn;
    side = resnet::kImageNetSide;
  } else if (model != "cifar10") {
    if (model.rfind("resnet", 0) != 0) return absl::InvalidArgumentError("unknown model " + model);
    params.values["resnet_size"] = std::stod(model.substr(6));
    model_fn = resnet::ModelFn;
    side = 32;
  }
  Step step;
  TW_ASSIGN_OR_RETURN(step.precision, ParsePrecision(absl::GetFlag(FLAGS_precision)));
  SessionOptions unused;
  SetPrecision(step.precision, &unused, &params);  // the model's optimizer reads it
  ReplicateOptions options;
  options.devices = {"/gpu:0"};
  TW_ASSIGN_OR_RETURN(ModelFn towers, ReplicateModelFn(model_fn, options));
  Scope root = Scope::NewRootScope();
  root.graph()->set_seed(1);
  const Scope gpu = root.WithDevice("/gpu:0");
  FeatureMap features, label_map;
  if (absl::GetFlag(FLAGS_feed)) {
    features["images"] = ops::Placeholder(gpu.WithOpName("images"), DT_FLOAT,
                                          ops::Placeholder::Shape({-1, side, side, 3}));
    label_map["labels"] =
        ops::Placeholder(gpu.WithOpName("labels"), DT_INT32, ops::Placeholder::Shape({-1}));
    for (int k = 0; k < 4; ++k) {
      auto [images, labels] = SyntheticBatch(batch, side, k);
      step.batches.push_back({{"images", images}, {"labels", labels}});
    }
  } else {
    auto [images, labels] = SyntheticBatch(batch, side, 0);
    features["images"] = ops::Const(gpu.WithOpName("images"), images.AsProto());
    label_map["labels"] = ops::Const(gpu.WithOpName("labels"), labels.AsProto());
  }
  EstimatorSpec spec = towers(root, features, label_map, ModeKeys::kTrain, params);
  step.init = GlobalVariablesInitializer(root).node()->name();
  const Scope reads = root.NewSubScope("bench_reads");
  for (const Variable& v : GetVariables(*root.graph(), GraphKeys::kTrainableVariables)) {
    step.variables.push_back(v.value(reads).node()->name());
  }
  TW_RETURN_IF_ERROR(root.ToGraphDef(&step.graph));
  step.loss = spec.loss.node()->name();
  step.train = spec.train_op.node()->name();
  return step;
}

struct Timing {
  double median_ms = 0, cpu_ms = 0, record_ms = 0;
  int64_t operations = 0, reserved = 0;
  std::string why_eager;
};

absl::StatusOr<std::unique_ptr<Session>> MakeSession(const Step& step, bool replay) {
  SessionOptions options;
  options.device_count["GPU"] = 1;
  options.replay.enabled = replay;
  SetPrecision(step.precision, &options);
  TW_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(options));
  TW_RETURN_IF_ERROR(session->Create(step.graph));
  TW_RETURN_IF_ERROR(session->Run({}, {}, {step.init}, nullptr));
  return session;
}

// Runs `steps` training steps; their times.
absl::StatusOr<Timing> Train(Session* session, const Step& step, int64_t steps) {
  std::vector<double> times;
  Timing timing;
  const double cpu_start = CpuSeconds();
  for (int64_t i = 0; i < steps; ++i) {
    std::vector<Tensor> out;
    RunMetadata metadata;
    const auto start = std::chrono::steady_clock::now();
    const std::vector<std::pair<std::string, Tensor>> feeds =
        step.batches.empty() ? std::vector<std::pair<std::string, Tensor>>()
                             : step.batches[i % step.batches.size()];
    TW_RETURN_IF_ERROR(
        session->Run(RunOptions(), feeds, {step.loss}, {step.train}, &out, &metadata));
    const double ms = 1e3 * Seconds(start);
    times.push_back(ms);
    if (!std::isfinite(out[0].data<float>()[0])) {
      return absl::InternalError(absl::StrCat("loss is ", out[0].data<float>()[0], " at step ", i));
    }
    if (metadata.replay.mode == StepReplayReport::Mode::kRecorded) timing.record_ms = ms;
    timing.operations = metadata.replay.operations;
    timing.reserved = metadata.replay.reserved_bytes;
    timing.why_eager = metadata.replay.why_eager;
  }
  timing.cpu_ms = 1e3 * (CpuSeconds() - cpu_start) / std::max<int64_t>(steps, 1);
  std::sort(times.begin(), times.end());
  timing.median_ms = times.empty() ? 0 : times[times.size() / 2];
  return timing;
}

// The largest relative difference between the two sessions' variables, and
// whether every one agrees bit for bit.
absl::Status Compare(Session* eager, Session* replayed, const Step& step,
                     const std::string& model) {
  std::vector<Tensor> a, b;
  TW_RETURN_IF_ERROR(eager->Run({}, step.variables, {}, &a));
  TW_RETURN_IF_ERROR(replayed->Run({}, step.variables, {}, &b));
  double worst = 0;
  bool identical = true;
  for (size_t i = 0; i < a.size(); ++i) {
    identical = identical && a[i].TotalBytes() == b[i].TotalBytes() &&
                std::memcmp(a[i].raw_data(), b[i].raw_data(), a[i].TotalBytes()) == 0;
    for (int64_t j = 0; j < a[i].NumElements(); ++j) {
      const double x = a[i].data<float>()[j], y = b[i].data<float>()[j];
      worst = std::max(worst, std::abs(x - y) / std::max(1e-6, std::abs(x)));
    }
  }
  std::printf("%s agreement after %ld steps: %zu variables %s, largest relative difference %.3g\n",
              model.c_str(), static_cast<long>(absl::GetFlag(FLAGS_check_steps)), a.size(),
              identical ? "bit-identical" : "not bit-identical", worst);
  return absl::OkStatus();
}

absl::Status RunModel(const std::string& model) {
  const int64_t batch = absl::GetFlag(FLAGS_batch);
  TW_ASSIGN_OR_RETURN(Step step, BuildStep(model, batch));
  TW_ASSIGN_OR_RETURN(std::unique_ptr<Session> eager, MakeSession(step, false));
  TW_ASSIGN_OR_RETURN(std::unique_ptr<Session> replayed, MakeSession(step, true));
  const int64_t check = absl::GetFlag(FLAGS_check_steps);
  TW_RETURN_IF_ERROR(Train(eager.get(), step, check).status());
  TW_ASSIGN_OR_RETURN(const Timing first, Train(replayed.get(), step, check));
  TW_RETURN_IF_ERROR(Compare(eager.get(), replayed.get(), step, model));
  const int64_t steps = absl::GetFlag(FLAGS_steps);
  TW_ASSIGN_OR_RETURN(const Timing e, Train(eager.get(), step, steps));
  TW_ASSIGN_OR_RETURN(Timing r, Train(replayed.get(), step, steps));
  const std::string input = absl::StrCat(absl::GetFlag(FLAGS_feed) ? "fed" : "on the GPU", ", ",
                                         PrecisionName(step.precision));
  std::printf("towerflow %s eager, batch %ld %s: %.2f ms/step (median), host CPU %.2f ms/step\n",
              model.c_str(), static_cast<long>(batch), input.c_str(), e.median_ms, e.cpu_ms);
  if (!r.why_eager.empty()) {
    std::printf("towerflow %s replayed, batch %ld %s: NOT REPLAYED (%s): %.2f ms/step\n",
                model.c_str(), static_cast<long>(batch), input.c_str(), r.why_eager.c_str(),
                r.median_ms);
    return absl::OkStatus();
  }
  std::printf(
      "towerflow %s replayed, batch %ld %s: %.2f ms/step (median), host CPU %.2f ms/step; "
      "recording: %ld operations, %.1f MiB reserved, the recording step %.0f ms\n",
      model.c_str(), static_cast<long>(batch), input.c_str(), r.median_ms, r.cpu_ms,
      static_cast<long>(r.operations), r.reserved / 1048576.0, first.record_ms);
  return absl::OkStatus();
}

int Main(const std::vector<std::string>&) {
  int failed = 0;
  for (const std::string& model : absl::GetFlag(FLAGS_models)) {
    const absl::Status s = RunModel(model);
    if (!s.ok()) {
      std::fprintf(stderr, "gpu_replay: %s: %s\n", model.c_str(), s.ToString().c_str());
      ++failed;
    }
    std::fflush(stdout);
  }
  return failed == 0 ? 0 : 1;
}

#else

int Main(const std::vector<std::string>&) {
  std::fprintf(stderr, "gpu_replay: built without CUDA; build with --config=cuda\n");
  return 1;
}

#endif

}  // namespace
}  // namespace towerflow

int main(int argc, char** argv) {
  return towerflow::Main(towerflow::ParseCommandLine(
      argc, argv,
      "gpu_replay: the examples' training steps on one GPU, replayed (one CUDA graph launch) "
      "against eager.\n\nusage: gpu_replay [--models=cifar10,resnet20,resnet56] [--batch=128] "
      "[--steps=200] [--check_steps=30] [--feed] [--precision=float32|mixed_float16|"
      "mixed_bfloat16]"));
}
