#include "framework/resource_mgr.h"

namespace towerflow {

void ResourceMgr::Cleanup(const std::string& container) {
  absl::MutexLock lock(&mu_);
  for (auto it = resources_.begin(); it != resources_.end();) {
    if (container.empty() || std::get<0>(it->first) == container) {
      resources_.erase(it++);
      ++removals_;
    } else {
      ++it;
    }
  }
}

}  // namespace towerflow
