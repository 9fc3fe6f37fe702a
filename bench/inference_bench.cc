// A SavedModel's serving signature, timed at given batch sizes, with the
// session's graph optimizer on and off side by side: two sessions on the
// same export take turns, round after round, so a load on the machine falls
// on both. Prints one line per batch size and optimizer setting with the
// median milliseconds per batch. The input is the signature's only input
// with its unknown batch dimension set, filled with values in [-1, 1).
//
//   bazel build //bench:inference_bench //examples/cifar10:cifar10_train
//   bazel-bin/bench/inference_bench --saved_model=/tmp/cifar10_train/export/<timestamp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "saved_model/loader.h"
#include "saved_model/signature_constants.h"
#include "tools/flags.h"

ABSL_FLAG(std::string, saved_model, "", "the export directory (REQUIRED)");
ABSL_FLAG(std::string, signature, "serving_default", "the signature to run");
ABSL_FLAG(std::vector<std::string>, batch_sizes, std::vector<std::string>({"1", "128"}),
          "batch sizes to time");
ABSL_FLAG(int64_t, runs, 50, "timed runs per round (after 5 untimed)");
ABSL_FLAG(int64_t, rounds, 3, "rounds of each setting, taking turns");
ABSL_FLAG(int64_t, threads, 0, "inter- and intra-op threads (0: one per core)");

namespace towerflow {
namespace {

absl::StatusOr<Tensor> MakeInput(const TensorInfo& info, int64_t batch) {
  std::vector<int64_t> dims;
  for (const auto& d : info.tensor_shape().dim()) dims.push_back(d.size() < 0 ? batch : d.size());
  if (info.dtype() != DT_FLOAT) {
    return absl::InvalidArgumentError("this benchmark feeds float inputs only");
  }
  TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
  Tensor t(DT_FLOAT, shape);
  for (int64_t i = 0; i < t.NumElements(); ++i) t.data<float>()[i] = std::sin(0.37 * i);
  return t;
}

// Milliseconds per run of `runs` runs after 5 warm-up runs.
absl::StatusOr<double> Time(const SavedModelBundle& bundle, const std::string& signature,
                            const SignatureTensors& inputs, int64_t runs) {
  for (int i = 0; i < 5; ++i) TW_RETURN_IF_ERROR(bundle.Run(signature, inputs).status());
  const auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < runs; ++i) TW_RETURN_IF_ERROR(bundle.Run(signature, inputs).status());
  const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
  return took.count() / static_cast<double>(runs);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

absl::Status Main() {
  const std::string dir = absl::GetFlag(FLAGS_saved_model);
  const std::string signature = absl::GetFlag(FLAGS_signature);
  if (dir.empty()) return absl::InvalidArgumentError("--saved_model is required");
  SessionOptions on;
  on.allow_soft_placement = true;
  on.inter_op_parallelism_threads = on.intra_op_parallelism_threads =
      static_cast<int>(absl::GetFlag(FLAGS_threads));
  SessionOptions off = on;
  off.optimizer = GraphOptimizerOptions::None();
  TW_ASSIGN_OR_RETURN(SavedModelBundle optimized, LoadSavedModel(dir, {kSavedModelTagServe}, on));
  TW_ASSIGN_OR_RETURN(SavedModelBundle plain, LoadSavedModel(dir, {kSavedModelTagServe}, off));
  TW_ASSIGN_OR_RETURN(const SignatureDef* sig, optimized.Signature(signature));
  if (sig->inputs_size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat("signature ", signature, " has ",
                                                   sig->inputs_size(),
                                                   " inputs; this "
                                                   "benchmark feeds one"));
  }
  const auto& [input_key, info] = *sig->inputs().begin();
  for (const std::string& b : absl::GetFlag(FLAGS_batch_sizes)) {
    int64_t batch = 0;
    if (!absl::SimpleAtoi(b, &batch) || batch < 1) {
      return absl::InvalidArgumentError(absl::StrCat("bad batch size '", b, "'"));
    }
    TW_ASSIGN_OR_RETURN(Tensor x, MakeInput(info, batch));
    const SignatureTensors inputs = {{input_key, x}};
    std::vector<double> with, without;
    for (int64_t r = 0; r < absl::GetFlag(FLAGS_rounds); ++r) {
      TW_ASSIGN_OR_RETURN(double ms, Time(optimized, signature, inputs, absl::GetFlag(FLAGS_runs)));
      with.push_back(ms);
      TW_ASSIGN_OR_RETURN(ms, Time(plain, signature, inputs, absl::GetFlag(FLAGS_runs)));
      without.push_back(ms);
    }
    std::cout << "batch " << batch << ": optimized " << Median(with) << " ms/batch, as written "
              << Median(without) << " ms/batch\n";
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace towerflow

int main(int argc, char** argv) {
  towerflow::ParseCommandLine(
      argc, argv, "Times a SavedModel's signature with the graph optimizer on and off.");
  const absl::Status s = towerflow::Main();
  if (!s.ok()) {
    std::cerr << "inference_bench: " << s << "\n";
    return 1;
  }
  return 0;
}
