#include "framework/device_name.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace towerflow {
namespace {

bool IsJobName(absl::string_view s) {
  if (s.empty() || !absl::ascii_isalpha(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

bool IsDeviceType(absl::string_view s) { return IsJobName(s); }

// CPU/GPU/TPU in any case become upper case; other types stay as written.
std::string CanonicalType(absl::string_view type) {
  const std::string upper = absl::AsciiStrToUpper(type);
  if (upper == "CPU" || upper == "GPU" || upper == "TPU") return upper;
  return std::string(type);
}

bool IsLegacyType(absl::string_view s) {
  const std::string upper = absl::AsciiStrToUpper(s);
  return upper == "CPU" || upper == "GPU" || upper == "TPU";
}

// Parses a non-negative index, or "*" (unset).
bool ParseIndex(absl::string_view s, std::optional<int>* out) {
  if (s == "*") {
    out->reset();
    return true;
  }
  int v;
  if (s.empty() || !absl::ascii_isdigit(static_cast<unsigned char>(s[0])) ||
      !absl::SimpleAtoi(s, &v) || v < 0) {
    return false;
  }
  *out = v;
  return true;
}

}  // namespace

absl::StatusOr<DeviceSpec> DeviceSpec::Parse(absl::string_view spec) {
  DeviceSpec d;
  const auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("Could not parse device specification '", spec, "': ", why));
  };
  for (absl::string_view part : absl::StrSplit(spec, '/')) {
    if (part.empty()) continue;
    std::vector<absl::string_view> y = absl::StrSplit(part, ':');
    const std::string key = absl::AsciiStrToLower(y[0]);
    if (y.size() == 2 && key == "job") {
      if (y[1] == "*") continue;
      if (!IsJobName(y[1])) return bad(absl::StrCat("bad job name '", y[1], "'"));
      d.job = std::string(y[1]);
    } else if (y.size() == 2 && key == "replica") {
      if (!ParseIndex(y[1], &d.replica)) return bad(absl::StrCat("bad replica '", y[1], "'"));
    } else if (y.size() == 2 && key == "task") {
      if (!ParseIndex(y[1], &d.task)) return bad(absl::StrCat("bad task '", y[1], "'"));
    } else if (y.size() == 3 && key == "device") {
      if (d.type) return bad("it names two device types");
      if (y[1] != "*") {
        if (!IsDeviceType(y[1])) return bad(absl::StrCat("bad device type '", y[1], "'"));
        d.type = CanonicalType(y[1]);
      }
      if (!ParseIndex(y[2], &d.id)) return bad(absl::StrCat("bad device index '", y[2], "'"));
    } else if (y.size() == 2 && key == "device") {
      if (d.type) return bad("it names two device types");
      if (y[1] == "*") continue;
      if (!IsDeviceType(y[1])) return bad(absl::StrCat("bad device type '", y[1], "'"));
      d.type = CanonicalType(y[1]);
    } else if ((y.size() == 1 || y.size() == 2) && IsLegacyType(y[0])) {
      if (d.type) return bad("it names two device types");
      d.type = CanonicalType(y[0]);
      if (y.size() == 2 && !ParseIndex(y[1], &d.id)) {
        return bad(absl::StrCat("bad device index '", y[1], "'"));
      }
    } else {
      return bad(absl::StrCat("unknown component '", part, "'"));
    }
  }
  return d;
}

std::string DeviceSpec::ToString() const {
  std::string out;
  if (job) absl::StrAppend(&out, "/job:", *job);
  if (replica) absl::StrAppend(&out, "/replica:", *replica);
  if (task) absl::StrAppend(&out, "/task:", *task);
  if (type) {
    absl::StrAppend(&out, "/device:", *type, ":", id ? absl::StrCat(*id) : "*");
  } else if (id) {
    absl::StrAppend(&out, "/device:*:", *id);
  }
  return out;
}

void DeviceSpec::MergeFrom(const DeviceSpec& other) {
  if (other.job) job = other.job;
  if (other.replica) replica = other.replica;
  if (other.task) task = other.task;
  if (other.type) type = other.type;
  if (other.id) id = other.id;
}

bool DeviceSpec::IsSpecificationOf(const DeviceSpec& other) const {
  return (!job || job == other.job) && (!replica || replica == other.replica) &&
         (!task || task == other.task) && (!type || type == other.type) && (!id || id == other.id);
}

absl::StatusOr<std::string> CanonicalDeviceName(absl::string_view spec) {
  absl::StatusOr<DeviceSpec> d = DeviceSpec::Parse(spec);
  if (!d.ok()) return d.status();
  return d->ToString();
}

}  // namespace towerflow
