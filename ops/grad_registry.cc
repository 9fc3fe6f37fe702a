#include "ops/grad_registry.h"

#include <algorithm>
#include <iostream>

#include "absl/strings/str_cat.h"

namespace towerflow {

GradientRegistry* GradientRegistry::Global() {
  static GradientRegistry* registry = new GradientRegistry();
  return registry;
}

void GradientRegistry::Add(const std::string& op, Entry entry) {
  // Our own registrations are wrong: say so at start-up (the registry test
  // fails too) and keep the first.
  if (!entries_.emplace(op, std::move(entry)).second) {
    std::cerr << "Towerflow: gradient for op " << op << " registered twice\n";
  }
}

void GradientRegistry::Register(const std::string& op, GradFunc fn) {
  Entry e;
  e.dense = std::move(fn);
  Add(op, std::move(e));
}

void GradientRegistry::RegisterSparse(const std::string& op, SparseGradFunc fn) {
  Entry e;
  e.sparse = std::move(fn);
  Add(op, std::move(e));
}

void GradientRegistry::RegisterPassThrough(const std::string& op) {
  Entry e;
  e.pass_through = true;
  Add(op, std::move(e));
}

void GradientRegistry::RegisterNoGradient(const std::string& op) { Add(op, Entry()); }

absl::StatusOr<const GradientRegistry::Entry*> GradientRegistry::Lookup(
    absl::string_view op) const {
  auto it = entries_.find(op);
  if (it == entries_.end()) {
    return absl::NotFoundError(absl::StrCat("No gradient defined for op: ", op));
  }
  return &it->second;
}

std::vector<std::string> GradientRegistry::Ops(bool with_gradient) const {
  std::vector<std::string> ops;
  for (const auto& [op, entry] : entries_) {
    if (!with_gradient || !entry.no_gradient()) ops.push_back(op);
  }
  std::sort(ops.begin(), ops.end());
  return ops;
}

}  // namespace towerflow
