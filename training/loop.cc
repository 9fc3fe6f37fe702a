#include "training/loop.h"

#include <chrono>
#include <type_traits>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "core/type_dispatch.h"
#include "training/cluster_roles.h"

namespace towerflow {
namespace training {

absl::StatusOr<double> ScalarValue(const Tensor& t, const std::string& what) {
  if (t.NumElements() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be a scalar, got shape ", t.shape().DebugString()));
  }
  std::optional<double> value;
  VisitNumberType(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (kIsFloat16<T>) {
      value = static_cast<float>(t.data<T>()[0]);
    } else if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
      value = static_cast<double>(t.data<T>()[0]);
    }
  });
  if (!value.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be a number, got ", DataTypeString(t.dtype())));
  }
  return *value;
}

absl::Status Loop::Begin(const Scope& root) {
  for (const auto& hook : hooks_) TW_RETURN_IF_ERROR(hook->Begin(root));
  return root.status();
}

absl::Status Loop::AfterCreateSession(const ClientSession& session, int64_t global_step) {
  global_step_ = global_step;
  for (const auto& hook : hooks_) {
    TW_RETURN_IF_ERROR(hook->AfterCreateSession(session, global_step));
  }
  return absl::OkStatus();
}

absl::Status Loop::Run(const ClientSession& session, const NextBatchFn& next) {
  while (true) {
    std::optional<Batch> batch;
    if (!stop_requested_) {
      TW_ASSIGN_OR_RETURN(batch, next());
    }
    // The end of the data or a hook's request ends training; the processes
    // of a cluster step together, so the first process to end ends them all
    // (one that returned alone would leave the others in a collective).
    TW_ASSIGN_OR_RETURN(
        const std::optional<int64_t> examples,
        StepTogether(cluster_, batch.has_value(), batch.has_value() ? batch->examples : 0));
    if (!examples.has_value()) return absl::OkStatus();
    const absl::Status step = Step(session, *batch, *examples);
    // Note [A step's OutOfRange]
    if (absl::IsOutOfRange(step) && cluster_ == nullptr) {
      stop_requested_ = true;
      return absl::OkStatus();
    }
    TW_RETURN_IF_ERROR(step);
  }
}

absl::Status Loop::Step(const ClientSession& session, const Batch& batch, int64_t examples) {
  std::vector<Output> fetches = {spec_.loss};
  if (spec_.global_step.has_value()) fetches.push_back(*spec_.global_step);
  const size_t first_log = fetches.size();
  fetches.insert(fetches.end(), spec_.logs.begin(), spec_.logs.end());
  std::vector<size_t> first_value;  // each hook's first fetch
  for (const auto& hook : hooks_) {
    first_value.push_back(fetches.size());
    std::vector<Output> wanted = hook->BeforeRun();
    fetches.insert(fetches.end(), wanted.begin(), wanted.end());
  }
  first_value.push_back(fetches.size());
  std::vector<bool> traced;  // by hook
  for (const auto& hook : hooks_) traced.push_back(hook->TraceStep(global_step_ + 1));
  RunOptions options;
  if (absl::c_linear_search(traced, true)) options.trace_level = RunOptions::TraceLevel::kFullTrace;
  RunMetadata metadata;
  std::vector<Tensor> values;
  const auto start = std::chrono::steady_clock::now();
  TW_RETURN_IF_ERROR(
      session.Run(options, batch.feeds, fetches, spec_.train_ops, &values, &metadata));
  StepResult step;
  step.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  TW_ASSIGN_OR_RETURN(step.loss, ScalarValue(values[0], "loss"));
  if (spec_.global_step.has_value()) {
    TW_ASSIGN_OR_RETURN(const double after, ScalarValue(values[1], "global step"));
    step.global_step = static_cast<int64_t>(after);
  } else {
    step.global_step = global_step_ + 1;
  }
  for (size_t i = 0; i < spec_.logs.size(); ++i) {
    TW_ASSIGN_OR_RETURN(double log, ScalarValue(values[first_log + i], "log"));
    step.logs.push_back(log);
  }
  if (spec_.mean_logs_over_processes) {
    TW_RETURN_IF_ERROR(MeanOverProcesses(cluster_, batch.examples, &step.logs));
  }
  step.batch_size = examples;
  global_step_ = step.global_step;
  loss_ = step.loss;
  ++steps_run_;
  for (size_t h = 0; h < hooks_.size(); ++h) {
    const std::vector<Tensor> hook_values(values.begin() + first_value[h],
                                          values.begin() + first_value[h + 1]);
    if (traced[h]) {
      TW_RETURN_IF_ERROR(hooks_[h]->AfterTracedRun(step, metadata));
    }
    TW_RETURN_IF_ERROR(hooks_[h]->AfterRun(step, hook_values, &stop_requested_));
  }
  return absl::OkStatus();
}

absl::Status Loop::End(const ClientSession& session) {
  for (const auto& hook : hooks_) TW_RETURN_IF_ERROR(hook->End(session, global_step_));
  return absl::OkStatus();
}

}  // namespace training
}  // namespace towerflow
