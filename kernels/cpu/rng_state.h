// The Philox state of TF 2's tf.random.Generator (kernels/cpu/rng_state_ops.cc),
// shared by the state steps and the Stateful* draws.
#ifndef TOWERFLOW_KERNELS_CPU_RNG_STATE_H_
#define TOWERFLOW_KERNELS_CPU_RNG_STATE_H_

#include <cstdint>

#include "absl/status/status.h"
#include "framework/kernel_context.h"

namespace towerflow {

// [counter low, counter high, key]: the state's first words.
inline constexpr int64_t kPhiloxStateSize = 3;

// Under the lock of the int64 state variable at input 0: TF's checks of it
// and of `alg` (Philox, 1, or auto-select, 3; ThreeFry, 2, refused with
// `threefry_code`), its first kPhiloxStateSize words copied into `old`
// (when given), and its 128-bit counter moved on by 256 * delta (wrapping
// in 64 bits, as TF's). The variable is copied first when another holds
// its buffer.
absl::Status ReadAndSkipPhilox(KernelContext* ctx, int64_t alg, uint64_t delta, int64_t* old,
                               absl::StatusCode threefry_code = absl::StatusCode::kInvalidArgument);

}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_CPU_RNG_STATE_H_
