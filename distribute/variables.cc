#include "distribute/variables.h"

#include <string>
#include <vector>

#include "ops/gen/control_ops.h"
#include "ops/gen/nccl_ops.h"
#include "ops/gen/state_ops.h"
#include "ops/variables.h"

namespace towerflow {
namespace distribute {

namespace {

// `vars` set to `values` (one each), each on its variable's device, then a
// NoOp named `name` after them.
Operation AssignAll(const Scope& scope, const std::vector<Variable>& vars,
                    const std::vector<Output>& values, const std::string& name) {
  std::vector<Operation> assigns;
  for (size_t i = 0; i < vars.size(); ++i) {
    const std::string& device = vars[i].handle().node()->requested_device();
    const Scope on = device.empty() ? scope : scope.WithDevice(device);
    assigns.push_back(
        Operation(ops::AssignVariableOp(on.WithOpName("assign"), vars[i].handle(), values[i])));
  }
  return Operation(ops::NoOp(scope.WithOpName(name).WithControlDependencies(assigns)));
}

std::vector<Output> Values(const Scope& host, const std::vector<Variable>& vars) {
  std::vector<Output> values;
  for (const Variable& v : vars) values.push_back(v.value(host.NewSubScope("read")));
  return values;
}

}  // namespace

Operation BroadcastGlobalVariables(const Scope& scope, int root_rank) {
  const std::vector<Variable> vars = GetVariables(*scope.graph(), GraphKeys::kGlobalVariables);
  if (vars.empty()) return Operation(ops::NoOp(scope.WithOpName("broadcast_global_variables")));
  const Scope host = scope.WithDevice("/device:CPU:0");
  const ops::MpiBroadcast broadcast(host, Values(host, vars),
                                    ops::MpiBroadcast::RootRank(root_rank));
  return AssignAll(scope, vars, broadcast.output, "broadcast_global_variables");
}

Operation AllReduceVariables(const Scope& scope, const std::vector<Variable>& vars) {
  if (vars.empty()) return Operation(ops::NoOp(scope.WithOpName("all_reduce_variables")));
  const Scope host = scope.WithDevice("/device:CPU:0");
  const ops::MpiAllReduce sums(host, Values(host, vars));
  return AssignAll(scope, vars, sums.sum, "all_reduce_variables");
}

}  // namespace distribute
}  // namespace towerflow
