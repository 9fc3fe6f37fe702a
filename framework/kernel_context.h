// KernelContext: a kernel's window on one execution of its node.
//
// The executor makes one per node run. It lends the node's inputs, collects
// its outputs, and gives access to the device (allocator, ResourceMgr,
// intra-op pool) and to the step (rendezvous, call frame for feeds and
// fetches, step id).
//
//   absl::Status Compute(KernelContext* ctx) override {
//     const Tensor& a = ctx->input(0);                      // [N]
//     TW_ASSIGN_OR_RETURN(Tensor* out, ctx->allocate_output(0, a.shape()));
//     out->flat<float>().device(ctx->eigen_cpu_device()) = a.flat<float>() * 2.0f;
//     return absl::OkStatus();
//   }
//
// Not thread-safe: one kernel invocation uses it. An async kernel may use it
// until it calls `done`.
#ifndef TOWERFLOW_FRAMEWORK_KERNEL_CONTEXT_H_
#define TOWERFLOW_FRAMEWORK_KERNEL_CONTEXT_H_

#include <cstdint>
#include <string>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/types.h"
#include "framework/device.h"
#include "framework/memory_types.h"
#include "framework/rendezvous.h"
#include "framework/resource_mgr.h"
#include "framework/tensor.h"
#include "framework/tensor_views.h"  // kernels view tensors through Eigen
#include "proto/node_def.pb.h"

namespace towerflow {

// The feeds and fetches of one Session::Run, seen by the _Arg and _Retval
// kernels the session inserts. Thread-safe.
class CallFrame {
 public:
  virtual ~CallFrame() = default;
  // The fed tensor `index`; InvalidArgument when out of range.
  virtual absl::StatusOr<Tensor> GetArg(int index) const = 0;
  // Stores fetch `index`; InvalidArgument when out of range or set twice.
  virtual absl::Status SetRetval(int index, const Tensor& value) = 0;
};

// One input of a node: a value, or for a Ref(T) input slot the variable
// (`ref`) whose tensor the kernel may update under its lock.
struct KernelInput {
  Tensor* tensor = nullptr;  // owned by the executor; exclusively this node's
  Var* ref = nullptr;        // kept alive by its ResourceMgr and the producing kernel
};

// One output: a value, or a ref to a variable for Ref(T) outputs. An output
// a kernel leaves unset is dead (Switch's untaken side).
struct KernelOutput {
  Tensor tensor;
  Var* ref = nullptr;
  bool set = false;
};

class OpKernel;

// Where a node's output goes when its one consumer takes that input in a
// buffer of its own (OpKernel::TakesInputBuffers): the consumer's kernel and
// input index; a null kernel for every other output.
struct InputBufferSink {
  OpKernel* consumer = nullptr;
  int input = 0;
};

class KernelContext {
 public:
  struct Params {
    const NodeDef* def = nullptr;
    Device* device = nullptr;
    const DataTypeVector* output_types = nullptr;
    // Where each input and output lives on a device with memory of its own;
    // null means the device's memory for all (kernels/memory_types.h).
    const MemoryTypeVector* input_memory_types = nullptr;
    const MemoryTypeVector* output_memory_types = nullptr;
    absl::Span<const KernelInput> inputs;
    Rendezvous* rendezvous = nullptr;
    CallFrame* call_frame = nullptr;
    int64_t step_id = 0;
    // This run of the executor, unique in the process (OpKernel::InputBuffer).
    int64_t run_id = 0;
    // By output: empty, or where each output's consumer wants it written.
    absl::Span<const InputBufferSink> output_sinks;
    // A _Send or _Recv (which run even when dead, to carry the deadness
    // across devices) whose inputs are dead.
    bool is_input_dead = false;
  };

  // `params` and what it points to must outlive the context.
  explicit KernelContext(const Params& params)
      : params_(params), outputs_(params.output_types->size()) {}
  KernelContext(const KernelContext&) = delete;
  KernelContext& operator=(const KernelContext&) = delete;

