// Variables across the processes of a cluster.
#ifndef TOWERFLOW_DISTRIBUTE_VARIABLES_H_
#define TOWERFLOW_DISTRIBUTE_VARIABLES_H_

#include <vector>

#include "graph/output.h"
#include "graph/scope.h"
#include "ops/variables.h"

namespace towerflow {
namespace distribute {

// An op that sets every global variable of `scope`'s graph to process
// `root_rank`'s value (Horovod's broadcast_global_variables): one fused
// MpiBroadcast on the host, then an assignment on each variable's device.
// Run it after the variables are initialized or restored, on every process,
// so that all start from one state whatever their seeds. With one process
// it assigns each variable its own value.
Operation BroadcastGlobalVariables(const Scope& scope, int root_rank = 0);

// An op that sets each of `vars` (float, double, int32 or int64) to the sum
// of its values over the processes: one fused MpiAllReduce, then the
// assignments. Metric variables (totals and counts) summed so are the
// metrics of all the processes' data, as TF's replicated evaluation reduces
// its towers' metric variables.
Operation AllReduceVariables(const Scope& scope, const std::vector<Variable>& vars);

}  // namespace distribute
}  // namespace towerflow

#endif  // TOWERFLOW_DISTRIBUTE_VARIABLES_H_
