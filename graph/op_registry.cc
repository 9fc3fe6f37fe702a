#include "graph/op_registry.h"

#include <iostream>

#include "absl/strings/str_cat.h"
#include "framework/op_def_source.h"

namespace towerflow {

OpRegistry* OpRegistry::Global() {
  static OpRegistry* const registry = [] {
    auto* r = new OpRegistry;
    // Code below graph/ reads schemas through framework/op_def_source.h.
    SetOpDefSource([r](const std::string& op) -> const OpDef* {
      const OpRegistrationData* data = r->Find(op);
      return data == nullptr ? nullptr : &data->op_def;
    });
    return r;
  }();
  return registry;
}

absl::Status OpRegistry::Register(const OpDefBuilder& builder) {
  absl::StatusOr<OpRegistrationData> data = builder.Finalize();
  absl::Status status = data.status();
  absl::MutexLock lock(&mu_);
  if (status.ok()) {
    auto [it, inserted] = ops_.try_emplace(
        builder.op_name(), std::make_unique<const OpRegistrationData>(*std::move(data)));
    if (!inserted) {
      status = absl::AlreadyExistsError(
          absl::StrCat("Op '", builder.op_name(), "' is registered twice"));
    }
  }
  if (!status.ok()) errors_.push_back(status.ToString());
  return status;
}

const OpRegistrationData* OpRegistry::Find(absl::string_view op) const {
  absl::MutexLock lock(&mu_);
  auto it = ops_.find(op);
  return it == ops_.end() ? nullptr : it->second.get();
}

absl::StatusOr<const OpRegistrationData*> OpRegistry::LookUp(absl::string_view op) const {
  const OpRegistrationData* data = Find(op);
  if (data == nullptr) {
    return absl::NotFoundError(absl::StrCat("Op type not registered '", op, "'"));
  }
  return data;
}

std::vector<std::string> OpRegistry::ListOps() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> names;
  names.reserve(ops_.size());
  for (const auto& [name, data] : ops_) names.push_back(name);
  return names;
}

std::vector<std::string> OpRegistry::registration_errors() const {
  absl::MutexLock lock(&mu_);
  return errors_;
}

void RegisterOp(const OpDefBuilder& builder) {
  const absl::Status status = OpRegistry::Global()->Register(builder);
  // Our own specs are wrong: say so at startup; the registry test fails too.
  if (!status.ok()) std::cerr << "Towerflow op registration failed: " << status << "\n";
}

namespace op_registry_internal {

OpRegistrar::OpRegistrar(const OpDefBuilder& builder) { RegisterOp(builder); }

}  // namespace op_registry_internal
}  // namespace towerflow
