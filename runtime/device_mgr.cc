#include "runtime/device_mgr.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"

namespace towerflow {
namespace {

// The CPU device factory: N devices over the host allocator.
class CpuDeviceFactory final : public DeviceFactory {
 public:
  absl::StatusOr<std::vector<std::unique_ptr<Device>>> CreateDevices(
      int max_count, const std::string& task, ThreadPool* intra_op_pool) override {
    std::vector<std::unique_ptr<Device>> devices;
    const int n = max_count < 0 ? 1 : max_count;
    for (int i = 0; i < n; ++i) {
      devices.push_back(std::make_unique<Device>(DeviceName(task, kDeviceCpu, i), kDeviceCpu,
                                                 CpuAllocator(), intra_op_pool));
    }
    return devices;
  }
  int NumPresent() const override { return 1; }
};

[[maybe_unused]] const bool kCpuFactoryRegistered = [] {
  RegisterDeviceFactory(kDeviceCpu, std::make_unique<CpuDeviceFactory>());
  return true;
}();

// Every device's spec is fully specified; keep job/replica/task defaults so
// that "/cpu:1" (no job) matches.
bool Matches(const DeviceSpec& want, const Device& device) {
  return want.IsSpecificationOf(device.parsed_name());
}

}  // namespace

absl::StatusOr<std::unique_ptr<DeviceMgr>> DeviceMgr::Create(
    const std::map<std::string, int>& device_count, ThreadPool* intra_op_pool) {
  return Create(device_count, kLocalTask, intra_op_pool);
}

absl::StatusOr<std::unique_ptr<DeviceMgr>> DeviceMgr::Create(
    const std::map<std::string, int>& device_count, const std::string& task,
    ThreadPool* intra_op_pool) {
  for (const auto& [type, count] : device_count) {
    if (count < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("device_count[\"", type, "\"] = ", count, " is negative"));
    }
    if (count > kMaxDevicesPerType) {
      return absl::InvalidArgumentError(absl::StrCat("device_count[\"", type, "\"] = ", count,
                                                     " is more than the ", kMaxDevicesPerType,
                                                     " devices of one type a session makes"));
    }
    if (GetDeviceFactory(type) == nullptr && count > 0) {
      return absl::InvalidArgumentError(absl::StrCat("device_count names device type ", type,
                                                     ", which is not registered; known types: ",
                                                     absl::StrJoin(RegisteredDeviceTypes(), ", ")));
    }
  }
  auto cpu = device_count.find(kDeviceCpu);
  if (cpu != device_count.end() && cpu->second == 0) {
    return absl::InvalidArgumentError("device_count[\"CPU\"] must be at least 1");
  }
  std::vector<std::unique_ptr<Device>> owned;
  for (const std::string& type : RegisteredDeviceTypes()) {
    auto it = device_count.find(type);
    const int max_count = it == device_count.end() ? -1 : it->second;
    TW_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<Device>> made,
                        GetDeviceFactory(type)->CreateDevices(max_count, task, intra_op_pool));
    for (auto& d : made) owned.push_back(std::move(d));
  }
  return std::unique_ptr<DeviceMgr>(new DeviceMgr(std::move(owned), {}));
}

std::unique_ptr<DeviceMgr> DeviceMgr::Borrowing(std::vector<Device*> devices) {
  return std::unique_ptr<DeviceMgr>(new DeviceMgr({}, std::move(devices)));
}

DeviceMgr::DeviceMgr(std::vector<std::unique_ptr<Device>> owned, std::vector<Device*> borrowed)
    : owned_(std::move(owned)), devices_(std::move(borrowed)) {
  for (const auto& d : owned_) devices_.push_back(d.get());
  for (Device* d : devices_) {
    if (host_ == nullptr && d->device_type() == kDeviceCpu && d->parsed_name().id == 0) host_ = d;
  }
}

absl::StatusOr<Device*> DeviceMgr::Lookup(const std::string& name) const {
  absl::StatusOr<DeviceSpec> spec = DeviceSpec::Parse(name);
  if (spec.ok() && spec->type && spec->id) {
    std::vector<Device*> found = Matching(*spec);
    if (found.size() == 1) return found[0];
  }
  return absl::NotFoundError(absl::StrCat("Unknown device: ", name));
}

std::vector<Device*> DeviceMgr::Matching(const DeviceSpec& spec) const {
  std::vector<Device*> out;
  for (Device* d : devices_) {
    if (Matches(spec, *d)) out.push_back(d);
  }
  return out;
}

}  // namespace towerflow
