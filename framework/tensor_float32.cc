#include "framework/tensor_float32.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace towerflow {
namespace {

std::atomic<bool>& Enabled() {
  static std::atomic<bool> enabled{[] {
    const char* override = std::getenv("NVIDIA_TF32_OVERRIDE");
    return override == nullptr || std::strcmp(override, "0") != 0;
  }()};
  return enabled;
}

}  // namespace

void EnableTensorFloat32Execution(bool enabled) {
  Enabled().store(enabled, std::memory_order_relaxed);
}

bool TensorFloat32ExecutionEnabled() { return Enabled().load(std::memory_order_relaxed); }

}  // namespace towerflow
