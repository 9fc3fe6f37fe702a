#include "graph/variable_store.h"

namespace towerflow {

const VariableRecord* VariableStore::Find(absl::string_view name) const {
  auto it = records_.find(name);
  return it == records_.end() ? nullptr : &it->second;
}

const VariableRecord* VariableStore::FindByHandle(const Node* handle) const {
  auto it = by_handle_.find(handle);
  return it == by_handle_.end() ? nullptr : it->second;
}

void VariableStore::Add(VariableRecord record) {
  std::string name = record.name;
  // std::map never moves its elements, so the index may point into it.
  const VariableRecord& stored = records_.emplace(std::move(name), std::move(record)).first->second;
  by_handle_[stored.handle] = &stored;
}

void VariableStore::RemoveNode(const Node* node) {
  for (auto it = records_.begin(); it != records_.end();) {
    const VariableRecord& r = it->second;
    if (r.handle == node || r.initializer == node || r.initial_value == node) {
      by_handle_.erase(r.handle);
      it = records_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace towerflow
