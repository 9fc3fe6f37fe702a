// A device that works like a GPU, on the CPU: for testing replayed steps
// (runtime/step_replay.h) on machines without one.
//
// Devices of type "STREAM" keep tensors in memory of their own (host memory
// from a BlockCache, handed out in stream order as a GPU's caching
// allocator does) and run their kernels' arithmetic later: a kernel checks
// shapes and allocates on the host, then enqueues a closure on the device's
// stream, which runs only when the host waits for the device (a copy to the
// host, CopyAllToHost). A host read of a device value that forgot to wait
// reads stale memory, as on a GPU. The device records its stream
// (StepCapture) as CUDA does, and like CUDA refuses, while recording, a
// wait for the device or a host callback; allocations go to the
// recording's private pool.
//
// Its kernels, enough for a small network and its hand-written training
// step, all declared capturable unless said: MatMul, AddV2 (equal shapes or
// a row broadcast [m, n] + [n]), Sub, Mul, Square, Relu, ReluGrad, Sum
// (host-memory axes), Reshape (host-memory shape), Shape (host output, as a
// GPU's), int32 Sub in host memory (a GPU's shape arithmetic), Cast of int32
// (in host memory, copied to the device: a copied host input, as a GPU's
// int32 class labels), RandomUniform (its Philox
// counter in device memory, advanced by the enqueued work, so a replay
// draws new numbers: the CPU kernel's stream), ApplyGradientDescent, the
// variable kernels, the basic kernels, and two for refusals: Where (reads
// its input back: not capturable) and CheckNumerics (declared capturable,
// yet waits for the device: a kernel declared wrongly).
//
// Linking this library (alwayslink) registers the device type and the
// kernels. Thread-safe.
#ifndef TOWERFLOW_RUNTIME_TESTING_STREAM_DEVICE_H_
#define TOWERFLOW_RUNTIME_TESTING_STREAM_DEVICE_H_

#include <cstdint>

namespace towerflow {
namespace testing {

inline constexpr char kStreamDevice[] = "STREAM";

// What the STREAM devices of the process did since the last reset.
struct StreamDeviceCounts {
  int64_t closures_run = 0;      // enqueued work that ran
  int64_t waits = 0;             // the host waited for a device
  int64_t launches = 0;          // recordings launched
  int64_t backend_allocations = 0;  // memory taken from the host for device blocks
};
StreamDeviceCounts TakeStreamDeviceCounts();

}  // namespace testing
}  // namespace towerflow

#endif  // TOWERFLOW_RUNTIME_TESTING_STREAM_DEVICE_H_
