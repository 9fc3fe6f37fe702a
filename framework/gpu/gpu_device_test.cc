// GPU devices: absent from CPU-only builds; under --config=cuda, CUDA errors
// become Status values, and on a machine with a GPU the caching allocator,
// the streams and an nvcc-built kernel work (skipped without one).
#include <vector>

#include "framework/device.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

#ifdef TOWERFLOW_CUDA
#include "core/status_macros.h"
#include "framework/gpu/cuda_status.h"
#include "framework/gpu/gpu_device.h"
#include "framework/gpu/pinned_allocator.h"
#include "framework/gpu/testing/add_one.h"
#include "framework/resource_mgr.h"
#include "framework/tensor.h"
#endif

namespace towerflow {
namespace {

using testing::StatusIs;

#ifndef TOWERFLOW_CUDA

TEST(GpuDeviceTest, ACpuOnlyBuildHasNoGpuDeviceType) {
  EXPECT_EQ(GetDeviceFactory(kDeviceGpu), nullptr);
  EXPECT_EQ(NumLocalDevices(kDeviceGpu), 0);
  EXPECT_EQ(RegisteredDeviceTypes(), std::vector<std::string>{kDeviceCpu});
}

#else  // TOWERFLOW_CUDA

TEST(GpuDeviceTest, RegistersTheGpusPresent) {
  ASSERT_NE(GetDeviceFactory(kDeviceGpu), nullptr);
  EXPECT_EQ(NumLocalDevices(kDeviceGpu), gpu::CudaDeviceCount());
  // GPU before CPU, as TensorFlow's placer prefers it.
  EXPECT_EQ(RegisteredDeviceTypes(), (std::vector<std::string>{kDeviceGpu, kDeviceCpu}));
}

TEST(CudaStatusTest, NamesTheCallAndMapsOutOfMemory) {
  TW_EXPECT_OK(gpu::CudaStatus(cudaSuccess, "cudaFree(p)", "x.cc", 1));
  EXPECT_THAT(gpu::CudaStatus(cudaErrorMemoryAllocation, "cudaMalloc(&p, n)", "x.cc", 12),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       "cudaMalloc(&p, n) failed at x.cc:12: cudaErrorMemoryAllocation: "));
  EXPECT_THAT(gpu::CudaStatus(cudaErrorInvalidValue, "cudaMemcpy(d, s, n, k)", "y.cc", 7),
              StatusIs(absl::StatusCode::kInternal,
                       "cudaMemcpy(d, s, n, k) failed at y.cc:7: cudaErrorInvalidValue"));
}

TEST(CachingGpuAllocatorTest, RoundsSizes) {
  using gpu::CachingGpuAllocator;
  EXPECT_EQ(CachingGpuAllocator::RoundedSize(0), 512u);
  EXPECT_EQ(CachingGpuAllocator::RoundedSize(513), 1024u);
  EXPECT_EQ(CachingGpuAllocator::RoundedSize(1 << 20), 1u << 20);
  EXPECT_EQ(CachingGpuAllocator::RoundedSize((1 << 20) + 1), 2u << 20);
  EXPECT_EQ(CachingGpuAllocator::RoundedSize(3u << 20), 4u << 20);
}

TEST(GpuDeviceTest, AllocatorStreamsAndAKernel) {
  if (gpu::CudaDeviceCount() == 0) GTEST_SKIP() << "no GPU on this machine";
  ThreadPool pool("test", 1);
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<gpu::GpuDevice> device, gpu::GpuDevice::Create(0, &pool));
  EXPECT_EQ(device->name(), "/job:localhost/replica:0/task:0/device:GPU:0");
  gpu::CachingGpuAllocator* allocator = device->gpu_allocator();

