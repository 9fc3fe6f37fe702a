// The stack kernels (TF's StackV2, StackPushV2, StackPopV2, StackCloseV2),
// on every device type. The gradient of a while loop keeps each forward
// iteration's values on stacks and pops them in the backward loop
// (ops/while_gradients.h).
//
// Each run of StackV2 makes a new stack: a `Stack` resource in the
// device's ResourceMgr, in the step's container (StepContainerName), so the
// session drops every stack when the step ends. The handle is a host
// scalar; the elements stay where their producers put them (device memory on
// a GPU), and a push or pop only moves the reference.
#include <atomic>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "core/status_macros.h"
#include "framework/device.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/resource_handle.h"
#include "framework/resource_mgr.h"
#include "kernels/basic_ops.h"
#include "kernels/variable_util.h"

namespace towerflow {
namespace {

class Stack : public ResourceBase {
 public:
  Stack(DataType elem_type, std::string name, int max_size)
      : elem_type_(elem_type), name_(std::move(name)), max_size_(max_size) {}

  std::string DebugString() const override {
    return absl::StrCat("Stack<", DataTypeString(elem_type_), " ", name_, ">");
  }

  absl::Status Push(const Tensor& value) {
    if (BaseType(value.dtype()) != elem_type_) {
      return absl::InvalidArgumentError(absl::StrCat("Stack[", name_, "] holds ",
                                                     DataTypeString(elem_type_), ", not ",
                                                     DataTypeString(value.dtype())));
    }
    absl::MutexLock lock(&mu_);
    TW_RETURN_IF_ERROR(CheckOpen());
    if (max_size_ >= 0 && static_cast<int64_t>(values_.size()) >= max_size_) {
      return absl::InvalidArgumentError(
          absl::StrCat("Stack[", name_, "] overflowed its max_size (", max_size_, ")"));
    }
    values_.push_back(value);
    return absl::OkStatus();
  }

  absl::StatusOr<Tensor> Pop(DataType want) {
    if (want != elem_type_) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Stack[", name_, "] holds ", DataTypeString(elem_type_), ", not ", DataTypeString(want)));
    }
    absl::MutexLock lock(&mu_);
    TW_RETURN_IF_ERROR(CheckOpen());
    if (values_.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("Stack[", name_, "] is empty."));
    }
    Tensor out = std::move(values_.back());
    values_.pop_back();
    return out;
  }

  void Close() {
    absl::MutexLock lock(&mu_);
    closed_ = true;
    values_.clear();
  }

 private:
  absl::Status CheckOpen() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (closed_) {
      return absl::InvalidArgumentError(
          absl::StrCat("Stack[", name_, "] has already been closed."));
    }
    return absl::OkStatus();
  }

  const DataType elem_type_;
  const std::string name_;
  const int max_size_;  // negative: no limit
  absl::Mutex mu_;
  std::vector<Tensor> values_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

absl::StatusOr<std::shared_ptr<Stack>> LookupStack(KernelContext* ctx) {
  TW_ASSIGN_OR_RETURN(const ResourceHandle* h, ResourceHandleInput(ctx, 0));
  return ctx->resource_manager()->Lookup<Stack>(h->container, h->name);
}

class StackOp : public OpKernel {
 public:
  bool IsExpensive() const override { return false; }
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("elem_type", &elem_type_));
    TW_RETURN_IF_ERROR(c.GetAttr("stack_name", &stack_name_));
    if (stack_name_.empty()) stack_name_ = c.name();
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& max_size = ctx->input(0);
    if (max_size.dtype() != DT_INT32 || max_size.NumElements() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(ctx->name(), ": max_size must be one int32, not a tensor of shape ",
                       max_size.shape().DebugString()));
    }
    // A stack per run: the same node runs once per iteration of an
    // enclosing loop, and each run's stack is its own. The resource's name
    // is unique in the process (two nodes may share a stack_name).
    ResourceHandle h;
    h.device = ctx->device()->name();
    h.container = StepContainerName(ctx->step_id());
    h.name = absl::StrCat(stack_name_, "_", next_id.fetch_add(1, std::memory_order_relaxed));
    h.type_name = "Stack";
    const int size = *max_size.data<int32_t>();
    const std::string name = h.name;
    TW_RETURN_IF_ERROR(ctx->resource_manager()
                           ->LookupOrCreate<Stack>(h.container, h.name,
                                                   [&]() -> absl::StatusOr<std::shared_ptr<Stack>> {
                                                     return std::make_shared<Stack>(elem_type_,
                                                                                    name, size);
                                                   })
                           .status());
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
    *out->data<ResourceHandle>() = std::move(h);
    return absl::OkStatus();
  }

 private:
  static std::atomic<int64_t> next_id;

  DataType elem_type_ = DT_INVALID;
  std::string stack_name_;
};

std::atomic<int64_t> StackOp::next_id{0};

class StackPushOp : public OpKernel {
 public:
  bool IsExpensive() const override { return false; }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::shared_ptr<Stack> stack, LookupStack(ctx));
    TW_RETURN_IF_ERROR(stack->Push(ctx->input(1)));
    return ctx->set_output(0, ctx->input(1));
  }
};

class StackPopOp : public OpKernel {
 public:
  bool IsExpensive() const override { return false; }
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("elem_type", &elem_type_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::shared_ptr<Stack> stack, LookupStack(ctx));
    TW_ASSIGN_OR_RETURN(Tensor value, stack->Pop(elem_type_));
    return ctx->set_output(0, std::move(value));
  }

 private:
  DataType elem_type_ = DT_INVALID;
};

class StackCloseOp : public OpKernel {
 public:
  bool IsExpensive() const override { return false; }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::shared_ptr<Stack> stack, LookupStack(ctx));
    stack->Close();
    return absl::OkStatus();
  }
};

}  // namespace

void RegisterStackKernels(const std::string& device_type) {
  const auto on = [&](const char* op) { return KernelDefBuilder(op).Device(device_type); };
  RegisterKernel(on("StackV2").HostMemory("max_size").HostMemory("handle"), MakeFactory<StackOp>());
  RegisterKernel(on("StackPushV2").HostMemory("handle"), MakeFactory<StackPushOp>());
  RegisterKernel(on("StackPopV2").HostMemory("handle"), MakeFactory<StackPopOp>());
  RegisterKernel(on("StackCloseV2").HostMemory("handle"), MakeFactory<StackCloseOp>());
}

}  // namespace towerflow
