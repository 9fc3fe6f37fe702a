// Variables across the processes of a cluster.
#ifndef TOWERFLOW_DISTRIBUTE_VARIABLES_H_
#define TOWERFLOW_DISTRIBUTE_VARIABLES_H_

#include "graph/output.h"
#include "graph/scope.h"

namespace towerflow {
namespace distribute {

// An op that sets every global variable of `scope`'s graph to process
// `root_rank`'s value (Horovod's broadcast_global_variables): one fused
// MpiBroadcast on the host, then an assignment on each variable's device.
// Run it after the variables are initialized or restored, on every process,
// so that all start from one state whatever their seeds. With one process
// it assigns each variable its own value.
Operation BroadcastGlobalVariables(const Scope& scope, int root_rank = 0);

}  // namespace distribute
}  // namespace towerflow

#endif  // TOWERFLOW_DISTRIBUTE_VARIABLES_H_
