#include "graph/collections.h"

#include <algorithm>

namespace towerflow {

void Collections::Add(absl::string_view key, CollectionEntry entry) {
  auto it = map_.find(key);
  if (it == map_.end()) it = map_.emplace(std::string(key), std::vector<CollectionEntry>()).first;
  it->second.push_back(entry);
}

const std::vector<CollectionEntry>& Collections::Get(absl::string_view key) const {
  static const std::vector<CollectionEntry>* const kEmpty = new std::vector<CollectionEntry>;
  auto it = map_.find(key);
  return it == map_.end() ? *kEmpty : it->second;
}

std::vector<std::string> Collections::Keys() const {
  std::vector<std::string> keys;
  for (const auto& [key, entries] : map_) {
    if (!entries.empty()) keys.push_back(key);
  }
  return keys;
}

void Collections::RemoveNode(const Node* node) {
  for (auto& [key, entries] : map_) {
    entries.erase(std::remove_if(entries.begin(), entries.end(),
                                 [node](const CollectionEntry& e) { return e.node == node; }),
                  entries.end());
  }
}

}  // namespace towerflow
