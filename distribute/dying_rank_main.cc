// A job whose last process dies (SIGKILL) in the middle of its
// collectives, for dying_rank_test.sh: the others are then waiting on it.
#include <csignal>
#include <cstdio>

#include "distribute/cluster.h"

int main() {
  absl::StatusOr<towerflow::distribute::Cluster*> cluster = towerflow::distribute::Cluster::Get();
  if (!cluster.ok()) return 2;
  towerflow::distribute::Cluster* c = *cluster;
  for (int step = 0; step < 1000; ++step) {
    if (step == 3 && c->rank() == c->size() - 1) std::raise(SIGKILL);
    towerflow::Tensor t(towerflow::DT_FLOAT, towerflow::TensorShape({4}));
    for (int i = 0; i < 4; ++i) t.data<float>()[i] = 1;
    if (!c->AllReduceSum(&t).ok()) return 3;
  }
  std::printf("rank %d finished all its steps\n", c->rank());
  return 0;
}
