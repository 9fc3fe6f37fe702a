// OpKernel: the code that runs one node on one device.
//
// A kernel object is made once per node of an executor (KernelRegistry::
// CreateKernel), Init()ialised from the node's attrs, then Compute()d once
// per step — possibly by several steps at once, so Compute keeps no per-call
// state in members. Compute reads inputs and writes outputs through its
// KernelContext and returns a Status; the executor attaches the node's name
// and op type to an error.
//
//   class IdentityOp : public OpKernel {
//    public:
//     bool IsExpensive() const override { return false; }
//     absl::Status Compute(KernelContext* ctx) override {
//       ctx->set_output(0, ctx->input(0));
//       return absl::OkStatus();
//     }
//   };
//
// An AsyncOpKernel (a _Recv waiting for its value) calls `done` exactly once,
// possibly on another thread, instead of returning.
#ifndef TOWERFLOW_FRAMEWORK_KERNEL_H_
#define TOWERFLOW_FRAMEWORK_KERNEL_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "core/types.h"
#include "framework/node_def_util.h"
#include "framework/tensor.h"
#include "proto/node_def.pb.h"
#include "proto/op_def.pb.h"

namespace towerflow {

class Device;
class KernelContext;

// What a kernel sees while it is being made: the node, its resolved input
// and output types, and the device. Borrowed for the duration of Init only.
class KernelConstruction {
 public:
  KernelConstruction(const NodeDef& def, const OpDef& op_def, Device* device,
                     const DataTypeVector& input_types, const DataTypeVector& output_types)
      : def_(def),
        op_def_(op_def),
        device_(device),
        input_types_(input_types),
        output_types_(output_types) {}

  const NodeDef& def() const { return def_; }
  const OpDef& op_def() const { return op_def_; }
  const std::string& name() const { return def_.name(); }
  Device* device() const { return device_; }
  int num_inputs() const { return static_cast<int>(input_types_.size()); }
  int num_outputs() const { return static_cast<int>(output_types_.size()); }
  DataType input_type(int i) const { return input_types_[i]; }
  DataType output_type(int i) const { return output_types_[i]; }
  const DataTypeVector& input_types() const { return input_types_; }
  const DataTypeVector& output_types() const { return output_types_; }

  // The attr `name`, with the op's default filled in at import.
  // InvalidArgument when it is missing or of another type.
  template <typename T>
  absl::Status GetAttr(absl::string_view attr_name, T* value) const {
    return GetNodeAttr(def_, attr_name, value);
  }

 private:
  const NodeDef& def_;
  const OpDef& op_def_;
  Device* const device_;
  const DataTypeVector& input_types_;
  const DataTypeVector& output_types_;
};

class OpKernel {
 public:
  virtual ~OpKernel() = default;

  // Reads and checks attrs. Called once, before any Compute.
  virtual absl::Status Init(const KernelConstruction& construction) { return absl::OkStatus(); }

  // Runs the node for one step. Inputs are valid tensors of the node's input
  // types (ref inputs are variables); every output must be set on success,
  // except by Switch and _Recv, whose unset outputs are dead (see Note
  // [Control flow] in runtime/executor.cc).
  virtual absl::Status Compute(KernelContext* ctx) = 0;

  // False for kernels so cheap (Const, Identity, NoOp, scalar arithmetic)
  // that the executor runs them inline instead of dispatching them to the
  // inter-op pool. See Note [Executor scheduling] in runtime/executor.cc.
  virtual bool IsExpensive() const { return true; }

  // Async kernels override ComputeAsync; the executor calls it instead of
  // Compute when this is true.
  virtual bool IsAsync() const { return false; }
  using DoneCallback = std::function<void(absl::Status)>;
  // REQUIRES: IsAsync(). Calls done exactly once.
  virtual void ComputeAsync(KernelContext* ctx, DoneCallback done) { done(Compute(ctx)); }

  // Input buffers (TF's ScopedAllocator, for a fused collective): a kernel
  // whose inputs end up copied into a buffer of its own may let their
  // producers write them there directly. When TakesInputBuffers(), the
  // executor asks InputBuffer whenever the producer of an input this node
  // alone consumes (in the root frame, on the same device) allocates that
  // output: `run` is the executor run (unique in the process, never reused),
  // `input` the input index. A tensor of exactly `dtype` and `shape` is the
  // output's buffer; nullopt, a buffer of its own. Called from the producers'
  // threads, concurrently with each other and with other runs' Compute. The
  // kernel still checks at Compute where each input lies: a producer may
  // forward another buffer instead.
  virtual bool TakesInputBuffers() const { return false; }
  virtual std::optional<Tensor> InputBuffer(int64_t run, int input, DataType dtype,
                                            const TensorShape& shape) {
    return std::nullopt;
  }
};

class AsyncOpKernel : public OpKernel {
 public:
  bool IsAsync() const final { return true; }
  absl::Status Compute(KernelContext*) final {
    return absl::InternalError("Compute called on an async kernel");
  }
  void ComputeAsync(KernelContext* ctx, DoneCallback done) override = 0;
};

}  // namespace towerflow

#endif  // TOWERFLOW_FRAMEWORK_KERNEL_H_
