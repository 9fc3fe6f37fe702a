// keras::Model's data and steps: checks, Fit, Evaluate, Predict and
// their batches.
#include <algorithm>
#include <cstring>
#include <iostream>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "data/dataset.h"
#include "distribute/cluster.h"
#include "framework/tensor_views.h"
#include "keras/model.h"
#include "keras/model_internal.h"
#include "keras/progbar.h"
#include "training/cluster_roles.h"

namespace towerflow {
namespace keras {

using internal::ModelImpl;

using Topology = internal::ModelTopology;
using internal::GatherRows;
using internal::Identity;
using internal::IsNumeric;
using internal::kNotCompiled;
using internal::Outputs;
using internal::RowBytes;
using internal::ShapeString;
using internal::ShardStarts;
using internal::SliceRows;
using internal::WithRows;

// ---- Data and steps ---------------------------------------------------------------------

absl::StatusOr<TensorMap> ModelImpl::InputMap(const Tensor& x) const {
  TW_RETURN_IF_ERROR(status());
  if (topology_->inputs.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat("The model has ", topology_->inputs.size(),
                                                   " inputs (", absl::StrJoin(input_names(), ", "),
                                                   "): pass them as a TensorMap"));
  }
  return TensorMap{{topology_->inputs[0].name, x}};
}

absl::StatusOr<TensorMap> ModelImpl::TargetMap(const Tensor& y) const {
  TW_RETURN_IF_ERROR(status());
  if (topology_->outputs.size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("The model has ", topology_->outputs.size(), " outputs (",
                     absl::StrJoin(output_names(), ", "), "): pass their targets as a TensorMap"));
  }
  return TensorMap{{topology_->outputs[0].name, y}};
}

absl::StatusOr<int64_t> ModelImpl::CheckData(const TensorMap& x, const TensorMap* y) const {
  TW_RETURN_IF_ERROR(status());
  const Topology& t = *topology_;
  // Every key is known, every feed given: Keras's messages.
  const auto check_keys = [](const TensorMap& data, const std::vector<std::string>& names,
                             const char* what) -> absl::Status {
    for (const std::string& name : names) {
      if (data.count(name) == 0) {
        return absl::InvalidArgumentError(absl::StrCat("No data provided for \"", name,
                                                       "\". Need data for each key in: [",
                                                       absl::StrJoin(names, ", "), "]"));
      }
    }
    for (const auto& [name, tensor] : data) {
      if (std::find(names.begin(), names.end(), name) == names.end()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Unknown entry in ", what, " data dictionary: \"", name,
            "\". Only expected the following keys: [", absl::StrJoin(names, ", "), "]"));
      }
    }
    return absl::OkStatus();
  };
  TW_RETURN_IF_ERROR(check_keys(x, input_names(), "input"));
  int64_t rows = -1;
  for (const Topology::Feed& feed : t.inputs) {
    const Tensor& v = x.at(feed.name);
    bool fits = v.dtype() == feed.dtype && v.dims() == static_cast<int>(feed.shape.size()) + 1;
    for (size_t d = 0; fits && d < feed.shape.size(); ++d) {
      fits = feed.shape[d] < 0 || v.dim_size(d + 1) == feed.shape[d];
    }
    if (!fits) {
      return absl::InvalidArgumentError(
          absl::StrCat("Error when checking input: expected ", feed.name, " to be ",
                       DataTypeString(feed.dtype), " of shape ", ShapeString(feed.shape), ", got ",
                       DataTypeString(v.dtype()), " ", v.shape().DebugString()));
    }
    if (!IsNumeric(v.dtype())) {
      return absl::InvalidArgumentError(absl::StrCat("Input ", feed.name, " must be numeric"));
    }
    if (v.dim_size(0) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Error when checking input: ", feed.name, " has no examples (0 rows)"));
    }
    if (rows >= 0 && v.dim_size(0) != rows) {
      return absl::InvalidArgumentError(absl::StrCat(
          "All input arrays should have the same number of samples. Got array sizes: ", rows,
          " and ", v.dim_size(0), " (", feed.name, ")"));
    }
    rows = v.dim_size(0);
  }
  if (y == nullptr) return rows;
  TW_RETURN_IF_ERROR(check_keys(*y, output_names(), "target"));
  for (size_t o = 0; o < t.outputs.size(); ++o) {
    const Topology::Out& out = t.outputs[o];
    const Tensor& v = y->at(out.name);
    if (v.dims() < 1 || v.dim_size(0) != rows || !IsNumeric(v.dtype())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Input arrays should have the same number of samples as target arrays. Found ", rows,
          " input samples and ", v.dims() < 1 ? 0 : v.dim_size(0), " target samples (", out.name,
          ", ", DataTypeString(v.dtype()), ")."));
    }
    // A graph built for other targets cannot take these.
    if (built_ != nullptr && built_->trained) {
      const Output& target = built_->targets[o][0];
      const PartialTensorShape& fed = target.shape();
      bool fits = !fed.unknown_rank() && fed.dims() == v.dims() && target.type() == v.dtype();
      for (int d = 1; fits && d < v.dims(); ++d) fits = fed.dim_size(d) == v.dim_size(d);
      if (!fits) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Error when checking target ", out.name, ": the model trains on ", fed.DebugString(),
            " targets, got ", v.shape().DebugString(), " (", DataTypeString(v.dtype()), ")"));
      }
    }
  }
  return rows;
}

