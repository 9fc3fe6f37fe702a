// The Philox state of TF 2's tf.random.Generator (kernels/cpu/rng_state_ops.cc),
// shared by the state steps and the Stateful* draws.
#ifndef TOWERFLOW_KERNELS_CPU_RNG_STATE_H_
#define TOWERFLOW_KERNELS_CPU_RNG_STATE_H_

#include <cstdint>

#include "absl/status/status.h"
#include "core/philox.h"
#include "framework/kernel_context.h"

namespace towerflow {

// [counter low, counter high, key]: the state's first words.
inline constexpr int64_t kPhiloxStateSize = 3;

// Under the lock of the int64 state variable at input 0: TF's checks of it
// and of `alg` (Philox, 1, or auto-select, 3; ThreeFry, 2, refused with
// `threefry_code`), its first kPhiloxStateSize words copied into `old`
// (when given), and its 128-bit counter moved on by `blocks` (wrapping in
// 64 bits, as TF's; RngReadAndSkip's delta is 256 blocks, as each output of
// a draw). The variable is copied first when another holds its buffer.
absl::Status ReadAndSkipPhilox(KernelContext* ctx, int64_t alg, uint64_t blocks, int64_t* old,
                               absl::StatusCode threefry_code = absl::StatusCode::kInvalidArgument);

// The Philox stream of a state read by ReadAndSkipPhilox: the counter's
// two words, then the key.
inline PhiloxStream StreamOfState(const int64_t (&state)[kPhiloxStateSize]) {
  const auto word = [&](int i, int half) {
    return static_cast<uint32_t>(static_cast<uint64_t>(state[i]) >> (32 * half));
  };
  return PhiloxStream(PhiloxBlock{{word(0, 0), word(0, 1), word(1, 0), word(1, 1)}},
                      PhiloxKey{{word(2, 0), word(2, 1)}});
}

}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_CPU_RNG_STATE_H_
