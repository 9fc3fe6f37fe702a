#include "framework/memory_types.h"

#include "core/status_macros.h"
#include "framework/kernel_registry.h"
#include "framework/node_def_util.h"

namespace towerflow {
namespace {

void Fill(const DataTypeVector& types, const NameRangeMap& ranges, const KernelDef& def,
          MemoryTypeVector* out) {
  if (out == nullptr) return;
  out->assign(types.size(), MemoryType::kHost);
  for (size_t i = 0; i < types.size(); ++i) {
    if (!AlwaysInHostMemory(types[i])) (*out)[i] = MemoryType::kDevice;
  }
  for (const std::string& arg : def.host_memory_args) {
    auto it = ranges.find(arg);
    if (it == ranges.end()) continue;
    for (int i = it->second.first; i < it->second.second; ++i) (*out)[i] = MemoryType::kHost;
  }
}

}  // namespace

// Variants too: a list's value is host bookkeeping (its elements keep their
// own placement), which no device copy may move as raw bytes.
bool AlwaysInHostMemory(DataType dtype) {
  const DataType base = BaseType(dtype);
  return base == DT_INT32 || base == DT_STRING || base == DT_RESOURCE || base == DT_VARIANT;
}

absl::Status MemoryTypesForNode(const Device& device, const NodeDef& node_def, const OpDef& op_def,
                                MemoryTypeVector* inputs, MemoryTypeVector* outputs) {
  DataTypeVector in_types, out_types;
  TW_RETURN_IF_ERROR(InOutTypesForNode(node_def, op_def, &in_types, &out_types));
  if (!device.has_device_memory()) {
    if (inputs != nullptr) inputs->assign(in_types.size(), MemoryType::kHost);
    if (outputs != nullptr) outputs->assign(out_types.size(), MemoryType::kHost);
    return absl::OkStatus();
  }
  TW_ASSIGN_OR_RETURN(const KernelDef* def, FindKernelDef(device.device_type(), node_def));
  NameRangeMap in_ranges, out_ranges;
  TW_RETURN_IF_ERROR(NameRangesForNode(node_def, op_def, &in_ranges, &out_ranges));
  Fill(in_types, in_ranges, *def, inputs);
  Fill(out_types, out_ranges, *def, outputs);
  return absl::OkStatus();
}

}  // namespace towerflow