  constexpr int kN = 1000;
  std::vector<float> host(kN);
  for (int i = 0; i < kN; ++i) host[i] = static_cast<float>(i);
  auto* x = static_cast<float*>(allocator->AllocateRaw(kTensorAlignment, kN * sizeof(float)));
  ASSERT_NE(x, nullptr);
  TW_ASSERT_OK(gpu::CudaStatus(cudaMemcpyAsync(x, host.data(), kN * sizeof(float),
                                               cudaMemcpyHostToDevice, device->compute_stream()),
                               "h2d", __FILE__, __LINE__));
  TW_ASSERT_OK(gpu::CudaStatus(gpu::testing::LaunchAddOne(x, kN, device->compute_stream()),
                               "AddOne", __FILE__, __LINE__));
  std::vector<float> back(kN);
  TW_ASSERT_OK(gpu::CudaStatus(cudaMemcpyAsync(back.data(), x, kN * sizeof(float),
                                               cudaMemcpyDeviceToHost, device->compute_stream()),
                               "d2h", __FILE__, __LINE__));
  TW_ASSERT_OK(
      gpu::CudaStatus(cudaStreamSynchronize(device->compute_stream()), "sync", __FILE__, __LINE__));
  for (int i = 0; i < kN; ++i) ASSERT_EQ(back[i], i + 1.0f) << i;

  // Freed blocks are reused without the driver.
  allocator->DeallocateRaw(x);
  EXPECT_EQ(allocator->stats().bytes_cached, 4096);
  void* again = allocator->AllocateRaw(kTensorAlignment, kN * sizeof(float) - 10);
  EXPECT_EQ(again, x);
  EXPECT_EQ(allocator->stats().driver_allocations, 1);
  allocator->DeallocateRaw(again);
  // More than any GPU has: nullptr, not a crash.
  EXPECT_EQ(allocator->AllocateRaw(kTensorAlignment, size_t{1} << 52), nullptr);
}

// A variable in the device's resource manager holds a block of the
// device's allocator; destroying the device returns the block before the
// allocator goes (the other way round, every session with a GPU variable
// crashed at its end on an H100).
TEST(GpuDeviceTest, DestroyingADeviceFreesItsVariablesBeforeItsAllocator) {
  if (gpu::CudaDeviceCount() == 0) GTEST_SKIP() << "no GPU on this machine";
  ThreadPool pool("test", 1);
  // Twenty times: freeing into a destroyed allocator does not always crash
  // the first time.
  for (int i = 0; i < 20; ++i) {
    TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<gpu::GpuDevice> device,
                            gpu::GpuDevice::Create(0, &pool));
    TW_ASSERT_OK_AND_ASSIGN(
        std::shared_ptr<Var> var,
        device->resource_manager()->LookupOrCreate<Var>(
            "", "v", [&]() -> absl::StatusOr<std::shared_ptr<Var> > {
              auto v = std::make_shared<Var>(DT_FLOAT, "v");
              TW_ASSIGN_OR_RETURN(
                  Tensor t, Tensor::Allocate(device->allocator(), DT_FLOAT, TensorShape({1000})));
              absl::MutexLock lock(&v->mu);
              v->tensor = std::move(t);
              v->initialized = true;
              return v;
            }));
    EXPECT_EQ(device->gpu_allocator()->stats().bytes_in_use, 4096);
    var.reset();
    device.reset();  // the resource manager's Var frees its block here
  }
}

// Feeds are staged through pinned memory and copied asynchronously, so the
// caller's buffer may change as soon as CopyFromHost returns; fetches land
// in pinned memory, which is cached for the next one.
TEST(GpuDeviceTest, PinnedFeedsAndFetches) {
  if (gpu::CudaDeviceCount() == 0) GTEST_SKIP() << "no GPU on this machine";
  ThreadPool pool("test", 1);
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<gpu::GpuDevice> device, gpu::GpuDevice::Create(0, &pool));
  constexpr int kN = 1 << 20;
  TW_ASSERT_OK_AND_ASSIGN(Tensor feed,
                          Tensor::Allocate(CpuAllocator(), DT_FLOAT, TensorShape({kN})));
  for (int i = 0; i < kN; ++i) feed.data<float>()[i] = static_cast<float>(i);
  TW_ASSERT_OK_AND_ASSIGN(Tensor on_gpu, device->CopyFromHost(feed));
  for (int i = 0; i < kN; ++i) feed.data<float>()[i] = -1.0f;  // the copy must not see this
  const int64_t allocations = gpu::PinnedHostStats().driver_allocations;
  {
    TW_ASSERT_OK_AND_ASSIGN(Tensor fetched, device->CopyToHost(on_gpu));
    for (int i = 0; i < kN; i += 4099) ASSERT_EQ(fetched.data<float>()[i], i) << i;
    EXPECT_GE(gpu::PinnedHostStats().bytes_in_use, int64_t{kN} * 4);
  }
  TW_ASSERT_OK_AND_ASSIGN(Tensor again, device->CopyToHost(on_gpu));
  EXPECT_EQ(again.data<float>()[kN - 1], kN - 1);
  // The second fetch of the same size reused the first one's pinned block
  // (at most the first fetch went to the driver).
  EXPECT_LE(gpu::PinnedHostStats().driver_allocations, allocations + 1);
}

