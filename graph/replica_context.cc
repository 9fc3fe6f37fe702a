#include "graph/replica_context.h"

namespace towerflow {
namespace {

thread_local ReplicaContext current;

}  // namespace

ReplicaContext CurrentReplicaContext() { return current; }

ScopedReplicaContext::ScopedReplicaContext(ReplicaContext context) : previous_(current) {
  current = context;
}

ScopedReplicaContext::~ScopedReplicaContext() { current = previous_; }

}  // namespace towerflow
