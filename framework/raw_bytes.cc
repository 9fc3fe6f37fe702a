#include "framework/raw_bytes.h"

#include <cstdint>

namespace towerflow {

void NormalizeBoolBytes(Tensor* t) {
  if (t->dtype() != DT_BOOL) return;
  // Read as bytes: reading them as bool is what must not happen.
  auto* bytes = static_cast<uint8_t*>(t->raw_data());
  for (int64_t i = 0, n = t->NumElements(); i < n; ++i) bytes[i] = bytes[i] != 0 ? 1 : 0;
}

}  // namespace towerflow