ClientSession::FeedType ModelImpl::Feeds(const TensorMap& x, const TensorMap* y) const {
  const Built& b = *built_;
  const Topology& t = *topology_;
  ClientSession::FeedType feeds;
  const auto feed = [&feeds](const std::vector<Output>& placeholders, const Tensor& v) {
    if (placeholders.size() == 1) {
      feeds.emplace(placeholders[0], v);
      return;
    }
    const std::vector<int64_t> starts =
        ShardStarts(v.dim_size(0), static_cast<int>(placeholders.size()));
    for (size_t r = 0; r < placeholders.size(); ++r) {
      feeds.emplace(placeholders[r], SliceRows(v, starts[r], starts[r + 1]));
    }
  };
  for (size_t i = 0; i < t.inputs.size(); ++i) feed(b.inputs[i], x.at(t.inputs[i].name));
  if (y != nullptr) {
    for (size_t o = 0; o < t.outputs.size(); ++o) feed(b.targets[o], y->at(t.outputs[o].name));
  }
  return feeds;
}

absl::StatusOr<std::vector<Tensor>> ModelImpl::RunStep(const TensorMap& x, const TensorMap* y,
                                                       bool train) {
  TW_RETURN_IF_ERROR(InitializeNewVariables());
  Built& b = *built_;
  std::vector<Output> fetches;
  std::vector<Operation> targets;
  if (train) {
    fetches.push_back(b.train_loss);
    fetches.insert(fetches.end(), b.train_logs.begin(), b.train_logs.end());
    targets.push_back(b.train_op);
  } else if (y != nullptr) {
    fetches.push_back(b.eval_loss);
    fetches.insert(fetches.end(), b.eval_logs.begin(), b.eval_logs.end());
  } else {
    for (const Outputs& o : b.predict) fetches.push_back(o.output);
  }
  std::vector<Tensor> out;
  TW_RETURN_IF_ERROR(b.session->Run(Feeds(x, y), fetches, targets, &out));
  return out;
}

absl::Status ModelImpl::RunBatches(const TensorMap& x, const TensorMap* y, int64_t batch_size,
                                   const StepFn& each) {
  const int64_t n = x.begin()->second.dim_size(0);
  int64_t step = 0;
  for (int64_t begin = 0; begin < n; begin += batch_size, ++step) {
    const int64_t end = std::min(n, begin + batch_size);
    TensorMap xb, yb;
    for (const auto& [name, v] : x) xb[name] = SliceRows(v, begin, end);
    if (y != nullptr) {
      for (const auto& [name, v] : *y) yb[name] = SliceRows(v, begin, end);
    }
    TW_ASSIGN_OR_RETURN(std::vector<Tensor> out,
                        RunStep(xb, y != nullptr ? &yb : nullptr, /*train=*/false));
    TW_RETURN_IF_ERROR(each(step, end - begin, out));
  }
  return absl::OkStatus();
}

