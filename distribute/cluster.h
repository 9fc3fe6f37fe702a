// The processes of one training job: a cluster started by `mpirun` (Open
// MPI), or a single process when the program was started without it.
//
//   TW_ASSIGN_OR_RETURN(distribute::Cluster * cluster, distribute::Cluster::Get());
//   dataset = dataset.Shard(cluster->size(), cluster->rank());
//   if (cluster->is_chief()) { /* write checkpoints, summaries, exports */ }
//
// Processes exchange tensors with collectives (Horovod's semantics on MPI):
// every process calls the same collectives in the same order with tensors of
// one dtype and shape. A disagreement is found before any data moves and is
// an InvalidArgument on every process, never a hang or a mixed-up sum.
//
// Ranks come from MPI_COMM_WORLD; the local rank (the process's index among
// those on its machine, which picks its GPU) from MPI's shared-memory split.
// MPI is initialised on first use with MPI_THREAD_MULTIPLE and finalised at
// exit; its errors are returned (MPI_ERRORS_RETURN), not fatal.
//
// Failures stop the whole job instead of leaving processes waiting:
//  - A process that fails calls Abort(status) (the Estimator does when its
//    training or evaluation fails): every other process's collectives then
//    return Aborted, naming the process and its error.
//  - A collective that waits longer than the collective timeout for the
//    others (TOWERFLOW_COLLECTIVE_TIMEOUT_SECONDS, default 600; 0 waits
//    forever) asks the waiting processes to answer, names those that do not
//    (hung, or busy outside the collectives), returns DeadlineExceeded and
//    stops the others with that message.
//  - A process that dies is named by mpirun, which stops the others.
// After a failure every collective returns the failure at once.
// (The processes meet in a small non-blocking collective, the agreement,
// before each call's data moves, and these waits happen there; the data
// then moves with MPI's blocking collectives, the fastest. A group
// AllReduceSum meets once for all its tensors.)
#ifndef TOWERFLOW_DISTRIBUTE_CLUSTER_H_
#define TOWERFLOW_DISTRIBUTE_CLUSTER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "framework/tensor.h"

namespace towerflow {
namespace distribute {

class Cluster {
 public:
  // This process's cluster, made on the first call (thread-safe). Under
  // mpirun (Open MPI's OMPI_COMM_WORLD_SIZE in the environment) it joins the
  // other processes; otherwise it is a cluster of one that never touches MPI.
  static absl::StatusOr<Cluster*> Get();

  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  // Rank 0, which alone writes checkpoints, summaries and exports.
  bool is_chief() const { return rank_ == 0; }
  // Whether the processes talk through MPI (false for a cluster of one).
  bool uses_mpi() const { return uses_mpi_; }

  // `t` (float, double, int32 or int64) becomes the element-wise sum of
  // every process's `t`.
  absl::Status AllReduceSum(Tensor* t);
  // Each of `tensors` becomes the sum of every process's tensor at its
  // place: the processes pass as many tensors, of the same dtypes and shapes
  // in the same order. One agreement covers the group, so a group of many
  // small tensors meets the other processes once before its data moves,
  // not once per tensor.
  absl::Status AllReduceSum(absl::Span<Tensor* const> tensors);
  // Every process's `tensors` concatenated along their first dimension in
  // rank order (MPI_Allgatherv; Horovod's allgather): the processes pass as
  // many tensors of rank >= 1 and of plain elements, of the same dtypes and
  // of the same dims past the first, which may differ (a sparse gradient's
  // rows). One agreement covers the group.
  absl::StatusOr<std::vector<Tensor>> AllGather(absl::Span<const Tensor> tensors);
  // `t` becomes process `root`'s `t` on every process.
  absl::Status Broadcast(Tensor* t, int root);
  // Returns once every process has called it.
  absl::Status Barrier();
  // Whether `mine` holds on every process (a vote: one small all-reduce).
  absl::StatusOr<bool> EveryProcess(bool mine);
  // InvalidArgument on every process unless every process passed the same
  // `values` (a description of what it is about to do, for collectives
  // outside MPI such as NCCL's, which cannot check it themselves).
  absl::Status CheckSameValues(const std::string& what, const std::vector<int64_t>& values);

