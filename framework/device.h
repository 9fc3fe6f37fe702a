// Device: where kernels run — its name, memory, resources and thread pools.
//
// A session owns its devices through a DeviceMgr. CPU devices are
// "/job:localhost/replica:0/task:0/device:CPU:i"; SessionOptions::
// device_count["CPU"] = N makes N virtual CPU devices that share the host
// allocator and the session's thread pools but each keep their own
// ResourceMgr, so towers, placement and Send/Recv behave as with N GPUs.
// GPU devices ("GPU") register through a DeviceFactory when CUDA is built in
// and a GPU is present (the CUDA backend); without one there are none.
//
// Thread-safe: the accessors are const and the ResourceMgr is thread-safe.
#ifndef TOWERFLOW_FRAMEWORK_DEVICE_H_
#define TOWERFLOW_FRAMEWORK_DEVICE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/allocator.h"
#include "framework/device_name.h"
#include "framework/resource_mgr.h"
#include "framework/step_capture.h"
#include "framework/tensor.h"
#include "framework/threadpool.h"

namespace towerflow {

inline constexpr char kDeviceCpu[] = "CPU";
inline constexpr char kDeviceGpu[] = "GPU";

// Placement prefers device types with a higher priority (GPU over CPU, as
// TensorFlow does).
int DeviceTypePriority(const std::string& device_type);

class Device {
 public:
  // `intra_op_pool` and `allocator` are borrowed and must outlive the device.
  Device(std::string name, std::string device_type, Allocator* allocator,
         ThreadPool* intra_op_pool);
  virtual ~Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  // The full name, "/job:localhost/replica:0/task:0/device:CPU:0".
  const std::string& name() const { return name_; }
  const DeviceSpec& parsed_name() const { return parsed_name_; }
  const std::string& device_type() const { return device_type_; }
  // Changes every time a device object is made, so Send/Recv keys of one
  // session never match another's.
  int64_t incarnation() const { return incarnation_; }

  Allocator* allocator() const { return allocator_; }
  // What the device's kernels may allocate (KernelContext checks); the
  // session sets them from its options.
  const MemoryLimits& memory_limits() const { return memory_limits_; }
  void set_memory_limits(const MemoryLimits& limits) { memory_limits_ = limits; }
  ThreadPool* intra_op_pool() const { return intra_op_pool_; }
  ResourceMgr* resource_manager() const { return resource_mgr_.get(); }

  // Devices with memory of their own (GPUs) keep tensors where the host
  // cannot read them; their kernels name the arguments that stay on the host
  // (kernels/memory_types.h), and values cross between the two only through
  // the copies below, which _Send/_Recv, _Arg and _Retval make. CPU devices
  // have none: every tensor is in host memory and the copies are
  // Unimplemented.
  virtual bool has_device_memory() const { return false; }
  // Whether this device's kernels only queue work for the device (a GPU's
  // stream) and return. The executor then runs them inline on the thread
  // that made them ready instead of handing each to the inter-op pool, as
  // TF's executor treats GPU kernels (Note [Executor scheduling] in
  // runtime/executor.cc).
  virtual bool kernels_only_enqueue() const { return false; }
  // A host copy of `device_tensor` (in this device's memory), complete when
  // it returns.
  virtual absl::StatusOr<Tensor> CopyToHost(const Tensor& device_tensor);
  // A copy of `host_tensor` in this device's memory, ordered before every
  // kernel this device runs after the call.
  virtual absl::StatusOr<Tensor> CopyFromHost(const Tensor& host_tensor);
  // A copy of `device_tensor` (in this device's memory) in the memory of
  // `dst`, another device of the same type, ordered before dst's later
  // kernels.
  virtual absl::StatusOr<Tensor> CopyToDevice(const Tensor& device_tensor, Device* dst);

  // How this device records a step's work and replays it
  // (framework/step_capture.h), or null when it cannot (CPU devices: their
  // kernels do the work while they run).
  virtual StepCapture* step_capture() { return nullptr; }

 private:
  const std::string name_;
  DeviceSpec parsed_name_;
  const std::string device_type_;
  const int64_t incarnation_;
  Allocator* const allocator_;
  MemoryLimits memory_limits_ = MemoryLimits::Default();
  ThreadPool* const intra_op_pool_;
  const std::unique_ptr<ResourceMgr> resource_mgr_;
};

// Makes the devices of one type. Factories are registered once per process
// (RegisterDeviceFactory), the CPU one by the runtime itself.
class DeviceFactory {
 public:
  virtual ~DeviceFactory() = default;
  // Up to `max_count` devices (all present ones when max_count < 0), named
  // DeviceName(task, <TYPE>, i): "/job:localhost/replica:0/task:0/device:CPU:0"
  // in a process of its own, "/job:ps/replica:0/task:1/device:CPU:0" as a
  // task of a cluster (distribute/server.h).
  virtual absl::StatusOr<std::vector<std::unique_ptr<Device>>> CreateDevices(
      int max_count, const std::string& task, ThreadPool* intra_op_pool) = 0;
  // How many devices of this type the machine has (CreateDevices(-1)'s
  // count), without creating them.
  virtual int NumPresent() const = 0;
};

// REQUIRES: one factory per device type; called from static initialisers.
void RegisterDeviceFactory(const std::string& device_type, std::unique_ptr<DeviceFactory> factory);
// Registered device types, highest priority first.
std::vector<std::string> RegisteredDeviceTypes();
DeviceFactory* GetDeviceFactory(const std::string& device_type);
// Devices of `device_type` present on this machine; 0 when the type has no
// factory (a GPU in a CPU-only build).
int NumLocalDevices(const std::string& device_type);

// The task of a process that is no cluster's: "/job:localhost/replica:0/task:0".
inline constexpr char kLocalTask[] = "/job:localhost/replica:0/task:0";

// "<task>/device:<device_type>:<index>", e.g. "/job:ps/replica:0/task:1/device:CPU:0".
std::string DeviceName(const std::string& task, const std::string& device_type, int index);
// DeviceName(kLocalTask, ...): "/job:localhost/replica:0/task:0/device:CPU:3".
std::string LocalDeviceName(const std::string& device_type, int index);

// Moves `value` from `src` (in host memory when `src_on_host`) to `dst` (to
// host memory when `dst_on_host`); a null device is the host. The value
// itself when both ends are host memory or the same device's memory, else
// the devices' copies, through the host between unrelated device types.
absl::StatusOr<Tensor> TransferTensor(const Tensor& value, Device* src, bool src_on_host,
                                      Device* dst, bool dst_on_host);

}  // namespace towerflow

#endif  // TOWERFLOW_FRAMEWORK_DEVICE_H_
