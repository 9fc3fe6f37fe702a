#include "graph/device_setter.h"

#include <algorithm>
#include <memory>
#include <set>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"

namespace towerflow {

const std::vector<std::string>& StandardPsOps() {
  static const auto* const kOps = new std::vector<std::string>{
      "Variable",
      "VariableV2",
      "AutoReloadVariable",
      "MutableHashTable",
      "MutableHashTableV2",
      "MutableHashTableOfTensors",
      "MutableHashTableOfTensorsV2",
      "MutableDenseHashTable",
      "MutableDenseHashTableV2",
      "VarHandleOp",
  };
  return *kOps;
}

PsStrategy RoundRobinStrategy(int num_tasks) {
  auto next = std::make_shared<int>(0);
  return [next, num_tasks](const Node&) -> absl::StatusOr<int> {
    const int task = *next;
    *next = (*next + 1) % num_tasks;
    return task;
  };
}

PsStrategy GreedyLoadBalancingStrategy(int num_tasks, LoadFn load_fn) {
  auto loads = std::make_shared<std::vector<int64_t>>(num_tasks, 0);
  return [loads, load_fn = std::move(load_fn)](const Node& op) -> absl::StatusOr<int> {
    const auto least = std::min_element(loads->begin(), loads->end());
    TW_ASSIGN_OR_RETURN(int64_t load, load_fn(op));
    *least += load;
    return static_cast<int>(least - loads->begin());
  };
}

absl::StatusOr<int64_t> ByteSizeLoadFn(const Node& op) {
  PartialTensorShape shape;
  DataType dtype;
  // Variable ops describe their value in attrs (a VarHandleOp's output is
  // only a handle).
  if (op.FindAttr("shape") != nullptr && op.FindAttr("dtype") != nullptr) {
    TW_RETURN_IF_ERROR(op.GetAttr("shape", &shape));
    TW_RETURN_IF_ERROR(op.GetAttr("dtype", &dtype));
  } else {
    if (op.num_outputs() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("Op ", op.name(), " must have a single output, it has ", op.num_outputs()));
    }
    shape = op.output_shape(0);
    dtype = BaseType(op.output_type(0));
  }
  const int64_t n = shape.num_elements();
  if (n < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Shape ", shape.DebugString(), " of op ", op.name(), " is not fully defined"));
  }
  const int64_t bytes = MultiplyWithoutOverflow(n, DataTypeSize(dtype));
  if (bytes < 0) return absl::InvalidArgumentError("Variable size overflows int64");
  return bytes;
}

absl::StatusOr<DeviceFunction> ReplicaDeviceSetter(const ReplicaDeviceSetterOptions& options) {
  TW_ASSIGN_OR_RETURN(const DeviceSpec ps_spec, DeviceSpec::Parse(options.ps_device));
  TW_ASSIGN_OR_RETURN(const DeviceSpec worker_spec, DeviceSpec::Parse(options.worker_device));
  int ps_tasks = options.ps_tasks;
  if (options.cluster.has_value()) {
    const auto it = options.cluster->find(ps_spec.job.value_or(""));
    ps_tasks = it == options.cluster->end() ? 0 : static_cast<int>(it->second.size());
  }
  if (ps_tasks < 0) {
    return absl::InvalidArgumentError(absl::StrCat("ps_tasks must be >= 0, got ", ps_tasks));
  }
  if (ps_tasks == 0) {
    return DeviceFunction(
        [](const Node& node) -> absl::StatusOr<std::string> { return node.requested_device(); });
  }
  const std::vector<std::string>& op_list =
      options.ps_ops.empty() ? StandardPsOps() : options.ps_ops;
  const std::set<std::string> ps_ops(op_list.begin(), op_list.end());
  PsStrategy strategy = options.ps_strategy ? options.ps_strategy : RoundRobinStrategy(ps_tasks);
  const bool use_ps = !options.ps_device.empty();
  const bool merge = options.merge_devices;
  return DeviceFunction([=](const Node& node) -> absl::StatusOr<std::string> {
    if (!merge && !node.requested_device().empty()) return node.requested_device();
    TW_ASSIGN_OR_RETURN(const DeviceSpec current, DeviceSpec::Parse(node.requested_device()));
    if (use_ps && ps_ops.count(node.type_string()) > 0) {
      DeviceSpec ps = ps_spec;
      // The task is only chosen when the node's job (if any) is the ps job.
      if (ps.job && (!current.job || current.job == ps.job)) {
        TW_ASSIGN_OR_RETURN(int task, strategy(node));
        ps.task = task;
      }
      ps.MergeFrom(current);
      return ps.ToString();
    }
    DeviceSpec worker = worker_spec;
    worker.MergeFrom(current);
    return worker.ToString();
  });
}

DeviceFunction LocalDeviceSetter(const std::string& worker_device,
                                 const std::vector<std::string>& ps_devices,
                                 PsStrategy ps_strategy) {
  // The device strings are parsed once; an error is every node's.
  absl::StatusOr<DeviceSpec> worker = DeviceSpec::Parse(worker_device);
  absl::Status parsed = worker.status();
  std::vector<DeviceSpec> ps;
  for (const std::string& d : ps_devices) {
    absl::StatusOr<DeviceSpec> spec = DeviceSpec::Parse(d);
    if (spec.ok()) {
      ps.push_back(*spec);
    } else {
      parsed = spec.status();
    }
  }
  if (!ps_strategy && !ps.empty()) ps_strategy = RoundRobinStrategy(static_cast<int>(ps.size()));
  return [parsed, worker, ps = std::move(ps),
          strategy = std::move(ps_strategy)](const Node& node) -> absl::StatusOr<std::string> {
    TW_RETURN_IF_ERROR(parsed);
    DeviceSpec spec = *worker;
    if (!ps.empty() &&
        (node.IsOp("VarHandleOp") || node.IsOp("VariableV2") || node.IsOp("Variable"))) {
      TW_ASSIGN_OR_RETURN(const int i, strategy(node));
      if (i < 0 || i >= static_cast<int>(ps.size())) {
        return absl::InvalidArgumentError(absl::StrCat("The ps strategy chose device ", i, " of ",
                                                       ps.size(), " for ", node.name()));
      }
      spec = ps[i];
    }
    TW_ASSIGN_OR_RETURN(const DeviceSpec inner, DeviceSpec::Parse(node.requested_device()));
    spec.MergeFrom(inner);
    return spec.ToString();
  };
}

}  // namespace towerflow