  // This process has failed with `error` (not OK): the other processes'
  // collectives return Aborted naming this process and `error`, and so do
  // this process's from now on. Does nothing after the cluster has failed
  // already (the first failure is the one reported) or in a cluster of one.
  void Abort(const absl::Status& error);
  // The failure that stopped the cluster's collectives, or OK.
  absl::Status failure() const;

  // How long a collective waits for the other processes before it gives up
  // (InfiniteDuration: forever). From TOWERFLOW_COLLECTIVE_TIMEOUT_SECONDS.
  void set_collective_timeout(absl::Duration timeout);
  absl::Duration collective_timeout() const {
    const int64_t ms = timeout_ms_.load();
    return ms == 0 ? absl::InfiniteDuration() : absl::Milliseconds(ms);
  }

  // The data collectives (the tensors of AllReduceSum, AllGather and
  // Broadcast calls that move data, however many MPI calls carry each; not
  // the agreement checks)
  // this process has issued, for tests and statistics.
  int64_t collectives() const { return collectives_.load(std::memory_order_relaxed); }
  // The agreements (the small non-blocking collectives that check the
  // processes' arguments and watch for failures) this process has begun.
  int64_t agreements() const { return agreements_.load(std::memory_order_relaxed); }
  // The bytes fused collectives copied into their buffers (Horovod's
  // MEMCPY_IN_FUSION_BUFFER), as MpiAllReduce records them: what producers
  // that wrote into the buffer themselves spared (OpKernel::InputBuffer).
  int64_t fusion_copy_bytes() const { return fusion_copy_bytes_.load(std::memory_order_relaxed); }
  void RecordFusionCopy(int64_t bytes) {
    fusion_copy_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  }

  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;
  ~Cluster();

 private:
  struct Channel;  // cluster.cc: the side channel of failures (MPI types)

  Cluster();
  absl::Status Init();
  // InvalidArgument on every process unless all pass as many tensors, of
  // the same dtypes and shapes in the same order, to collective `what`;
  // with `rows_may_differ`, shapes whose first dims differ are the same.
  absl::Status CheckAgreement(const char* what, absl::Span<const Tensor* const> group,
                              bool rows_may_differ = false) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Waits for the non-blocking collective `request` (an MPI_Request*) of
  // collective `what`, answering other processes' questions, until it
  // completes, another process aborts the job, or the timeout.
  absl::Status Wait(void* request, const std::string& what) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Wait, and when it fails, `buffers` (what the collective reads and
  // writes) are kept for the rest of the process: MPI may still complete
  // the request into them (Note [Collectives across machines]).
  absl::Status WaitKeeping(void* request, const std::string& what,
                           std::shared_ptr<const void> buffers) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether the processes span more than one machine.
  bool across_machines() const { return local_size_ != size_; }
  // Records the first failure and tells every other process `message`.
  void Fail(const absl::Status& failure, const std::string& message);

  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  bool uses_mpi_ = false;
  std::atomic<int64_t> collectives_{0};
  std::atomic<int64_t> agreements_{0};
  std::atomic<int64_t> fusion_copy_bytes_{0};
  int64_t sequence_ ABSL_GUARDED_BY(mu_) = 0;  // collectives begun, for messages
  // One collective at a time from this process, so every process issues
  // them in the order its callers did.
  absl::Mutex mu_;
  std::unique_ptr<Channel> channel_;
  mutable absl::Mutex failure_mu_;
  absl::Status failure_ ABSL_GUARDED_BY(failure_mu_);
  std::atomic<bool> failed_{false};
  std::atomic<int64_t> timeout_ms_{0};  // 0: forever
};

}  // namespace distribute
}  // namespace towerflow

#endif  // TOWERFLOW_DISTRIBUTE_CLUSTER_H_
