// DeviceMgr: the devices of one session.
//
// Made from SessionOptions::device_count: for every registered device type,
// device_count[type] devices (CPU defaults to 1; other types default to all
// that are present). CPU:0 is the host device, where feeds enter and fetches
// leave.
//
//   absl::StatusOr<std::unique_ptr<DeviceMgr>> mgr =
//       DeviceMgr::Create({{"CPU", 3}}, intra_op_pool);
//   absl::StatusOr<Device*> d = (*mgr)->Lookup("/cpu:2");
//
// Immutable after Create; thread-safe.
#ifndef TOWERFLOW_RUNTIME_DEVICE_MGR_H_
#define TOWERFLOW_RUNTIME_DEVICE_MGR_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/device.h"

namespace towerflow {

// The most devices of one type a session makes (a virtual CPU device each
// costs memory; a count from a flag or a file must not exhaust it).
inline constexpr int kMaxDevicesPerType = 1024;

class DeviceMgr {
 public:
  // InvalidArgument for a negative count, one above kMaxDevicesPerType or
  // CPU count 0; `intra_op_pool` is borrowed by the devices and must
  // outlive the DeviceMgr.
  static absl::StatusOr<std::unique_ptr<DeviceMgr>> Create(
      const std::map<std::string, int>& device_count, ThreadPool* intra_op_pool);
  // The same, the devices named as those of `task` ("/job:ps/replica:0/task:1").
  static absl::StatusOr<std::unique_ptr<DeviceMgr>> Create(
      const std::map<std::string, int>& device_count, const std::string& task,
      ThreadPool* intra_op_pool);
  // A view of devices owned elsewhere (a cluster's: this task's and the
  // stand-ins of other tasks' devices), which must outlive it. The host
  // device is the first CPU:0 among them.
  static std::unique_ptr<DeviceMgr> Borrowing(std::vector<Device*> devices);

  // Devices in a stable order: by type priority (GPU first), then index.
  const std::vector<Device*>& devices() const { return devices_; }
  // The CPU:0 device.
  Device* host_device() const { return host_; }

  // The device a full or short name denotes ("/cpu:1", "/device:CPU:1",
  // "/job:localhost/replica:0/task:0/device:CPU:1"); the spec must name a
  // type and an index. NotFound otherwise.
  absl::StatusOr<Device*> Lookup(const std::string& name) const;

  // Devices matching a (partial) spec, in devices() order.
  std::vector<Device*> Matching(const DeviceSpec& spec) const;

 private:
  DeviceMgr(std::vector<std::unique_ptr<Device>> owned, std::vector<Device*> borrowed);

  std::vector<std::unique_ptr<Device>> owned_;
  std::vector<Device*> devices_;
  Device* host_ = nullptr;
};

}  // namespace towerflow

#endif  // TOWERFLOW_RUNTIME_DEVICE_MGR_H_