namespace {

absl::Status CheckBatchSize(int64_t batch_size) {
  if (batch_size <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch_size must be positive, got ", batch_size));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<History> ModelImpl::Fit(const Tensor& x, const Tensor& y,
                                       const FitOptions& options) {
  TW_ASSIGN_OR_RETURN(TensorMap xs, InputMap(x));
  TW_ASSIGN_OR_RETURN(TensorMap ys, TargetMap(y));
  return Fit(xs, ys, options);
}

absl::Status ModelImpl::ValidationData(const FitOptions& options, TensorMap* x, TensorMap* y,
                                       const TensorMap** validation_x,
                                       const TensorMap** validation_y) const {
  *validation_x = options.validation_inputs;
  *validation_y = options.validation_targets;
  if ((options.validation_x == nullptr) != (options.validation_y == nullptr) ||
      (options.validation_inputs == nullptr) != (options.validation_targets == nullptr) ||
      (options.validation_x != nullptr && options.validation_inputs != nullptr)) {
    return absl::InvalidArgumentError(
        "validation data needs both inputs and targets, as tensors or as maps");
  }
  if (options.validation_x != nullptr) {
    TW_ASSIGN_OR_RETURN(*x, InputMap(*options.validation_x));
    TW_ASSIGN_OR_RETURN(*y, TargetMap(*options.validation_y));
    *validation_x = x;
    *validation_y = y;
  }
  return absl::OkStatus();
}

absl::StatusOr<History> ModelImpl::Fit(const TensorMap& x_all, const TensorMap& y_all,
                                       const FitOptions& options) {
  TW_RETURN_IF_ERROR(status());
  if (compiled_ == nullptr) return absl::FailedPreconditionError(kNotCompiled);
  TW_RETURN_IF_ERROR(CheckBatchSize(options.batch_size));
  TW_ASSIGN_OR_RETURN(const int64_t rows, CheckData(x_all, &y_all));
  TensorMap vx, vy;
  const TensorMap* validation_x = nullptr;
  const TensorMap* validation_y = nullptr;
  TW_RETURN_IF_ERROR(ValidationData(options, &vx, &vy, &validation_x, &validation_y));
  if (!(options.validation_split >= 0 && options.validation_split < 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("validation_split must be in [0, 1), got ", options.validation_split));
  }
  // Keras's validation_split: the last rows, before shuffling.
  TensorMap x = x_all, y = y_all, split_x, split_y;
  if (validation_x == nullptr && options.validation_split > 0) {
    const int64_t train_rows = static_cast<int64_t>(rows * (1 - options.validation_split));
    for (auto [from, held_out] : {std::make_pair(&x, &split_x), std::make_pair(&y, &split_y)}) {
      for (auto& [name, v] : *from) {
        (*held_out)[name] = SliceRows(v, train_rows, rows);
        v = SliceRows(v, 0, train_rows);
      }
    }
    validation_x = &split_x;
    validation_y = &split_y;
  }
  const int64_t n = x.begin()->second.dim_size(0);
  if (n == 0) return absl::InvalidArgumentError("Fit: no training examples");
  TW_RETURN_IF_ERROR(CheckBatches(n, options.batch_size));
  TW_RETURN_IF_ERROR(Build(&y));
  TW_RETURN_IF_ERROR(BroadcastWeights());
  const int64_t steps = (n + options.batch_size - 1) / options.batch_size;
  std::vector<int64_t> order = Identity(n);
  // Training across processes, each takes its part of every batch.
  const distribute::Cluster* cluster = built_->cluster;
  return FitEpochs(options, steps, validation_x, validation_y, [&](int epoch) {
    if (options.shuffle) {
      std::mt19937_64 rng(options.seed * 1000003 + epoch);
      std::shuffle(order.begin(), order.end(), rng);
    }
    return [&,
            batch_begin = int64_t{0}]() mutable -> absl::StatusOr<std::optional<training::Batch>> {
      if (batch_begin >= n) return std::nullopt;
      const int64_t batch_end = std::min(n, batch_begin + options.batch_size);
      int64_t begin = batch_begin, end = batch_end;
      if (cluster != nullptr) {
        const std::vector<int64_t> parts = ShardStarts(batch_end - batch_begin, cluster->size());
        begin = batch_begin + parts[cluster->rank()];
        end = batch_begin + parts[cluster->rank() + 1];
      }
      batch_begin = batch_end;
      TensorMap xb, yb;
      for (const auto& [name, v] : x) xb[name] = GatherRows(v, order, begin, end);
      for (const auto& [name, v] : y) yb[name] = GatherRows(v, order, begin, end);
      TW_RETURN_IF_ERROR(InitializeNewVariables());
      return training::Batch{Feeds(xb, &yb), end - begin};
    };
  });
}

absl::StatusOr<std::optional<ModelImpl::Batch>> ModelImpl::NextBatch(data::Iterator* it,
                                                                     int64_t step, const char* what,
                                                                     bool targets_optional) const {
  const Topology& t = *topology_;
  TW_ASSIGN_OR_RETURN(std::optional<data::Element> e, it->GetNext());
  if (!e.has_value()) return std::nullopt;
  // The inputs, then the targets.
  const size_t arity = t.inputs.size() + t.outputs.size();
  const bool inputs_only = targets_optional && e->size() == t.inputs.size();
  if (e->size() != arity && !inputs_only) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": a dataset element must be a batch ",
        arity == 2
            ? "(x, y)"
            : absl::StrCat("of ", t.inputs.size(), " inputs and ", t.outputs.size(), " targets"),
        targets_optional ? " (or of the inputs alone)" : "", ", got ", e->size(),
        " tensors at step ", step));
  }
  Batch batch;
  for (size_t i = 0; i < t.inputs.size(); ++i) batch.x[t.inputs[i].name] = (*e)[i];
  if (!inputs_only) {
    for (size_t o = 0; o < t.outputs.size(); ++o) {
      batch.y[t.outputs[o].name] = (*e)[t.inputs.size() + o];
    }
  }
  TW_ASSIGN_OR_RETURN(batch.rows, CheckData(batch.x, targets_optional ? nullptr : &batch.y));
  TW_RETURN_IF_ERROR(CheckBatch(batch.rows));
  return batch;
}

