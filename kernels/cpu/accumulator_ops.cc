// TF's conditional gradient accumulators (resource forms), on the CPU:
// where the workers of between-graph replicated training meet on a ps task
// (train/sync_replicas_optimizer.h). Shared and waited on as
// kernels/cpu/resource_waits.h says.
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/resource_mgr.h"
#include "kernels/cpu/resource_waits.h"

namespace towerflow {
namespace {

// TF's ConditionalAccumulator: sums the gradients of its current time step
// (older ones are dropped), hands out their mean (or sum) once enough have
// come, and then moves to the next time step.
class Accumulator : public ResourceBase {
 public:
  Accumulator(DataType dtype, PartialTensorShape shape, bool mean, std::string name)
      : dtype_(dtype), shape_(std::move(shape)), mean_(mean), name_(std::move(name)) {}

  std::string DebugString() const override {
    return absl::StrCat("ConditionalAccumulator '", name_, "'");
  }

  absl::Status Apply(int64_t local_step, const Tensor& grad) {
    if (grad.dtype() != dtype_) {
      return absl::InvalidArgumentError(absl::StrCat(DebugString(), " holds ",
                                                     DataTypeString(dtype_), ", the gradient is ",
                                                     DataTypeString(grad.dtype())));
    }
    if (!shape_.IsCompatibleWith(PartialTensorShape(grad.shape()))) {
      return absl::InvalidArgumentError(absl::StrCat(DebugString(), " has shape ",
                                                     shape_.DebugString(), ", the gradient ",
                                                     grad.shape().DebugString()));
    }
    std::vector<std::function<void()>> to_run;
    {
      absl::MutexLock lock(&mu_);
      if (local_step < global_step_) return absl::OkStatus();  // stale: dropped, as in TF
      if (counter_ == 0) {
        TW_ASSIGN_OR_RETURN(sum_, grad.DeepCopy());
      } else {
        if (sum_.shape() != grad.shape()) {
          return absl::InvalidArgumentError(
              absl::StrCat(DebugString(), " holds gradients of shape ", sum_.shape().DebugString(),
                           ", the gradient is ", grad.shape().DebugString()));
        }
        TW_RETURN_IF_ERROR(AddInto(grad));
      }
      ++counter_;
      FlushLocked(&to_run);
    }
    for (auto& fn : to_run) fn();
    return absl::OkStatus();
  }

  void Take(int64_t id, int num_required, WaitDone<Tensor> done) {
    std::vector<std::function<void()>> to_run;
    {
      absl::MutexLock lock(&mu_);
      if (takes_.WasCancelled(id)) {
        to_run.push_back([done] { done(absl::CancelledError("take_grad cancelled"), Tensor()); });
      } else {
        takes_.Add(id, {num_required, std::move(done)});
        FlushLocked(&to_run);
      }
    }
    for (auto& fn : to_run) fn();
  }

  void Cancel(int64_t id, const absl::Status& status) {
    PendingTake take;
    bool got;
    {
      absl::MutexLock lock(&mu_);
      got = takes_.Take(id, &take);
    }
    if (got) take.done(status, Tensor());
  }

  void SetGlobalStep(int64_t step) {
    absl::MutexLock lock(&mu_);
    global_step_ = step;
  }

  int64_t NumAccumulated() {
    absl::MutexLock lock(&mu_);
    return counter_;
  }

 private:
  struct PendingTake {
    int num_required = 0;
    WaitDone<Tensor> done;
  };

  absl::Status AddInto(const Tensor& grad) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    switch (dtype_) {
      case DT_FLOAT:
        sum_.flat<float>() += grad.flat<float>();
        return absl::OkStatus();
      case DT_DOUBLE:
        sum_.flat<double>() += grad.flat<double>();
        return absl::OkStatus();
      default:
        return absl::UnimplementedError(absl::StrCat(DebugString(), ": gradients of ",
                                                     DataTypeString(dtype_),
                                                     " are not supported (float, double)"));
    }
  }

  void FlushLocked(std::vector<std::function<void()>>* to_run) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    while (!takes_.empty() && counter_ >= takes_.front().second.num_required) {
      Tensor out = std::move(sum_);
      if (mean_) {
        if (dtype_ == DT_FLOAT)
          out.flat<float>() = out.flat<float>() / static_cast<float>(counter_);
        if (dtype_ == DT_DOUBLE) {
          out.flat<double>() = out.flat<double>() / static_cast<double>(counter_);
        }
      }
      ++global_step_;  // TF: a take moves to the next time step
      counter_ = 0;
      sum_ = Tensor();
      to_run->push_back([done = std::move(takes_.front().second.done), out = std::move(out)] {
        done(absl::OkStatus(), out);
      });
      takes_.pop_front();
    }
  }

