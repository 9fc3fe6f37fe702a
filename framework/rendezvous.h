// Rendezvous: where a _Send meets its _Recv within one step.
//
// Each Session::Run makes one Rendezvous shared by all partitions of the
// step. A tensor crossing devices is sent once under a key naming the edge
// and both devices (CreateKey) and received once. Recv is asynchronous: the
// callback runs when the value arrives — inline in RecvAsync when it is
// already there, else on the sender's thread after Send has released the
// lock. StartAbort fails every pending and future Recv with the given
// status, which is how the first error of a step cancels the rest.
//
// Collectives meet here too: the `group_size` kernels of one collective
// (NcclAllReduce ops sharing a shared_name) each JoinCollective; the last to
// join gets the whole group and runs the collective for everyone, so no
// member blocks a thread while it waits. StartAbort aborts the members
// still waiting.
//
// Thread-safe.
#ifndef TOWERFLOW_FRAMEWORK_RENDEZVOUS_H_
#define TOWERFLOW_FRAMEWORK_RENDEZVOUS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "framework/tensor.h"

namespace towerflow {

class Device;

class Rendezvous {
 public:
  // Where a sent tensor lives: on `device` (null: the host), in host memory
  // or in the device's own. The receiver copies when its side differs
  // (TransferTensor). A dead tensor (from the untaken side of a Switch) has
  // no value: `is_dead` tells the receiver to be dead too.
  struct Origin {
    Device* device = nullptr;
    bool on_host = true;
    bool is_dead = false;
  };
  using DoneCallback = std::function<void(const absl::Status&, const Tensor&, const Origin&)>;

  Rendezvous() = default;
  virtual ~Rendezvous();
  Rendezvous(const Rendezvous&) = delete;
  Rendezvous& operator=(const Rendezvous&) = delete;

  // "send_device;incarnation(hex);recv_device;tensor_name;0:0", TF's key.
  static std::string CreateKey(const std::string& send_device, int64_t send_incarnation,
                               const std::string& recv_device, const std::string& tensor_name);

  // Delivers `value` under `key`. InvalidArgument when the key was already
  // sent this step; the abort status after StartAbort.
  // A subclass (distribute/server.cc) delivers a key whose receiving device
  // is in another process there.
  virtual absl::Status Send(const std::string& key, const Tensor& value, const Origin& origin);
  absl::Status Send(const std::string& key, const Tensor& value) {
    return Send(key, value, Origin());
  }

  // Calls `done` with the value sent under `key` (once), or with an error.
  void RecvAsync(const std::string& key, DoneCallback done);

  // A kernel's part in a collective (kernels/collective_ops.h).
  class CollectiveMember {
   public:
    virtual ~CollectiveMember() = default;
    // Ends the member with `status` instead of the collective.
    virtual void Abort(const absl::Status& status) = 0;
  };
  using CollectiveGroup = std::vector<std::unique_ptr<CollectiveMember>>;

  // Adds `member` to collective `key` of `group_size` members. The last to
  // join gets back the whole group, in join order, and runs the collective;
  // the others get an empty group. A member whose group_size disagrees with
  // the first's, or that joins after StartAbort, is aborted at once
  // (InvalidArgument naming the key; the abort status).
  CollectiveGroup JoinCollective(const std::string& key, int group_size,
                                 std::unique_ptr<CollectiveMember> member);

  // Kernels that wait on something other than the rendezvous (a queue's
  // dequeue, an accumulator's take) end their wait when the step is
  // aborted: `fn` runs with the abort status on the first StartAbort (at once
  // when the rendezvous is aborted already), unless RemoveAbortCallback
  // took it back first. Returns the token for RemoveAbortCallback.
  int64_t AddAbortCallback(std::function<void(const absl::Status&)> fn);
  // Takes back a callback that has not run. Safe after it has run.
  void RemoveAbortCallback(int64_t token);

  // Fails pending and future Recvs, and aborts waiting collective members
  // and runs the abort callbacks, with `status` (the first abort wins).
  // REQUIRES: !status.ok().
  // A subclass also tells the other processes of the step.
  virtual void StartAbort(const absl::Status& status);

 private:
  struct PendingCollective {
    int group_size = 0;
    CollectiveGroup members;
  };

  struct Item {
    bool has_value = false;
    Tensor value;
    Origin origin;
    DoneCallback waiter;  // set when Recv came first
  };

  absl::Mutex mu_;
  absl::Status abort_status_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, Item> table_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, PendingCollective> collectives_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<int64_t, std::function<void(const absl::Status&)>> abort_callbacks_
      ABSL_GUARDED_BY(mu_);
  int64_t next_abort_token_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace towerflow

#endif  // TOWERFLOW_FRAMEWORK_RENDEZVOUS_H_