absl::StatusOr<History> ModelImpl::Fit(const data::Dataset& dataset, const FitOptions& options) {
  TW_RETURN_IF_ERROR(status());
  if (compiled_ == nullptr) return absl::FailedPreconditionError(kNotCompiled);
  TensorMap vx, vy;
  const TensorMap* validation_x = nullptr;
  const TensorMap* validation_y = nullptr;
  TW_RETURN_IF_ERROR(ValidationData(options, &vx, &vy, &validation_x, &validation_y));
  {
    std::unique_ptr<data::Iterator> first = dataset.MakeIterator();
    TW_ASSIGN_OR_RETURN(std::optional<Batch> batch, NextBatch(first.get(), 0, "Fit"));
    if (!batch.has_value()) return absl::InvalidArgumentError("Fit: the dataset is empty");
    TW_RETURN_IF_ERROR(Build(&batch->y));
  }
  TW_RETURN_IF_ERROR(BroadcastWeights());
  return FitEpochs(options, /*steps=*/0, validation_x, validation_y, [&](int) {
    // Shared: a NextBatchFn is copyable, the iterator is not.
    std::shared_ptr<data::Iterator> it = dataset.MakeIterator();
    return
        [this, it, step = int64_t{0}]() mutable -> absl::StatusOr<std::optional<training::Batch>> {
          TW_ASSIGN_OR_RETURN(std::optional<Batch> batch, NextBatch(it.get(), step++, "Fit"));
          if (!batch.has_value()) return std::nullopt;
          TW_RETURN_IF_ERROR(InitializeNewVariables());
          return training::Batch{Feeds(batch->x, &batch->y), batch->rows};
        };
  });
}

absl::StatusOr<Logs> ModelImpl::Evaluate(const data::Dataset& dataset) {
  TW_RETURN_IF_ERROR(status());
  if (compiled_ == nullptr) return absl::FailedPreconditionError(kNotCompiled);
  const std::vector<std::string>& log_names = LogNames();
  std::vector<double> sums(1 + log_names.size(), 0.0);
  int64_t n = 0;
  std::unique_ptr<data::Iterator> it = dataset.MakeIterator();
  for (int64_t step = 0;; ++step) {
    TW_ASSIGN_OR_RETURN(std::optional<Batch> batch, NextBatch(it.get(), step, "Evaluate"));
    if (!batch.has_value()) break;
    TW_RETURN_IF_ERROR(Build(&batch->y));
    TW_ASSIGN_OR_RETURN(std::vector<Tensor> values, RunStep(batch->x, &batch->y, /*train=*/false));
    for (size_t i = 0; i < sums.size(); ++i) sums[i] += values[i].scalar<float>()() * batch->rows;
    n += batch->rows;
  }
  if (n == 0) return absl::InvalidArgumentError("Evaluate: the dataset is empty");
  Logs result;
  result["loss"] = sums[0] / n;
  for (size_t m = 0; m < log_names.size(); ++m) result[log_names[m]] = sums[m + 1] / n;
  return result;
}