  const DataType dtype_;
  const PartialTensorShape shape_;
  const bool mean_;
  const std::string name_;
  absl::Mutex mu_;
  int64_t global_step_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t counter_ ABSL_GUARDED_BY(mu_) = 0;
  Tensor sum_ ABSL_GUARDED_BY(mu_);
  Waits<PendingTake> takes_ ABSL_GUARDED_BY(mu_);
};

class AccumulatorOp : public OpKernel {
 public:
  bool IsExpensive() const override { return false; }
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("dtype", &dtype_));
    TW_RETURN_IF_ERROR(c.GetAttr("shape", &shape_));
    std::string reduction;
    TW_RETURN_IF_ERROR(c.GetAttr("reduction_type", &reduction));
    mean_ = reduction == "MEAN";
    if (dtype_ != DT_FLOAT && dtype_ != DT_DOUBLE) {
      return absl::UnimplementedError(absl::StrCat(c.name(), ": accumulators of ",
                                                   DataTypeString(dtype_),
                                                   " are not supported (float, double)"));
    }
    TW_ASSIGN_OR_RETURN(handle_, MakeHandle(c, "ConditionalAccumulator"));
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    const ResourceHandle& h = *handle_.data<ResourceHandle>();
    TW_ASSIGN_OR_RETURN(
        std::shared_ptr<Accumulator> accumulator,
        ctx->resource_manager()->LookupOrCreate<Accumulator>(
            h.container, h.name, [&]() -> absl::StatusOr<std::shared_ptr<Accumulator>> {
              return std::make_shared<Accumulator>(dtype_, shape_, mean_, h.name);
            }));
    (void)accumulator;
    return ctx->set_output(0, handle_);
  }

 private:
  DataType dtype_ = DT_INVALID;
  PartialTensorShape shape_;
  bool mean_ = true;
  Tensor handle_;
};

class AccumulatorApplyOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::shared_ptr<Accumulator> accumulator,
                        LookupInput<Accumulator>(ctx, "accumulator"));
    TW_ASSIGN_OR_RETURN(const int64_t local_step, ScalarInput(ctx, 1, DT_INT64, "local_step"));
    return accumulator->Apply(local_step, ctx->input(2));
  }
};

class AccumulatorTakeOp : public AsyncOpKernel {
 public:
  void ComputeAsync(KernelContext* ctx, DoneCallback done) override {
    absl::StatusOr<std::shared_ptr<Accumulator>> accumulator =
        LookupInput<Accumulator>(ctx, "accumulator");
    if (!accumulator.ok()) return done(accumulator.status());
    absl::StatusOr<int64_t> num_required = ScalarInput(ctx, 1, DT_INT32, "num_required");
    if (!num_required.ok()) return done(num_required.status());
    if (*num_required <= 0) {
      return done(absl::InvalidArgumentError(
          absl::StrCat("Argument num_required must be positive, but was ", *num_required)));
    }
    std::shared_ptr<Accumulator> a = *accumulator;
    const int required = static_cast<int>(*num_required);
    StartCancellableWait(
        ctx, [a](int64_t id, const absl::Status& s) { a->Cancel(id, s); }, std::move(done),
        [a, ctx, required](int64_t id, DoneCallback done) {
          a->Take(id, required, [ctx, done](absl::Status s, Tensor average) {
            done(s.ok() ? ctx->set_output(0, std::move(average)) : s);
          });
        });
  }
};

class AccumulatorNumOp : public OpKernel {
 public:
  bool IsExpensive() const override { return false; }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::shared_ptr<Accumulator> accumulator,
                        LookupInput<Accumulator>(ctx, "accumulator"));
    Tensor n(DT_INT32, TensorShape());
    n.flat<int32_t>()(0) = static_cast<int32_t>(accumulator->NumAccumulated());
    return ctx->set_output(0, n);
  }
};

class AccumulatorSetGlobalStepOp : public OpKernel {
 public:
  bool IsExpensive() const override { return false; }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::shared_ptr<Accumulator> accumulator,
                        LookupInput<Accumulator>(ctx, "accumulator"));
    TW_ASSIGN_OR_RETURN(const int64_t step, ScalarInput(ctx, 1, DT_INT64, "new_global_step"));
    accumulator->SetGlobalStep(step);
    return absl::OkStatus();
  }
};

TW_REGISTER_KERNELS(accumulator_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterKernel(cpu("ResourceConditionalAccumulator"), MakeFactory<AccumulatorOp>());
  RegisterKernel(cpu("ResourceAccumulatorApplyGradient"), MakeFactory<AccumulatorApplyOp>());
  RegisterKernel(cpu("ResourceAccumulatorTakeGradient"), MakeFactory<AccumulatorTakeOp>());
  RegisterKernel(cpu("ResourceAccumulatorNumAccumulated"), MakeFactory<AccumulatorNumOp>());
  RegisterKernel(cpu("ResourceAccumulatorSetGlobalStep"),
                 MakeFactory<AccumulatorSetGlobalStepOp>());
}

}  // namespace
}  // namespace towerflow
