// ClusterSpec: the jobs of a TF 1.x between-graph replicated training job
// and their tasks (tf.train.ClusterSpec), and a task's identity.
//
//   TW_ASSIGN_OR_RETURN(ClusterSpec spec,
//                       ClusterSpec::Parse(R"({"ps": ["h0:2222"], "worker": ["h1:2222",
//                       "h2:2222"]})"));
//   spec.num_tasks("worker");          // 2
//   TW_ASSIGN_OR_RETURN(TaskId t, spec.TaskOfRank(2));   // worker 1
//   t.name();                          // "/job:worker/replica:0/task:1"
//
// Under mpirun the addresses are not used (MPI connects the processes); a
// spec may give counts instead: "ps=1,worker=2". Ranks take the tasks in
// the spec's order: with the spec above rank 0 is ps task 0, ranks 1 and 2
// are worker tasks 0 and 1.
//
// Value type; thread-compatible.
#ifndef TOWERFLOW_DISTRIBUTE_CLUSTER_SPEC_H_
#define TOWERFLOW_DISTRIBUTE_CLUSTER_SPEC_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace towerflow {
namespace distribute {

struct TaskId {
  std::string job;
  int task = 0;
  // "/job:ps/replica:0/task:1", the prefix of the task's device names.
  std::string name() const;
  bool operator==(const TaskId& o) const { return job == o.job && task == o.task; }
};

class ClusterSpec {
 public:
  ClusterSpec() = default;

  // TF's ClusterSpec as JSON, an object of jobs each with a list of task
  // addresses ({"ps": ["h:1"], "worker": ["h:2", "h:3"]}: the "cluster" of
  // TF_CONFIG), or counts ("ps=1,worker=2"). InvalidArgument naming what is
  // wrong: a job without tasks, a job twice, a bad job name, bad syntax.
  static absl::StatusOr<ClusterSpec> Parse(absl::string_view text);
  // Jobs in order, each with its task count.
  static absl::StatusOr<ClusterSpec> FromCounts(
      const std::vector<std::pair<std::string, int>>& jobs);

  // Job names in the spec's order.
  std::vector<std::string> jobs() const;
  // Tasks of `job`; 0 for a job the spec does not have.
  int num_tasks(const std::string& job) const;
  // Tasks of every job.
  int num_tasks() const;
  // A task's addresses as given ("" for counts).
  const std::vector<std::string>& addresses(const std::string& job) const;

  // The task of MPI rank `rank` (ranks in the spec's order); InvalidArgument
  // when the spec has fewer tasks.
  absl::StatusOr<TaskId> TaskOfRank(int rank) const;
  // The rank of `task`, or -1 when the spec has no such task.
  int RankOf(const TaskId& task) const;

  // "ps=1,worker=2".
  std::string DebugString() const;

 private:
  std::vector<std::pair<std::string, std::vector<std::string>>> jobs_;
};

}  // namespace distribute
}  // namespace towerflow

#endif  // TOWERFLOW_DISTRIBUTE_CLUSTER_SPEC_H_