absl::StatusOr<TensorMap> ModelImpl::Predict(const data::Dataset& dataset) {
  TW_RETURN_IF_ERROR(status());
  const Topology& t = *topology_;
  std::vector<std::vector<Tensor>> parts(t.outputs.size());
  int64_t n = 0;
  std::unique_ptr<data::Iterator> it = dataset.MakeIterator();
  for (int64_t step = 0;; ++step) {
    TW_ASSIGN_OR_RETURN(std::optional<Batch> batch,
                        NextBatch(it.get(), step, "Predict", /*targets_optional=*/true));
    if (!batch.has_value()) break;
    TW_RETURN_IF_ERROR(Build(nullptr));
    TW_ASSIGN_OR_RETURN(std::vector<Tensor> values, RunStep(batch->x, nullptr, /*train=*/false));
    for (size_t o = 0; o < values.size(); ++o) {
      if (values[o].dims() < 1 || values[o].dim_size(0) != batch->rows ||
          (!parts[o].empty() &&
           (parts[o][0].dtype() != values[o].dtype() ||
            parts[o][0].shape() != WithRows(values[o].shape(), parts[o][0].dim_size(0))))) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Predict: output ", t.outputs[o].name, " is ", values[o].shape().DebugString(),
            " at step ", step, ", which does not join the batches before"));
      }
      parts[o].push_back(values[o]);
    }
    n += batch->rows;
  }
  if (n == 0) return absl::InvalidArgumentError("Predict: the dataset is empty");
  // Each output's batches joined in order.
  TensorMap result;
  for (size_t o = 0; o < t.outputs.size(); ++o) {
    Tensor joined(parts[o][0].dtype(), WithRows(parts[o][0].shape(), n));
    char* dst = static_cast<char*>(joined.raw_data());
    for (const Tensor& part : parts[o]) {
      std::memcpy(dst, part.raw_data(), part.TotalBytes());
      dst += part.TotalBytes();
    }
    result[t.outputs[o].name] = joined;
  }
  return result;
}

namespace {

// Keras's side of a training step: the progress bar and the callbacks'
// OnBatchEnd, as a hook of the training loop.
class BatchEndHook : public SessionRunHook {
 public:
  BatchEndHook(Model* model, const std::vector<std::string>& log_names,
               const std::vector<std::shared_ptr<Callback>>& callbacks)
      : model_(model), log_names_(log_names), callbacks_(callbacks) {}

  // An epoch starts: its batches count from 0 on `bar`.
  void StartEpoch(Progbar* bar) {
    bar_ = bar;
    batch_ = 0;
  }

  absl::Status AfterRun(const StepResult& step, const std::vector<Tensor>&, bool*) override {
    std::vector<std::pair<std::string, double>> named = {{"loss", step.loss}};
    for (size_t m = 0; m < log_names_.size(); ++m) named.push_back({log_names_[m], step.logs[m]});
    bar_->Update(batch_ + 1, named, static_cast<double>(step.batch_size));
    const Logs logs(named.begin(), named.end());
    for (const auto& c : callbacks_) TW_RETURN_IF_ERROR(c->OnBatchEnd(model_, batch_, logs));
    ++batch_;
    return absl::OkStatus();
  }

 private:
  Model* const model_;
  const std::vector<std::string>& log_names_;
  const std::vector<std::shared_ptr<Callback>>& callbacks_;
  Progbar* bar_ = nullptr;
  int64_t batch_ = 0;
};

}  // namespace

