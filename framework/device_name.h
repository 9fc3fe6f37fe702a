// Device specifications: parsing, canonical form and TensorFlow's merge rule.
//
// Accepts every spelling TensorFlow does: "/job:ps/replica:0/task:1/device:GPU:0",
// partial specs ("/job:worker", "/device:CPU:*"), the legacy "/gpu:0",
// "/GPU:0", "/cpu:0", and Python's slash-free "GPU:1". The canonical form is
// "/job:ps/task:1/device:GPU:0" (only the fields that are set, CPU/GPU/TPU in
// upper case, "*" for an unset index).
//
//   absl::StatusOr<DeviceSpec> d = DeviceSpec::Parse("/gpu:1");
//   d->ToString();                        // "/device:GPU:1"
//   DeviceSpec outer = *DeviceSpec::Parse("/job:ps");
//   outer.MergeFrom(*d);                  // "/job:ps/device:GPU:1"
//
// Value type; thread-compatible.
#ifndef TOWERFLOW_FRAMEWORK_DEVICE_NAME_H_
#define TOWERFLOW_FRAMEWORK_DEVICE_NAME_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace towerflow {

struct DeviceSpec {
  std::optional<std::string> job;
  std::optional<int> replica;
  std::optional<int> task;
  std::optional<std::string> type;  // "CPU", "GPU", ...
  std::optional<int> id;            // unset: any device of `type`

  // InvalidArgument "Could not parse device specification '...'" with the
  // reason: an unknown component, a bad number, two device types.
  static absl::StatusOr<DeviceSpec> Parse(absl::string_view spec);

  // The canonical string; "" when nothing is set.
  std::string ToString() const;
  bool empty() const { return !job && !replica && !task && !type && !id; }

  // Python's DeviceSpec.merge_from: every field set in `other` replaces ours;
  // fields `other` leaves unset keep our value.
  void MergeFrom(const DeviceSpec& other);

  // True when every field set here is set to the same value in `other`.
  bool IsSpecificationOf(const DeviceSpec& other) const;

  bool operator==(const DeviceSpec& o) const {
    return job == o.job && replica == o.replica && task == o.task && type == o.type && id == o.id;
  }
  bool operator!=(const DeviceSpec& o) const { return !(*this == o); }
};

// Parse(spec)->ToString(); "" stays "".
absl::StatusOr<std::string> CanonicalDeviceName(absl::string_view spec);

}  // namespace towerflow

#endif  // TOWERFLOW_FRAMEWORK_DEVICE_NAME_H_