  const NodeDef& def() const { return *params_.def; }
  const std::string& name() const { return params_.def->name(); }
  const std::string& op() const { return params_.def->op(); }

  int num_inputs() const { return static_cast<int>(params_.inputs.size()); }
  // Whether input i has arrived: always, except for Merge, which runs on its
  // first live input (runtime/executor.cc, Note [Control flow]).
  bool has_input(int i) const {
    return params_.inputs[i].tensor != nullptr || params_.inputs[i].ref != nullptr;
  }
  bool is_input_dead() const { return params_.is_input_dead; }
  // REQUIRES: input i is not a ref input.
  const Tensor& input(int i) const { return *params_.inputs[i].tensor; }
  // The variable behind Ref(T) input i, or nullptr for a value input.
  Var* ref_input(int i) const { return params_.inputs[i].ref; }

  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  DataType output_type(int i) const { return (*params_.output_types)[i]; }
  // Whether input / output i is in host memory: always on CPU devices;
  // elsewhere per the node's memory types.
  bool input_on_host(int i) const { return OnHost(params_.input_memory_types, i); }
  bool output_on_host(int i) const { return OnHost(params_.output_memory_types, i); }

  // Allocates output i with the node's output dtype on this device (in host
  // memory when the output is a host-memory one), or takes the buffer its
  // one consumer gives it for this run (OpKernel::InputBuffer).
  // ResourceExhausted when out of memory or past the device's
  // memory_limits(); InvalidArgument for a bad shape.
  absl::StatusOr<Tensor*> allocate_output(int i, const TensorShape& shape);

  // A scratch tensor in this device's memory, under the same limits.
  absl::StatusOr<Tensor> allocate_temp(DataType dtype, const TensorShape& shape);

  // Output i in the buffer its consumer gives it (as allocate_output), else
  // input `input_index`'s buffer when no one else holds it and it has the
  // same dtype and element count (so the kernel may overwrite it in place),
  // else a fresh allocation.
  absl::StatusOr<Tensor*> forward_input_or_allocate_output(int input_index, int i,
                                                           const TensorShape& shape);

  // Sets output i to `value`. InvalidArgument when its dtype is not the
  // output's.
  absl::Status set_output(int i, Tensor value);
  // Sets Ref(T) output i to variable `var`.
  void set_output_ref(int i, Var* var);

  Device* device() const { return params_.device; }
  ResourceMgr* resource_manager() const { return params_.device->resource_manager(); }
  ThreadPool* intra_op_pool() const { return params_.device->intra_op_pool(); }
  const Eigen::ThreadPoolDevice& eigen_cpu_device() const {
    return params_.device->intra_op_pool()->eigen_device();
  }
  Rendezvous* rendezvous() const { return params_.rendezvous; }
  CallFrame* call_frame() const { return params_.call_frame; }
  int64_t step_id() const { return params_.step_id; }
  int64_t run_id() const { return params_.run_id; }

  // For the executor.
  absl::InlinedVector<KernelOutput, 2>& outputs() { return outputs_; }

 private:
  bool OnHost(const MemoryTypeVector* types, int i) const {
    return !params_.device->has_device_memory() ||
           (types != nullptr && (*types)[i] == MemoryType::kHost);
  }

  // The allocation of a `dtype` tensor of `shape` in host memory (`on_host`)
  // or the device's, after the device's memory_limits() allow it.
  absl::StatusOr<Tensor> Allocate(DataType dtype, const TensorShape& shape, bool on_host) const;

  // Output i in the buffer its consumer gives it for this run, if any.
  Tensor* TakeInputBuffer(int i, const TensorShape& shape);

  const Params& params_;
  absl::InlinedVector<KernelOutput, 2> outputs_;
};

}  // namespace towerflow

#endif  // TOWERFLOW_FRAMEWORK_KERNEL_CONTEXT_H_
