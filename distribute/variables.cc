#include "distribute/variables.h"

#include <string>
#include <vector>

#include "ops/ops.h"
#include "ops/variables.h"

namespace towerflow {
namespace distribute {

Operation BroadcastGlobalVariables(const Scope& scope, int root_rank) {
  const std::vector<Variable> vars = GetVariables(*scope.graph(), GraphKeys::kGlobalVariables);
  if (vars.empty()) return Operation(ops::NoOp(scope.WithOpName("broadcast_global_variables")));
  const Scope host = scope.WithDevice("/device:CPU:0");
  std::vector<Output> values;
  for (const Variable& v : vars) values.push_back(v.value(host.NewSubScope("read")));
  const ops::MpiBroadcast broadcast(host, values, ops::MpiBroadcast::RootRank(root_rank));
  std::vector<Operation> assigns;
  for (size_t i = 0; i < vars.size(); ++i) {
    const std::string& device = vars[i].handle().node()->requested_device();
    const Scope on = device.empty() ? scope : scope.WithDevice(device);
    assigns.push_back(Operation(
        ops::AssignVariableOp(on.WithOpName("assign"), vars[i].handle(), broadcast.output[i])));
  }
  return Operation(
      ops::NoOp(scope.WithOpName("broadcast_global_variables").WithControlDependencies(assigns)));
}

}  // namespace distribute
}  // namespace towerflow
