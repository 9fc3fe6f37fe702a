// The replica (tower) whose graph is being built on this thread, as TF's
// tf.distribute replica context: ReplicateModelFn sets it around each
// tower's model_fn call; layers that work across the replicas read it
// (synchronised batch norm: how many towers sum their statistics, and
// which one updates the moving averages). One replica, of index 0, when
// nothing set it.
//
//   ScopedReplicaContext replica({.num_replicas = n, .replica_id = i});
//   spec = model_fn(tower, ...);   // its layers see replica i of n
#ifndef TOWERFLOW_GRAPH_REPLICA_CONTEXT_H_
#define TOWERFLOW_GRAPH_REPLICA_CONTEXT_H_

namespace towerflow {

struct ReplicaContext {
  int num_replicas = 1;  // the towers of this process
  int replica_id = 0;
};

// This thread's.
ReplicaContext CurrentReplicaContext();

// Sets this thread's context for its lifetime, then restores the one before.
class ScopedReplicaContext {
 public:
  explicit ScopedReplicaContext(ReplicaContext context);
  ~ScopedReplicaContext();
  ScopedReplicaContext(const ScopedReplicaContext&) = delete;
  ScopedReplicaContext& operator=(const ScopedReplicaContext&) = delete;

 private:
  const ReplicaContext previous_;
};

}  // namespace towerflow

#endif  // TOWERFLOW_GRAPH_REPLICA_CONTEXT_H_
