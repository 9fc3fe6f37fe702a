// NcclAllReduce on GPUs (NCCL): one GPU alone, every GPU present, big
// tensors against the CPU kernel, and the member errors. Skipped without a
// GPU; the all-GPU cases need two.
#include <cstring>
#include <string>
#include <vector>

#include "core/tensor_proto_util.h"
#include "framework/device.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/const_op.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/nccl_ops.h"
#include "runtime/client_session.h"
#include "testing/tensor_testing.h"
#include "tests/test_util.h"

namespace towerflow {
namespace {

Scope OnGpu(const Scope& s, int i) { return s.WithDevice("/gpu:" + std::to_string(i)); }

SessionOptions Gpus(int n) {
  SessionOptions options;
  options.device_count[kDeviceGpu] = n;
  options.allow_soft_placement = false;  // a GPU op must run on its GPU
  return options;
}

// Input i: n floats k + i * 0.5 (sums of these are exact in float).
Output Ramp(const Scope& s, int64_t n, int i) {
  return ops::Add(s, ops::Cast(s, ops::Range(s, 0, static_cast<int32_t>(n), 1), DT_FLOAT),
                  0.5f * static_cast<float>(i));
}

TEST(NcclAllReduceGpuTest, OneGpuAlone) {
  if (NumLocalDevices(kDeviceGpu) == 0) GTEST_SKIP() << "no GPU on this machine";
  Scope root = Scope::NewRootScope();
  Output x = ops::Const(OnGpu(root, 0), {{1.5f, -2.0f}, {3.0f, 4.0f}});
  Output y = ops::NcclAllReduce(OnGpu(root, 0), x, "sum", 1, "alone");
  Output z = ops::Mul(OnGpu(root, 0), y, 2.0f);  // a consumer on the compute stream
  TW_ASSERT_OK(root.status());
  ClientSession session(root, Gpus(1));
  std::vector<Tensor> got;
  for (int step = 0; step < 3; ++step) {
    TW_ASSERT_OK(session.Run({y, z}, &got));
    EXPECT_THAT(got[0], TensorIs<float>({2, 2}, {1.5f, -2, 3, 4}));
    EXPECT_THAT(got[1], TensorIs<float>({2, 2}, {3, -4, 6, 8}));
  }
}

TEST(NcclAllReduceGpuTest, EveryGpuAgreesWithTheCpuKernel) {
  const int n = NumLocalDevices(kDeviceGpu);
  if (n < 2) GTEST_SKIP() << "needs two GPUs, this machine has " << n;
  for (const int64_t size : {int64_t{1}, int64_t{1000003}}) {
    for (const char* reduction : {"sum", "max"}) {
      Scope root = Scope::NewRootScope();
      std::vector<Output> gpu_out, cpu_out;
      for (int i = 0; i < n; ++i) {
        gpu_out.push_back(
            ops::NcclAllReduce(OnGpu(root, i), Ramp(OnGpu(root, i), size, i), reduction, n, "g"));
        const Scope cpu = root.WithDevice("/cpu:" + std::to_string(i));
        cpu_out.push_back(ops::NcclAllReduce(cpu, Ramp(cpu, size, i), reduction, n, "c"));
      }
      TW_ASSERT_OK(root.status());
      SessionOptions options = Gpus(n);
      options.device_count[kDeviceCpu] = n;
      ClientSession session(root, options);
      std::vector<Tensor> got;
      std::vector<Output> fetches = gpu_out;
      fetches.insert(fetches.end(), cpu_out.begin(), cpu_out.end());
      TW_ASSERT_OK(session.Run(fetches, &got));
      for (int i = 0; i < n; ++i) {
        ASSERT_EQ(got[i].NumElements(), size);
        EXPECT_EQ(std::memcmp(got[i].raw_data(), got[n].raw_data(), got[i].TotalBytes()), 0)
            << reduction << " GPU " << i << " of " << size;
      }
    }
  }
}

TEST(NcclAllReduceGpuTest, TwoMembersOnOneGpuOrMixedDevicesAreErrors) {
  if (NumLocalDevices(kDeviceGpu) == 0) GTEST_SKIP() << "no GPU on this machine";
  {
    Scope root = Scope::NewRootScope();
    Output x = ops::Const(OnGpu(root, 0), {1.0f});
    Output a = ops::NcclAllReduce(OnGpu(root, 0), x, "sum", 2, "same");
    Output b = ops::NcclAllReduce(OnGpu(root, 0), x, "sum", 2, "same");
    ClientSession session(root, Gpus(1));
    std::vector<Tensor> got;
    EXPECT_THAT(session.Run({a, b}, &got),
                testing::StatusIs(absl::StatusCode::kInvalidArgument, "NCCL takes one member"));
  }
  {
    Scope root = Scope::NewRootScope();
    Output a =
        ops::NcclAllReduce(OnGpu(root, 0), ops::Const(OnGpu(root, 0), {1.0f}), "sum", 2, "mixed");
    const Scope cpu = root.WithDevice("/cpu:0");
    Output b = ops::NcclAllReduce(cpu, ops::Const(cpu, {1.0f}), "sum", 2, "mixed");
    ClientSession session(root, Gpus(1));
    std::vector<Tensor> got;
    EXPECT_THAT(session.Run({a, b}, &got),
                testing::StatusIs(absl::StatusCode::kInvalidArgument, "cannot mix device types"));
  }
}

}  // namespace
}  // namespace towerflow
