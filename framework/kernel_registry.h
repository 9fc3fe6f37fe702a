// The kernel registry: which OpKernel runs an op on a device type.
//
// Kernels register at the bottom of their own file, keyed by op name,
// device type and type constraints on attrs (T in {float, double}):
//
//   TW_REGISTER_KERNELS(identity) {
//     RegisterKernel(KernelDefBuilder("Identity").Device(kDeviceCpu), MakeFactory<IdentityOp>());
//     RegisterTypedKernels<AddOp, float, double, int32_t>(
//         KernelDefBuilder("AddV2").Device(kDeviceCpu), "T");
//   }
//
// A node matches a kernel when op and device type are equal and every
// constrained attr of the node has an allowed type. Missing kernels are
// Unimplemented naming the op, the device type, the node's type attrs and the
// kernels that do exist.
//
// Registration happens during static initialisation; lookups are thread-safe
// afterwards.
#ifndef TOWERFLOW_FRAMEWORK_KERNEL_REGISTRY_H_
#define TOWERFLOW_FRAMEWORK_KERNEL_REGISTRY_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/types.h"
#include "framework/kernel.h"
#include "proto/node_def.pb.h"
#include "proto/op_def.pb.h"

namespace towerflow {

struct KernelDef {
  std::string op;
  std::string device_type;
  std::map<std::string, DataTypeVector> type_constraints;  // attr -> allowed types
  // Arguments (input or output names of the OpDef) that stay in host memory
  // on a device with memory of its own: shapes, axes, sizes the kernel reads
  // on the host. See kernels/memory_types.h.
  std::vector<std::string> host_memory_args;
  // Whether a replayed step may record the kernel (runtime/step_replay.h):
  // everything it does for a step is work enqueued on the device's stream,
  // or host work whose result depends only on its attrs, its inputs' shapes
  // and its host-memory inputs (which the recording requires to be the same
  // every step); its outputs' shapes depend on nothing else; host memory it
  // copies to the device is its own and stays what it was; it never waits
  // for the device, reads a device value on the host, or changes host state
  // that the next step reads. Off unless a registration says so: a kernel
  // is audited before it is declared capturable.
  bool capturable = false;
  // Host-memory inputs (by name) that a capturable kernel only checks and
  // copies to the device, through the device's copy from a host tensor
  // (GpuDevice::CopyHostBytes): a replayed step may feed them, each replay
  // copying the new value from the feed's host slot. Their host checks run
  // only when the step is recorded (a GPU kernel then does what TF's GPU
  // kernels do with a bad value: a class label out of range gives a NaN
  // loss).
  std::vector<std::string> copied_host_inputs;
  std::string DebugString() const;  // "device='CPU'; T in [float, double]"
};

class KernelDefBuilder {
 public:
  explicit KernelDefBuilder(std::string op) { def_.op = std::move(op); }
  KernelDefBuilder& Device(std::string device_type) {
    def_.device_type = std::move(device_type);
    return *this;
  }
  KernelDefBuilder& TypeConstraint(const std::string& attr, DataType allowed) {
    def_.type_constraints[attr].push_back(allowed);
    return *this;
  }
  template <typename T>
  KernelDefBuilder& TypeConstraint(const std::string& attr) {
    return TypeConstraint(attr, DataTypeToEnum<T>::value);
  }
  KernelDefBuilder& HostMemory(std::string arg_name) {
    def_.host_memory_args.push_back(std::move(arg_name));
    return *this;
  }
  // See KernelDef::capturable.
  KernelDefBuilder& Capturable() {
    def_.capturable = true;
    return *this;
  }
  // See KernelDef::copied_host_inputs.
  KernelDefBuilder& CopiedHostInput(std::string arg_name) {
    def_.copied_host_inputs.push_back(std::move(arg_name));
    return *this;
  }
  const KernelDef& def() const { return def_; }

 private:
  KernelDef def_;
};

using KernelFactory = std::function<std::unique_ptr<OpKernel>()>;

template <typename K>
KernelFactory MakeFactory() {
  return [] { return std::make_unique<K>(); };
}

void RegisterKernel(const KernelDefBuilder& builder, KernelFactory factory);

// One registration of K<T> per element type T, constrained on `attr`.
template <template <typename> class K, typename... Ts>
void RegisterTypedKernels(const KernelDefBuilder& builder, const std::string& attr) {
  (RegisterKernel(KernelDefBuilder(builder).TypeConstraint<Ts>(attr), MakeFactory<K<Ts>>()), ...);
}

// Note [Derived kernels]
// Some kernels are made from others rather than written: the CPU's half and
// bfloat16 kernels are its float kernels with conversions at their edges
// (kernels/cpu/float16_kernels.cc). A deriver registered here runs once,
// before the first lookup (FindKernelDef, CreateKernel, AllKernelDefs),
// when every static registration is done; it sees the kernels registered
// so far and may RegisterKernel more; it reads schemas through
// framework/op_def_source.h.
using KernelDeriver = std::function<void(const std::vector<const KernelDef*>& kernels)>;
void RegisterKernelDeriver(KernelDeriver deriver);

// Whether one of `kernels` takes `dtype` for its type attr `attr` (a kernel
// without a constraint on `attr` takes every type).
bool AnyKernelTakes(const std::vector<const KernelDef*>& kernels, const std::string& attr,
                    DataType dtype);

// The kernel for `node_def` on `device_type`, or Unimplemented.
absl::StatusOr<const KernelDef*> FindKernelDef(const std::string& device_type,
                                               const NodeDef& node_def);

// Makes and Init()s the kernel for `node_def` (already validated against
// `op_def`) on `device`. Unimplemented when none is registered; the kernel's
// Init error otherwise.
absl::StatusOr<std::unique_ptr<OpKernel>> CreateKernel(Device* device,
                                                       const std::string& device_type,
                                                       const NodeDef& node_def,
                                                       const OpDef& op_def);

// Every registered kernel definition (for completeness tests).
std::vector<const KernelDef*> AllKernelDefs();

}  // namespace towerflow

// Runs the block once at static-initialisation time. The library holding it
// needs alwayslink = 1.
#define TW_REGISTER_KERNELS(unique_name)                                   \
  static void TwRegisterKernels_##unique_name();                           \
  [[maybe_unused]] static const bool tw_kernels_registered_##unique_name = \
      (TwRegisterKernels_##unique_name(), true);                           \
  static void TwRegisterKernels_##unique_name()

#endif  // TOWERFLOW_FRAMEWORK_KERNEL_REGISTRY_H_
