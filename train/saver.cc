#include "train/saver.h"

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "ops/ops.h"

namespace towerflow {
namespace train {

absl::StatusOr<std::unique_ptr<Saver>> Saver::Create(const Scope& scope, SaverOptions options) {
  TW_RETURN_IF_ERROR(scope.status());
  std::unique_ptr<Saver> saver(new Saver());
  if (!options.var_names.empty()) {
    for (const auto& [name, var] : options.var_names) {
      saver->names_.push_back(name);
      saver->vars_.push_back(var);
    }
  } else {
    saver->vars_ = options.var_list.empty()
                       ? GetVariables(*scope.graph(), GraphKeys::kGlobalVariables)
                       : options.var_list;
    for (const Variable& v : saver->vars_) saver->names_.push_back(v.name());
  }
  if (saver->vars_.empty()) return absl::InvalidArgumentError("Saver: no variables to save");
  saver->options_ = std::move(options);
  const Scope save = scope.NewSubScope("save").WithNoControlDependencies();
  absl::flat_hash_set<std::string> names;
  for (size_t i = 0; i < saver->vars_.size(); ++i) {
    const Variable& v = saver->vars_[i];
    if (!v.valid()) return absl::InvalidArgumentError("Saver: invalid variable");
    if (!names.insert(saver->names_[i]).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("Saver: name ", saver->names_[i], " is listed twice"));
    }
    const Scope at = save.ColocateWith(v.handle());
    saver->reads_.push_back(ops::ReadVariableOp(at, v.handle(), v.dtype()));
    Output value = ops::Placeholder(at, v.dtype());
    saver->restore_values_.push_back(value);
    saver->assigns_.push_back(ops::AssignVariableOp(at, v.handle(), value));
  }
  TW_RETURN_IF_ERROR(scope.status());
  return saver;
}

absl::StatusOr<std::string> Saver::Save(const ClientSession& session, const std::string& dir,
                                        int64_t global_step) const {
  std::vector<Tensor> values;
  TW_RETURN_IF_ERROR(session.Run(reads_, &values));
  std::vector<NamedTensor> tensors;
  for (size_t i = 0; i < vars_.size(); ++i) tensors.push_back({names_[i], values[i]});
  return SaveCheckpoint(dir, options_.basename, global_step, tensors, options_.max_to_keep);
}

absl::Status Saver::Restore(const ClientSession& session, const std::string& path) const {
  TW_ASSIGN_OR_RETURN(std::vector<NamedTensor> tensors, ReadCheckpoint(path));
  absl::flat_hash_map<std::string, const Tensor*> by_name;
  for (const NamedTensor& nt : tensors) by_name[nt.name] = &nt.tensor;
  ClientSession::FeedType feeds;
  for (size_t i = 0; i < vars_.size(); ++i) {
    const Variable& v = vars_[i];
    auto it = by_name.find(names_[i]);
    if (it == by_name.end()) {
      return absl::NotFoundError(
          absl::StrCat("Key ", names_[i], " not found in checkpoint ", path));
    }
    const Tensor& t = *it->second;
    if (t.dtype() != v.dtype() || t.shape() != v.shape()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Cannot restore variable ", v.name(), " (", DataTypeString(v.dtype()), " ",
                       v.shape().DebugString(), ") from checkpoint ", path, ", which holds ",
                       DataTypeString(t.dtype()), " ", t.shape().DebugString()));
    }
    feeds.emplace(restore_values_[i], t);
  }
  std::vector<Tensor> unused;
  return session.Run(feeds, {}, assigns_, &unused);
}

}  // namespace train
}  // namespace towerflow
