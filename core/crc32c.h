// CRC-32C (Castagnoli), as TFRecord files, TensorBoard event files and
// checkpoints use it, with TensorFlow's masking.
//
//   uint32_t crc = crc32c::Value(data);
//   uint32_t stored = crc32c::Mask(crc);   // what TFRecord writes
//
// Uses the SSE4.2 crc32 instruction when the CPU has it, else a table.
// Thread-safe.
#ifndef TOWERFLOW_CORE_CRC32C_H_
#define TOWERFLOW_CORE_CRC32C_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace towerflow {
namespace crc32c {

// The CRC of `data` appended to data whose CRC was `crc`.
uint32_t Extend(uint32_t crc, absl::string_view data);

inline uint32_t Value(absl::string_view data) { return Extend(0, data); }

// Masked CRCs are stored so that a CRC of data holding CRCs stays strong:
// rotate right by 15 bits and add a constant.
inline uint32_t Mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

inline uint32_t Unmask(uint32_t masked) {
  const uint32_t rot = masked - 0xa282ead8u;
  return (rot >> 17) | (rot << 15);
}

}  // namespace crc32c
}  // namespace towerflow

#endif  // TOWERFLOW_CORE_CRC32C_H_
