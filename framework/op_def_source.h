// Where code below graph/ finds an op's schema. The op registry
// (graph/op_registry.cc) sets the source when it is made; framework/ cannot
// call it directly, since graph/ sits above it. The kernel registry's
// derivers use it (Note [Derived kernels] in framework/kernel_registry.h).
//
//   const OpDef* def = FindOpDefFromSource("MatMul");  // nullptr if unknown
//
// Thread-safe.
#ifndef TOWERFLOW_FRAMEWORK_OP_DEF_SOURCE_H_
#define TOWERFLOW_FRAMEWORK_OP_DEF_SOURCE_H_

#include <functional>
#include <string>

#include "proto/op_def.pb.h"

namespace towerflow {

// Returns the schema of an op, or nullptr; what it returns must live as
// long as the process.
using OpDefSource = std::function<const OpDef*(const std::string& op)>;

// Replaces the source.
void SetOpDefSource(OpDefSource source);

// The op's schema from the source; nullptr when there is no source or it
// does not know the op.
const OpDef* FindOpDefFromSource(const std::string& op);

}  // namespace towerflow

#endif  // TOWERFLOW_FRAMEWORK_OP_DEF_SOURCE_H_
