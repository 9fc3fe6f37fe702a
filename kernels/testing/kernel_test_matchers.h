// gmock helpers for kernel tests: RunOk, plus the tensor literals and
// matchers of testing/tensor_testing.h.
//
//   EXPECT_THAT(RunOk(runner, {a, b}), TensorIs<float>({2, 2}, {1, 2, 3, 4}));
#ifndef TOWERFLOW_KERNELS_TESTING_KERNEL_TEST_MATCHERS_H_
#define TOWERFLOW_KERNELS_TESTING_KERNEL_TEST_MATCHERS_H_

#include <ostream>
#include <vector>

#include "gmock/gmock.h"
#include "kernels/testing/kernel_runner.h"
#include "testing/tensor_testing.h"

namespace towerflow {

// Runs `runner` on `inputs` and returns output `i`; fails the test (and
// returns an empty tensor) when the kernel fails.
inline Tensor RunOk(KernelRunner& runner, const std::vector<Tensor>& inputs, int i = 0) {
  absl::StatusOr<std::vector<Tensor>> out = runner.Run(inputs);
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok() || static_cast<int>(out->size()) <= i) return Tensor();
  return (*out)[i];
}

}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_TESTING_KERNEL_TEST_MATCHERS_H_
