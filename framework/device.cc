#include "framework/device.h"

#include <algorithm>
#include <atomic>
#include <map>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "core/status_macros.h"

namespace towerflow {
namespace {

int64_t NextIncarnation() {
  // Distinct per device object and per process start.
  static std::atomic<int64_t> counter{absl::GetCurrentTimeNanos()};
  return counter.fetch_add(1, std::memory_order_relaxed);
}

struct FactoryRegistry {
  absl::Mutex mu;
  std::map<std::string, std::unique_ptr<DeviceFactory>> factories ABSL_GUARDED_BY(mu);
};

FactoryRegistry& Factories() {
  static FactoryRegistry* const registry = new FactoryRegistry();
  return *registry;
}

}  // namespace

int DeviceTypePriority(const std::string& device_type) {
  if (device_type == kDeviceGpu) return 200;
  if (device_type == kDeviceCpu) return 100;
  return 0;
}

Device::Device(std::string name, std::string device_type, Allocator* allocator,
               ThreadPool* intra_op_pool)
    : name_(std::move(name)),
      device_type_(std::move(device_type)),
      incarnation_(NextIncarnation()),
      allocator_(allocator),
      intra_op_pool_(intra_op_pool),
      resource_mgr_(std::make_unique<ResourceMgr>()) {
  absl::StatusOr<DeviceSpec> spec = DeviceSpec::Parse(name_);
  if (spec.ok()) parsed_name_ = *spec;  // factories make well-formed names
}

absl::StatusOr<Tensor> Device::CopyToHost(const Tensor&) {
  return absl::UnimplementedError(
      absl::StrCat("device ", name_, " has no memory of its own to copy from"));
}

absl::StatusOr<Tensor> Device::CopyFromHost(const Tensor&) {
  return absl::UnimplementedError(
      absl::StrCat("device ", name_, " has no memory of its own to copy to"));
}

absl::StatusOr<Tensor> Device::CopyToDevice(const Tensor&, Device* dst) {
  return absl::UnimplementedError(
      absl::StrCat("device ", name_, " cannot copy to device ", dst->name()));
}

absl::StatusOr<Tensor> TransferTensor(const Tensor& value, Device* src, bool src_on_host,
                                      Device* dst, bool dst_on_host) {
  src_on_host = src_on_host || src == nullptr || !src->has_device_memory();
  dst_on_host = dst_on_host || dst == nullptr || !dst->has_device_memory();
  if (src_on_host && dst_on_host) return value;
  if (src_on_host) return dst->CopyFromHost(value);
  if (dst_on_host) return src->CopyToHost(value);
  if (src == dst) return value;
  if (src->device_type() == dst->device_type()) return src->CopyToDevice(value, dst);
  TW_ASSIGN_OR_RETURN(Tensor host, src->CopyToHost(value));
  return dst->CopyFromHost(host);
}

std::string DeviceName(const std::string& task, const std::string& device_type, int index) {
  return absl::StrCat(task, "/device:", device_type, ":", index);
}

std::string LocalDeviceName(const std::string& device_type, int index) {
  return DeviceName(kLocalTask, device_type, index);
}

void RegisterDeviceFactory(const std::string& device_type, std::unique_ptr<DeviceFactory> factory) {
  FactoryRegistry& r = Factories();
  absl::MutexLock lock(&r.mu);
  r.factories[device_type] = std::move(factory);
}

std::vector<std::string> RegisteredDeviceTypes() {
  FactoryRegistry& r = Factories();
  absl::MutexLock lock(&r.mu);
  std::vector<std::string> types;
  for (const auto& [type, factory] : r.factories) types.push_back(type);
  std::stable_sort(types.begin(), types.end(), [](const std::string& a, const std::string& b) {
    return DeviceTypePriority(a) > DeviceTypePriority(b);
  });
  return types;
}

DeviceFactory* GetDeviceFactory(const std::string& device_type) {
  FactoryRegistry& r = Factories();
  absl::MutexLock lock(&r.mu);
  auto it = r.factories.find(device_type);
  return it == r.factories.end() ? nullptr : it->second.get();
}

int NumLocalDevices(const std::string& device_type) {
  DeviceFactory* factory = GetDeviceFactory(device_type);
  return factory == nullptr ? 0 : factory->NumPresent();
}

}  // namespace towerflow
