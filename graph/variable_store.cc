#include "graph/variable_store.h"

#include <algorithm>

namespace towerflow {

const VariableRecord* VariableStore::Find(absl::string_view name) const {
  auto it = records_.find(name);
  return it == records_.end() ? nullptr : &it->second;
}

const VariableRecord* VariableStore::FindByHandle(const Node* handle) const {
  for (const auto& [name, record] : records_) {
    if (record.handle == handle) return &record;
  }
  return nullptr;
}

void VariableStore::Add(VariableRecord record) {
  record.creation_order = next_order_++;
  std::string name = record.name;
  records_.emplace(std::move(name), std::move(record));
}

void VariableStore::RemoveNode(const Node* node) {
  for (auto it = records_.begin(); it != records_.end();) {
    const VariableRecord& r = it->second;
    if (r.handle == node || r.initializer == node || r.initial_value == node) {
      it = records_.erase(it);
    } else {
      ++it;
    }
  }
}

std::vector<const VariableRecord*> VariableStore::All() const {
  std::vector<const VariableRecord*> all;
  for (const auto& [name, record] : records_) all.push_back(&record);
  std::sort(all.begin(), all.end(), [](const VariableRecord* a, const VariableRecord* b) {
    return a->creation_order < b->creation_order;
  });
  return all;
}

}  // namespace towerflow
