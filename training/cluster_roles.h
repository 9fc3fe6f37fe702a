// How a process takes part in training, and the protocol the processes of
// a job keep while they train: which process writes, when all of them step
// or stop, how an error on one reaches the others, and how a session's
// variables get their first values (TF's Scaffold and SessionManager).
// Estimator::Train and keras::Model::Fit both follow it through the
// training loop (training/loop.h).
//
// Three roles, as TF 1.x has them:
//  - alone: one process, the chief;
//  - one process of a cluster started by mpirun (distribute::Cluster):
//    every process runs its towers of one replicated model, the processes
//    take each step together or not at all, and rank 0 alone writes;
//  - a task of a parameter-server job (distribute::Server): a ps task
//    serves the workers' steps, a worker steps on its own, and the chief
//    worker alone initializes, restores and writes; the others wait for its
//    variables.
#ifndef TOWERFLOW_TRAINING_CLUSTER_ROLES_H_
#define TOWERFLOW_TRAINING_CLUSTER_ROLES_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "distribute/cluster.h"
#include "distribute/server.h"
#include "graph/graph.h"
#include "graph/output.h"
#include "runtime/client_session.h"
#include "train/saver.h"
#include "train/session_manager.h"

namespace towerflow {
namespace training {

struct ProcessRole {
  // The processes stepping together; null alone and in a parameter-server
  // job (its ps tasks take part in no collective).
  distribute::Cluster* cluster = nullptr;
  // This process's task of a parameter-server job; null: none.
  distribute::Server* server = nullptr;
  // Whether this process logs and writes checkpoints and summaries.
  bool chief = true;

  bool is_ps_task() const { return server != nullptr && server->task().job == "ps"; }
};

// The role of this process. `across_processes`: a cluster of several
// processes (under mpirun) trains as one job; false: this process alone.
// `server`: this process's task of a parameter-server job, or null.
absl::StatusOr<ProcessRole> RoleOf(bool across_processes, distribute::Server* server);

// Whether `mine` holds on every process of `cluster` (null: this one alone).
absl::StatusOr<bool> EveryProcess(distribute::Cluster* cluster, bool mine);

// Rank 0's `mine` on every process (null cluster: `mine`): what ends
// training early is decided for the whole cluster, since a process that
// returned alone would leave the others waiting in a collective.
absl::StatusOr<bool> RankZeroDecides(distribute::Cluster* cluster, bool mine);

// The processes of a cluster take a training step together or not at all:
// before each step every process says whether it goes on (it has a batch
// and no hook asked to stop) and with how many examples. Returns the
// examples of the whole cluster's step, or nullopt when any process stops.
absl::StatusOr<std::optional<int64_t>> StepTogether(distribute::Cluster* cluster, bool go_on,
                                                    int64_t examples);

// The means of a step's `values` over the processes of `cluster`, each
// weighted by its process's `examples` (a process without examples adds
// nothing, not an empty mean's NaN). Null cluster: unchanged.
absl::Status MeanOverProcesses(distribute::Cluster* cluster, int64_t examples,
                               std::vector<double>* values);

// A process that fails while training or evaluating with others stops
// them: they are, or will be, waiting for it in a collective. Returns
// `result`.
template <typename T>
absl::StatusOr<T> StopOthersOnError(distribute::Cluster* cluster, absl::StatusOr<T> result) {
  if (!result.ok() && cluster != nullptr) cluster->Abort(result.status());
  return result;
}

// InvalidArgument naming the first op that needs every process of the job
// (MpiAllReduce, MpiAllGather, MpiBroadcast): a parameter-server job's ps
// tasks never run them, so the workers would wait for them forever.
absl::Status CheckNoCollectiveAcrossProcesses(const Graph& graph);

// How a training session's variables get their first values.
struct SessionStart {
  Operation init_global;
  Operation init_local;
  // Rank 0's variables to every process of a cluster (Horovod's
  // BroadcastGlobalVariablesHook), after the restore.
  std::optional<Operation> broadcast;
  // A parameter-server job's workers but the chief wait until this reports
  // no uninitialized variable, for at most `wait_for_variables`.
  std::optional<train::ReadyOp> ready;
  absl::Duration wait_for_variables = absl::Minutes(10);
  // Restores `checkpoint` when set.
  const train::Saver* saver = nullptr;
  std::optional<std::string> checkpoint;
};

// Initializes the variables, or restores them, or waits for the chief's;
// then the broadcast, then the local variables (after the restore, as TF's
// Scaffold runs local_init_op: local variables may start from global ones,
// such as the mirrors of an all-reduce replication). The chief of a
// parameter-server job restores without initializing first, so the
// variables the others wait for are never the initializers' values.
absl::Status StartSession(const ClientSession& session, const ProcessRole& role,
                          const SessionStart& start, std::ostream& log);

}  // namespace training
}  // namespace towerflow

#endif  // TOWERFLOW_TRAINING_CLUSTER_ROLES_H_
