#include "train/saver.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/tensor_bundle.h"
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/control_ops.h"
#include "ops/gen/io_ops.h"
#include "ops/gen/state_ops.h"

namespace towerflow {
namespace train {
namespace {

// A string vector constant.
Output Strings(const Scope& scope, const std::vector<std::string>& values) {
  Tensor t(DT_STRING, TensorShape({static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) t.data<std::string>()[i] = values[i];
  return ops::Const(scope, t.AsProto());
}

}  // namespace

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
  absl::flat_hash_set<std::string> names;
  for (size_t i = 0; i < saver->vars_.size(); ++i) {
    if (!saver->vars_[i].valid()) return absl::InvalidArgumentError("Saver: invalid variable");
    if (!names.insert(saver->names_[i]).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("Saver: name ", saver->names_[i], " is listed twice"));
    }
  }

  const Scope save = scope.NewSubScope("save").WithNoControlDependencies();
  const Scope cpu = save.WithDevice("/device:CPU:0");
  saver->filename_ = ops::Const(cpu.WithOpName("Const"), std::string("model"));
  const std::vector<std::string> no_slices(saver->vars_.size());
  std::vector<Output> values;
  std::vector<DataType> dtypes;
  for (const Variable& v : saver->vars_) {
    values.push_back(ops::ReadVariableOp(save.ColocateWith(v.handle()), v.handle(), v.dtype()));
    dtypes.push_back(v.dtype());
  }
  ops::SaveV2 save_op(cpu.WithOpName("SaveV2"), saver->filename_,
                      Strings(cpu.WithOpName("SaveV2/tensor_names"), saver->names_),
                      Strings(cpu.WithOpName("SaveV2/shape_and_slices"), no_slices), values);
  saver->save_ = ops::Identity(save.WithOpName("control_dependency")
                                   .WithControlDependencies({save_op.operation})
                                   .ColocateWith(saver->filename_),
                               saver->filename_);
  ops::RestoreV2 restore(cpu.WithOpName("RestoreV2"), saver->filename_,
                         Strings(cpu.WithOpName("RestoreV2/tensor_names"), saver->names_),
                         Strings(cpu.WithOpName("RestoreV2/shape_and_slices"), no_slices), dtypes);
  std::vector<Operation> assigns;
  for (size_t i = 0; i < saver->vars_.size(); ++i) {
    const Variable& v = saver->vars_[i];
    assigns.push_back(ops::AssignVariableOp(
        save.WithOpName("AssignVariableOp").ColocateWith(v.handle()), v.handle(), restore[i]));
  }
  saver->restore_ = ops::NoOp(save.WithOpName("restore_all").WithControlDependencies(assigns));
  TW_RETURN_IF_ERROR(scope.status());

  SaverDef& def = saver->saver_def_;
  def.set_filename_tensor_name(saver->filename_.name());
  def.set_save_tensor_name(saver->save_.name());
  def.set_restore_op_name(saver->restore_.node()->name());
  def.set_max_to_keep(saver->options_.max_to_keep);
  def.set_keep_checkpoint_every_n_hours(10000.0f);  // TF's default: never
  def.set_version(SaverDef::V2);
  return saver;
}

absl::StatusOr<std::string> Saver::Save(const ClientSession& session, const std::string& dir,
                                        int64_t global_step) const {
  TW_RETURN_IF_ERROR(CreateDirectories(dir));
  const std::string name = absl::StrCat(options_.basename, "-", global_step);
  const std::string path = dir.empty() ? name : absl::StrCat(dir, "/", name);
  Tensor prefix(DT_STRING, TensorShape());
  *prefix.data<std::string>() = path;
  std::vector<Tensor> unused;
  TW_RETURN_IF_ERROR(session.Run({{filename_, prefix}}, {save_}, {}, &unused));
  TW_RETURN_IF_ERROR(RecordCheckpoint(dir, name, options_.max_to_keep));
  return path;
}

absl::Status Saver::Restore(const ClientSession& session, const std::string& path) const {
  // Checked here first, for errors that name the variable; RestoreV2 reads
  // every tensor before any assignment runs.
  TW_ASSIGN_OR_RETURN(std::unique_ptr<BundleReader> reader, BundleReader::Open(path));
  for (size_t i = 0; i < vars_.size(); ++i) {
    const Variable& v = vars_[i];
    TW_ASSIGN_OR_RETURN(const BundleEntryProto* entry, reader->Lookup(names_[i]));
    const TensorShape shape = BundleReader::ShapeOf(*entry);
    if (entry->dtype() != v.dtype() || shape != v.shape()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Cannot restore variable ", v.name(), " (", DataTypeString(v.dtype()), " ",
                       v.shape().DebugString(), ") from checkpoint ", path, ", which holds ",
                       DataTypeString(entry->dtype()), " ", shape.DebugString()));
    }
  }
  Tensor prefix(DT_STRING, TensorShape());
  *prefix.data<std::string>() = path;
  std::vector<Tensor> unused;
  return session.Run({{filename_, prefix}}, {}, {restore_}, &unused);
}

}  // namespace train
}  // namespace towerflow
