// The op schema registry: each op's OpDef (TensorFlow's names, inputs, attrs
// and defaults) and its mandatory shape function.
//
// Ops register at static-initialization time from the file that owns them:
//
//   TW_REGISTER_OP("MatMul")
//       .Input("a: T")
//       .Input("b: T")
//       .Output("product: T")
//       .Attr("transpose_a: bool = false")
//       .Attr("transpose_b: bool = false")
//       .Attr("T: {bfloat16, half, float, double, int32, int64}")
//       .SetShapeFn(MatMulShape);
//
// Spec syntax (op_def_builder.h has the grammar) follows TensorFlow's
// REGISTER_OP, so OpDefs come out field-for-field as TensorFlow's. A library
// that only registers ops must be linked with `alwayslink = 1`.
//
// Thread-safe: registration happens before main(); lookups take a shared lock.
#ifndef TOWERFLOW_GRAPH_OP_REGISTRY_H_
#define TOWERFLOW_GRAPH_OP_REGISTRY_H_

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "graph/op_def_builder.h"
#include "graph/shape_inference.h"
#include "proto/op_def.pb.h"

namespace towerflow {

class OpRegistry {
 public:
  OpRegistry() = default;
  OpRegistry(const OpRegistry&) = delete;
  OpRegistry& operator=(const OpRegistry&) = delete;

  // The process-wide registry that TW_REGISTER_OP fills.
  static OpRegistry* Global();

  // Finalizes `builder` and adds the op. InvalidArgument for a malformed spec
  // or a missing shape function, AlreadyExists for a second op of one name.
  absl::Status Register(const OpDefBuilder& builder);

  // nullptr when `op` is not registered.
  const OpRegistrationData* Find(absl::string_view op) const;
  // NotFound "Op type not registered 'X'" when `op` is not registered.
  absl::StatusOr<const OpRegistrationData*> LookUp(absl::string_view op) const;

  // Sorted names of all registered ops.
  std::vector<std::string> ListOps() const;

  // Errors from registrations that failed (bad specs in our own sources).
  // A test asserts this is empty.
  std::vector<std::string> registration_errors() const;

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, std::unique_ptr<const OpRegistrationData>, std::less<>> ops_
      ABSL_GUARDED_BY(mu_);
  std::vector<std::string> errors_ ABSL_GUARDED_BY(mu_);
};

namespace op_registry_internal {

// Registers the builder it is constructed from with OpRegistry::Global().
class OpRegistrar {
 public:
  // NOLINTNEXTLINE(google-explicit-constructor): the TW_REGISTER_OP idiom.
  OpRegistrar(const OpDefBuilder& builder);
};

}  // namespace op_registry_internal

// Registers `builder` with OpRegistry::Global() from code (for families of
// ops registered in a loop); failures are reported like TW_REGISTER_OP's.
void RegisterOp(const OpDefBuilder& builder);

namespace op_registry_internal {}  // namespace op_registry_internal

#define TW_REGISTER_OP_CONCAT_INNER_(a, b) a##b
#define TW_REGISTER_OP_CONCAT_(a, b) TW_REGISTER_OP_CONCAT_INNER_(a, b)
#define TW_REGISTER_OP(name)                                                          \
  static const ::towerflow::op_registry_internal::OpRegistrar TW_REGISTER_OP_CONCAT_( \
      tw_op_registrar_, __COUNTER__) [[maybe_unused]] = ::towerflow::OpDefBuilder(name, __FILE__)

}  // namespace towerflow

#endif  // TOWERFLOW_GRAPH_OP_REGISTRY_H_
