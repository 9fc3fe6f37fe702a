// Runs one kernel on its own, without a graph or a Session: for kernel unit
// tests and the bad-input tables.
//
//   KernelRunner r("MatMul");
//   r.Attr("transpose_b", true);
//   absl::StatusOr<std::vector<Tensor>> out =
//       r.Run({Literal<float>({2, 2}, {1, 2, 3, 4}), Literal<float>({2, 2}, {5, 6, 7, 8})});
//
// Type attrs the node leaves unset are inferred from the inputs (`T` from
// the first input whose arg names it, `N` from list lengths, type lists from
// the list), then the op's defaults are filled in and the NodeDef validated,
// as import does. Inputs are checked against the node's input types as the
// executor guarantees. A Ref(T) input is given as its tensor, held in a
// fresh initialised variable; a Ref(T) output comes back as that variable's
// value after the run. Every output must be set by a successful kernel.
#ifndef TOWERFLOW_KERNELS_TESTING_KERNEL_RUNNER_H_
#define TOWERFLOW_KERNELS_TESTING_KERNEL_RUNNER_H_

#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/types.h"
#include "framework/attr_value_util.h"
#include "framework/kernel.h"
#include "framework/tensor.h"
#include "proto/node_def.pb.h"
#include "testing/tensor_testing.h"

namespace towerflow {

class Device;

class KernelRunner {
 public:
  explicit KernelRunner(std::string op, std::string name = "k");

  KernelRunner(const KernelRunner&) = delete;
  KernelRunner& operator=(const KernelRunner&) = delete;
  ~KernelRunner();

  template <typename V>
  KernelRunner& Attr(const std::string& name, const V& value) {
    SetAttrValue(value, &(*def_.mutable_attr())[name]);
    kernel_.reset();
    return *this;
  }
  KernelRunner& Attr(const std::string& name, const AttrValue& value) {
    (*def_.mutable_attr())[name] = value;
    kernel_.reset();
    return *this;
  }
  KernelRunner& Attr(const std::string& name, std::initializer_list<int64_t> value) {
    return Attr(name, std::vector<int64_t>(value));
  }

  // Runs the kernel once on TestCpuDevice() (2 intra-op threads). The
  // kernel is made on the first Run and kept while the attrs and input
  // types stay the same (as an executor keeps it), so a stateful kernel
  // such as a random op continues its stream.
  absl::StatusOr<std::vector<Tensor>> Run(const std::vector<Tensor>& inputs);

  const NodeDef& def() const { return def_; }

  // The NodeDef a graph would hold for these inputs: type, number and list
  // attrs inferred, defaults added, validated against the op (no inputs
  // listed). What Run uses.
  absl::StatusOr<NodeDef> CompleteNodeDef(const std::vector<Tensor>& inputs) const;

 private:
  NodeDef def_;
  // The kernel of the last Run, for the inputs' dtypes in `kernel_types_`.
  std::unique_ptr<OpKernel> kernel_;
  DataTypeVector kernel_types_;
  NodeDef kernel_def_;
  DataTypeVector input_types_, output_types_;
};

// The shared CPU device the runner uses. Its allocator refuses single
// allocations above kKernelTestAllocationCap (ResourceExhausted).
inline constexpr size_t kKernelTestAllocationCap = size_t{1} << 30;
Device* TestCpuDevice();

// A resource variable `name` on TestCpuDevice() holding a copy of `value`
// (created, or overwritten), and its handle.
Tensor ResourceVariable(const std::string& name, const Tensor& value);
// The value of TestCpuDevice()'s resource variable `name`.
Tensor ReadVariable(const std::string& name);

}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_TESTING_KERNEL_RUNNER_H_