absl::StatusOr<History> ModelImpl::FitEpochs(
    const FitOptions& options, int64_t steps, const TensorMap* validation_x,
    const TensorMap* validation_y,
    const std::function<training::NextBatchFn(int epoch)>& epoch_batches) {
  std::ostream* out = options.out != nullptr ? options.out : &std::cout;
  const bool dynamic = IsTerminal(out);
  const std::vector<std::string>& log_names = LogNames();
  History history;
  stop_training_ = false;
  Built& b = *built_;
  // Across processes rank 0 alone prints and writes; every process runs the
  // other callbacks and the hooks (they see the same logs and decide alike).
  distribute::Cluster* const cluster = b.cluster;
  const bool chief = cluster == nullptr || cluster->is_chief();
  const int verbose = chief ? options.verbose : 0;
  std::vector<std::shared_ptr<Callback>> callbacks;
  for (const auto& c : options.callbacks) {
    if (chief || !c->WritesFiles()) callbacks.push_back(c);
  }
  auto batch_end = std::make_shared<BatchEndHook>(self_, log_names, callbacks);
  HookList hooks = {batch_end};
  hooks.insert(hooks.end(), options.hooks.begin(), options.hooks.end());
  // The step's metrics are the cluster's: the means over every process's
  // rows (the loss is already the cluster's).
  training::Loop loop({.loss = b.train_loss,
                       .train_ops = {b.train_op},
                       .logs = b.train_logs,
                       .mean_logs_over_processes = true},
                      std::move(hooks), cluster);
  absl::StatusOr<History> result = [&]() -> absl::StatusOr<History> {
    TW_RETURN_IF_ERROR(loop.Begin(b.root));
    TW_RETURN_IF_ERROR(InitializeNewVariables());
    TW_RETURN_IF_ERROR(loop.AfterCreateSession(*b.session, /*global_step=*/0));
    for (const auto& c : callbacks) TW_RETURN_IF_ERROR(c->OnTrainBegin(self_));
    for (int epoch = options.initial_epoch;
         epoch < options.epochs && !stop_training_ && !loop.stop_requested(); ++epoch) {
      for (const auto& c : callbacks) TW_RETURN_IF_ERROR(c->OnEpochBegin(self_, epoch));
      if (verbose > 0) *out << "Epoch " << epoch + 1 << "/" << options.epochs << "\n";
      Progbar bar(steps, verbose > 0 ? out : nullptr, dynamic);
      batch_end->StartEpoch(&bar);
      TW_RETURN_IF_ERROR(loop.Run(*b.session, epoch_batches(epoch)));
      std::vector<std::pair<std::string, double>> extra;
      if (validation_x != nullptr) {
        TW_ASSIGN_OR_RETURN(Logs val, Evaluate(*validation_x, *validation_y, options.batch_size));
        extra.push_back({"val_loss", val["loss"]});
        for (const std::string& m : log_names) extra.push_back({"val_" + m, val[m]});
      }
      bar.Finish(extra);
      history.epochs.push_back(epoch);
      Logs logs;
      for (const auto& [name, value] : bar.Means()) logs[name] = value;
      for (const auto& [name, value] : extra) logs[name] = value;
      for (const auto& [name, value] : logs) history.history[name].push_back(value);
      for (const auto& c : callbacks) TW_RETURN_IF_ERROR(c->OnEpochEnd(self_, epoch, logs));
    }
    for (const auto& c : callbacks) TW_RETURN_IF_ERROR(c->OnTrainEnd(self_));
    TW_RETURN_IF_ERROR(loop.End(*b.session));
    return history;
  }();
  // An error on one process stops the others (they wait for it in the
  // step's collectives).
  return training::StopOthersOnError(cluster, std::move(result));
}

absl::StatusOr<Logs> ModelImpl::Evaluate(const Tensor& x, const Tensor& y, int64_t batch_size) {
  TW_ASSIGN_OR_RETURN(TensorMap xs, InputMap(x));
  TW_ASSIGN_OR_RETURN(TensorMap ys, TargetMap(y));
  return Evaluate(xs, ys, batch_size);
}

absl::StatusOr<Logs> ModelImpl::Evaluate(const TensorMap& x, const TensorMap& y,
                                         int64_t batch_size) {
  TW_RETURN_IF_ERROR(status());
  if (compiled_ == nullptr) return absl::FailedPreconditionError(kNotCompiled);
  TW_RETURN_IF_ERROR(CheckBatchSize(batch_size));
  TW_ASSIGN_OR_RETURN(const int64_t n, CheckData(x, &y));
  TW_RETURN_IF_ERROR(CheckBatches(n, batch_size));
  TW_RETURN_IF_ERROR(Build(&y));
  const std::vector<std::string>& log_names = LogNames();
  std::vector<double> sums(1 + log_names.size(), 0.0);
  TW_RETURN_IF_ERROR(
      RunBatches(x, &y, batch_size, [&](int64_t, int64_t rows, const std::vector<Tensor>& values) {
        for (size_t i = 0; i < sums.size(); ++i) {
          sums[i] += values[i].scalar<float>()() * rows;
        }
        return absl::OkStatus();
      }));
  Logs result;
  result["loss"] = sums[0] / n;
  for (size_t m = 0; m < log_names.size(); ++m) result[log_names[m]] = sums[m + 1] / n;
  return result;
}

