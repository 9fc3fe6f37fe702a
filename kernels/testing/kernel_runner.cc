#include "kernels/testing/kernel_runner.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "core/status_macros.h"
#include "framework/device.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/node_def_util.h"
#include "framework/resource_mgr.h"
#include "framework/threadpool.h"
#include "graph/op_registry.h"

namespace towerflow {
namespace {

// A number attr counts at most this many inputs here (more than any case
// gives; the attr itself is left as set).
constexpr int64_t kMaxInputs = int64_t{1} << 20;

bool HasAttr(const NodeDef& def, const std::string& name) { return def.attr().count(name) > 0; }

// Number of inputs the args other than `skip` take, where known.
int FixedInputs(const OpDef& op_def, const NodeDef& def, int skip) {
  int n = 0;
  for (int i = 0; i < op_def.input_arg_size(); ++i) {
    if (i == skip) continue;
    const OpDef::ArgDef& arg = op_def.input_arg(i);
    if (!arg.number_attr().empty()) {
      // Bad-input cases set N to anything (2^31 - 1, -1): clamped, as the
      // count only picks inputs among those given.
      if (HasAttr(def, arg.number_attr())) {
        n += std::clamp<int64_t>(def.attr().at(arg.number_attr()).i(), 0, kMaxInputs);
      }
    } else if (!arg.type_list_attr().empty()) {
      if (HasAttr(def, arg.type_list_attr())) {
        n += def.attr().at(arg.type_list_attr()).list().type_size();
      }
    } else {
      ++n;
    }
  }
  return n;
}

// Fills type, number and type-list attrs the caller left unset from the
// inputs given.
void InferAttrs(const OpDef& op_def, const std::vector<Tensor>& inputs, NodeDef* def) {
  int next = 0;
  const int total = static_cast<int>(inputs.size());
  for (int i = 0; i < op_def.input_arg_size(); ++i) {
    const OpDef::ArgDef& arg = op_def.input_arg(i);
    int count = 1;
    if (!arg.number_attr().empty()) {
      if (!HasAttr(*def, arg.number_attr())) {
        SetAttrValue(static_cast<int64_t>(std::max(0, total - FixedInputs(op_def, *def, i))),
                     &(*def->mutable_attr())[arg.number_attr()]);
      }
      count = static_cast<int>(
          std::clamp<int64_t>(def->attr().at(arg.number_attr()).i(), 0, kMaxInputs));
    } else if (!arg.type_list_attr().empty()) {
      if (!HasAttr(*def, arg.type_list_attr())) {
        DataTypeVector types;
        const int n = std::max(0, total - FixedInputs(op_def, *def, i));
        for (int k = next; k < next + n && k < total; ++k) types.push_back(inputs[k].dtype());
        SetAttrValue(types, &(*def->mutable_attr())[arg.type_list_attr()]);
      }
      count = def->attr().at(arg.type_list_attr()).list().type_size();
    }
    if (!arg.type_attr().empty() && !HasAttr(*def, arg.type_attr()) && next < total && count > 0) {
      SetAttrValue(inputs[next].dtype(), &(*def->mutable_attr())[arg.type_attr()]);
    }
    next = std::min(total, next + count);
  }
}

}  // namespace

namespace {

// The host allocator with a cap, so a bad-input case that asks for a legal
// but huge tensor fails fast with ResourceExhausted instead of paging.
class CappedAllocator final : public Allocator {
 public:
  std::string Name() const override { return "cpu_test_capped"; }
  void* AllocateRaw(size_t alignment, size_t num_bytes) override {
    if (num_bytes > kKernelTestAllocationCap) return nullptr;
    return CpuAllocator()->AllocateRaw(alignment, num_bytes);
  }
  void DeallocateRaw(void* ptr) override { CpuAllocator()->DeallocateRaw(ptr); }
};

}  // namespace

Device* TestCpuDevice() {
  static ThreadPool* pool = new ThreadPool("kernel_test", 2);
  static Allocator* allocator = new CappedAllocator;
  static Device* device = new Device(LocalDeviceName(kDeviceCpu, 0), kDeviceCpu, allocator, pool);
  return device;
}

KernelRunner::KernelRunner(std::string op, std::string name) {
  def_.set_op(std::move(op));
  def_.set_name(std::move(name));
}

KernelRunner::~KernelRunner() = default;

absl::StatusOr<NodeDef> KernelRunner::CompleteNodeDef(const std::vector<Tensor>& inputs) const {
  TW_ASSIGN_OR_RETURN(const OpRegistrationData* reg, OpRegistry::Global()->LookUp(def_.op()));
  NodeDef def = def_;
  InferAttrs(reg->op_def, inputs, &def);
  AddDefaultsToNodeDef(reg->op_def, &def);
  TW_RETURN_IF_ERROR(ValidateNodeDefAttrs(def, reg->op_def));
  return def;
}

absl::StatusOr<std::vector<Tensor>> KernelRunner::Run(const std::vector<Tensor>& inputs) {
  DataTypeVector given;
  for (const Tensor& t : inputs) given.push_back(t.dtype());
  Device* device = TestCpuDevice();
  if (kernel_ == nullptr || given != kernel_types_) {
    kernel_.reset();
    TW_ASSIGN_OR_RETURN(kernel_def_, CompleteNodeDef(inputs));
    const OpDef& op_def = OpRegistry::Global()->Find(def_.op())->op_def;
    input_types_.clear();
    output_types_.clear();
    TW_RETURN_IF_ERROR(InOutTypesForNode(kernel_def_, op_def, &input_types_, &output_types_));
    if (input_types_.size() != inputs.size()) {
      return absl::InvalidArgumentError(absl::StrCat(def_.op(), " takes ", input_types_.size(),
                                                     " inputs, given ", inputs.size()));
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (BaseType(input_types_[i]) != inputs[i].dtype()) {
        return absl::InvalidArgumentError(absl::StrCat("input ", i, " should be ",
                                                       DataTypeString(input_types_[i]), " but is ",
                                                       DataTypeString(inputs[i].dtype())));
      }
    }
    TW_ASSIGN_OR_RETURN(kernel_, CreateKernel(device, device->device_type(), kernel_def_, op_def));
    kernel_types_ = given;
  }
  OpKernel* kernel = kernel_.get();
  const NodeDef& def = kernel_def_;
  const DataTypeVector& input_types = input_types_;
  const DataTypeVector& output_types = output_types_;

  std::vector<std::shared_ptr<Var>> vars;
  std::vector<Tensor> values(inputs.begin(), inputs.end());
  std::vector<KernelInput> kernel_inputs(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (IsRefType(input_types[i])) {
      auto var = std::make_shared<Var>(inputs[i].dtype(), absl::StrCat("var", i));
      absl::MutexLock lock(&var->mu);
      var->tensor = inputs[i];
      var->initialized = true;
      kernel_inputs[i].ref = var.get();
      vars.push_back(std::move(var));
    } else {
      kernel_inputs[i].tensor = &values[i];
    }
  }

  KernelContext::Params params;
  params.def = &def;
  params.device = device;
  params.output_types = &output_types;
  params.inputs = kernel_inputs;
  KernelContext ctx(params);
  absl::Status status;
  if (kernel->IsAsync()) {
    absl::Notification done;
    kernel->ComputeAsync(&ctx, [&](absl::Status s) {
      status = std::move(s);
      done.Notify();
    });
    done.WaitForNotification();
  } else {
    status = kernel->Compute(&ctx);
  }
  TW_RETURN_IF_ERROR(status);

  std::vector<Tensor> outputs;
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    KernelOutput& out = ctx.outputs()[i];
    if (!out.set) return absl::InternalError(absl::StrCat("output ", i, " was not set"));
    if (out.ref != nullptr) {
      absl::ReaderMutexLock lock(&out.ref->mu);
      outputs.push_back(out.ref->tensor);
    } else {
      if (out.tensor.dtype() != BaseType(output_types[i])) {
        return absl::InternalError(
            absl::StrCat("output ", i, " has dtype ", DataTypeString(out.tensor.dtype())));
      }
      outputs.push_back(out.tensor);
    }
  }
  return outputs;
}

Tensor ResourceVariable(const std::string& name, const Tensor& value) {
  Device* device = TestCpuDevice();
  auto var = device->resource_manager()->LookupOrCreate<Var>(
      "localhost", name, [&] { return std::make_shared<Var>(value.dtype(), name); });
  auto copy = value.DeepCopy();
  if (!var.ok() || !copy.ok()) return Tensor();  // an invalid handle fails the test's run
  {
    absl::MutexLock lock(&(*var)->mu);
    (*var)->tensor = *std::move(copy);
    (*var)->initialized = true;
  }
  Tensor handle(DT_RESOURCE, TensorShape());
  *handle.data<ResourceHandle>() = ResourceHandle{device->name(), "localhost", name, "Var"};
  return handle;
}

Tensor ReadVariable(const std::string& name) {
  auto var = TestCpuDevice()->resource_manager()->Lookup<Var>("localhost", name);
  if (!var.ok()) return Tensor();
  absl::ReaderMutexLock lock(&(*var)->mu);
  return (*var)->tensor;
}

}  // namespace towerflow