// A recorded step (StepCapture): a copy from a host slot, a kernel and a
// copy of a host plan, recorded once, replayed three times. The kernel runs
// only at each launch; the slot's copy reads the slot's bytes of that
// launch, the plan's those it had when it was recorded.
TEST(GpuDeviceTest, RecordsAndReplaysItsComputeStream) {
  if (gpu::CudaDeviceCount() == 0) GTEST_SKIP() << "no GPU on this machine";
  ThreadPool pool("test", 1);
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<gpu::GpuDevice> device, gpu::GpuDevice::Create(0, &pool));
  constexpr int kN = 256;
  StepCapture* capture = device->step_capture();
  ASSERT_NE(capture, nullptr);
  TW_ASSERT_OK_AND_ASSIGN(Tensor slot, capture->AllocateHostSlot(DT_FLOAT, TensorShape({kN})));
  TW_ASSERT_OK_AND_ASSIGN(Tensor plan, Tensor::Allocate(CpuAllocator(), DT_FLOAT, TensorShape({kN})));
  for (int i = 0; i < kN; ++i) plan.data<float>()[i] = 100.0f + i;
  TW_ASSERT_OK(capture->BeginCapture({slot}));
  EXPECT_TRUE(capture->capturing());
  TW_ASSERT_OK_AND_ASSIGN(Tensor x, Tensor::Allocate(device->allocator(), DT_FLOAT, TensorShape({kN})));
  TW_ASSERT_OK(device->CopyHostBytes(slot, &x));
  TW_ASSERT_OK(gpu::CudaStatus(gpu::testing::LaunchAddOne(x.data<float>(), kN, device->compute_stream()),
                               "AddOne", __FILE__, __LINE__));
  TW_ASSERT_OK_AND_ASSIGN(Tensor y, device->CopyFromHost(plan));  // staged for the recording
  for (int i = 0; i < kN; ++i) plan.data<float>()[i] = -1.0f;        // the recording keeps 100 + i
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<CapturedWork> work, capture->EndCapture());
  EXPECT_FALSE(capture->capturing());
  EXPECT_GE(work->num_operations(), 3);
  EXPECT_GT(work->reserved_bytes(), 0);
  for (int launch = 0; launch < 3; ++launch) {
    for (int i = 0; i < kN; ++i) slot.data<float>()[i] = static_cast<float>(launch * 1000 + i);
    TW_ASSERT_OK(work->Launch());
    TW_ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, capture->CopyAllToHost({x, y}));
    for (int i = 0; i < kN; i += 17) {
      ASSERT_EQ(out[0].data<float>()[i], launch * 1000 + i + 1.0f) << launch << " " << i;
      ASSERT_EQ(out[1].data<float>()[i], 100.0f + i) << launch << " " << i;
    }
  }
}

// While recording, a copy to the host would wait for the GPU: refused, and
// the recording ends with that error.
TEST(GpuDeviceTest, ACopyToTheHostBreaksARecording) {
  if (gpu::CudaDeviceCount() == 0) GTEST_SKIP() << "no GPU on this machine";
  ThreadPool pool("test", 1);
  TW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<gpu::GpuDevice> device, gpu::GpuDevice::Create(0, &pool));
  TW_ASSERT_OK_AND_ASSIGN(Tensor x, Tensor::Allocate(device->allocator(), DT_FLOAT, TensorShape({8})));
  TW_ASSERT_OK(device->BeginCapture({}));
  EXPECT_THAT(device->CopyToHost(x).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       "a copy to the host waits for /job:localhost/replica:0/task:0/device:GPU:0 "
                       "while its work is being recorded"));
  EXPECT_THAT(device->EndCapture().status(),
              StatusIs(absl::StatusCode::kFailedPrecondition, "a copy to the host waits"));
  // The device works as before.
  TW_EXPECT_OK(device->CopyToHost(x).status());
}

#endif  // TOWERFLOW_CUDA

}  // namespace
}  // namespace towerflow
