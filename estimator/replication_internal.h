// The state ReplicateModelFn shares with the TowerOptimizers its towers
// create while it calls the model_fn: private to estimator/ (Bazel
// visibility keeps it there).
//
// Thread-compatible: the state is per building thread.
#ifndef TOWERFLOW_ESTIMATOR_REPLICATION_INTERNAL_H_
#define TOWERFLOW_ESTIMATOR_REPLICATION_INTERNAL_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "graph/output.h"
#include "graph/scope.h"
#include "ops/variables.h"
#include "train/optimizer.h"

namespace towerflow {
namespace estimator_internal {

inline constexpr char kDifferentOptimizerCalls[] =
    "Each invocation of model_fn was supposed to make the same optimizer calls.";

// What ReplicateModelFn shares with the TowerOptimizers its towers create:
// set for the duration of the model_fn calls on the building thread.
struct Replication {
  int num_towers = 1;
  int tower = 0;  // the tower being built
  // Tower t's loss (and so its gradients) is scaled by loss_factor (1 /
  // (towers x processes) for the averaging reductions) and, when
  // weigh_by_rows, by its share of the rows, towers x processes x b_t / B:
  // b_t the rows of row_sources[t] (dimension 0 of the tower's first
  // feature), B the sum over the towers of every process (MpiAllReduce), so
  // that batches of different sizes weigh as one batch of all their rows.
  // LossScale builds them where a loss is scaled, after the model's nodes,
  // so the replication adds nothing before them: random initializers take
  // their seeds from the graph's node count, and must draw the same with
  // any number of processes.
  double loss_factor = 1.0;
  bool weigh_by_rows = false;
  std::vector<Output> row_sources;
  std::optional<Scope> weights_scope;       // where the weights are built
  mutable std::vector<Output> row_weights;  // built on first use
  // Where the single apply is built: tower 0's name and variable scopes.
  std::optional<Scope> apply_scope;
  // calls[t][k]: tower t's gradients at its k-th optimizer call.
  std::vector<std::vector<std::vector<train::GradAndVar>>> calls;
  bool tower_optimizer_used = false;
  // Aggregation by all-reduce over mirrored variables: per tower, variable
  // name -> the tower's mirror (none for tower 0), and mirror name ->
  // variable name.
  bool all_reduce = false;
  std::vector<std::map<std::string, Variable>> mirrors;
  std::map<std::string, std::string> variable_of;
  // Every mirror (the optimizer's slots of mirrors too) -> what it copies.
  std::map<std::string, Variable> sources;
  // Training across the processes of an MPI cluster (ReplicateOptions::
  // across_processes): their number (1: this process alone) and the fusion
  // threshold of the gradient sums. Every process runs the step's
  // collectives in one order: the step graph sees to it (Note [Collective
  // order] in runtime/step_graph.cc).
  int num_processes = 1;
  int64_t fusion_threshold_bytes = 0;
  bool nccl_across_processes = false;  // the gradient sums cross on their GPU
};

// Tower `tower`'s loss scale (see Replication::loss_factor), a double built
// in `scope`; invalid when it is 1.
Output LossScale(const Scope& scope, const Replication& r, int tower);

// The replication being built on this thread; nullptr outside one.
Replication* CurrentReplication();

// Makes `r` current for its lifetime (nesting restores the outer one).
class ScopedReplication {
 public:
  explicit ScopedReplication(Replication* r);
  ~ScopedReplication();
  ScopedReplication(const ScopedReplication&) = delete;
  ScopedReplication& operator=(const ScopedReplication&) = delete;

 private:
  Replication* previous_;
};

}  // namespace estimator_internal
}  // namespace towerflow

#endif  // TOWERFLOW_ESTIMATOR_REPLICATION_INTERNAL_H_