absl::StatusOr<Tensor> ModelImpl::Predict(const Tensor& x, int64_t batch_size) {
  TW_ASSIGN_OR_RETURN(TensorMap xs, InputMap(x));
  if (topology_->outputs.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat("The model has ", topology_->outputs.size(),
                                                   " outputs: Predict a TensorMap to get them"));
  }
  TW_ASSIGN_OR_RETURN(TensorMap out, Predict(xs, batch_size));
  return out.begin()->second;
}

absl::StatusOr<TensorMap> ModelImpl::Predict(const TensorMap& x, int64_t batch_size) {
  TW_RETURN_IF_ERROR(CheckBatchSize(batch_size));
  TW_ASSIGN_OR_RETURN(const int64_t n, CheckData(x, nullptr));
  TW_RETURN_IF_ERROR(CheckBatches(n, batch_size));
  TW_RETURN_IF_ERROR(Build(nullptr));
  const Topology& t = *topology_;
  std::vector<Tensor> results(t.outputs.size());
  TW_RETURN_IF_ERROR(RunBatches(
      x, nullptr, batch_size, [&](int64_t step, int64_t rows, const std::vector<Tensor>& values) {
        for (size_t o = 0; o < values.size(); ++o) {
          const Tensor& out = values[o];
          if (out.dims() < 1 || out.dim_size(0) != rows) {
            return absl::InternalError(absl::StrCat("Output ", t.outputs[o].name, " of ", rows,
                                                    " rows is ", out.shape().DebugString()));
          }
          if (step == 0) results[o] = Tensor(out.dtype(), WithRows(out.shape(), n));
          std::memcpy(static_cast<char*>(results[o].raw_data()) + step * batch_size * RowBytes(out),
                      out.raw_data(), out.TotalBytes());
        }
        return absl::OkStatus();
      }));
  TensorMap result;
  for (size_t o = 0; o < t.outputs.size(); ++o) result[t.outputs[o].name] = results[o];
  return result;
}

absl::StatusOr<Logs> ModelImpl::TrainOnBatch(const Tensor& x, const Tensor& y) {
  TW_ASSIGN_OR_RETURN(TensorMap xs, InputMap(x));
  TW_ASSIGN_OR_RETURN(TensorMap ys, TargetMap(y));
  return TrainOnBatch(xs, ys);
}

absl::StatusOr<Logs> ModelImpl::TrainOnBatch(const TensorMap& x, const TensorMap& y) {
  TW_RETURN_IF_ERROR(status());
  if (compiled_ == nullptr) return absl::FailedPreconditionError(kNotCompiled);
  TW_ASSIGN_OR_RETURN(const int64_t rows, CheckData(x, &y));
  TW_RETURN_IF_ERROR(CheckBatch(rows));
  TW_RETURN_IF_ERROR(Build(&y));
  TW_ASSIGN_OR_RETURN(std::vector<Tensor> values, RunStep(x, &y, /*train=*/true));
  Logs logs;
  logs["loss"] = values[0].scalar<float>()();
  const std::vector<std::string>& log_names = LogNames();
  for (size_t m = 0; m < log_names.size(); ++m)
    logs[log_names[m]] = values[m + 1].scalar<float>()();
  return logs;
}

absl::StatusOr<Tensor> ModelImpl::PredictOnBatch(const Tensor& x) {
  return Predict(x, std::max<int64_t>(1, x.dims() > 0 ? x.dim_size(0) : 1));
}

absl::StatusOr<TensorMap> ModelImpl::PredictOnBatch(const TensorMap& x) {
  const int64_t rows =
      x.empty() || x.begin()->second.dims() < 1 ? 1 : x.begin()->second.dim_size(0);
  return Predict(x, std::max<int64_t>(1, rows));
}

}  // namespace keras
}  // namespace towerflow
