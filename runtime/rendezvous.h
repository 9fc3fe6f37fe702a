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
// Thread-safe.
#ifndef TOWERFLOW_RUNTIME_RENDEZVOUS_H_
#define TOWERFLOW_RUNTIME_RENDEZVOUS_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "runtime/tensor.h"

namespace towerflow {

class Device;

class Rendezvous {
 public:
  // Where a sent tensor lives: on `device` (null: the host), in host memory
  // or in the device's own. The receiver copies when its side differs
  // (TransferTensor).
  struct Origin {
    Device* device = nullptr;
    bool on_host = true;
  };
  using DoneCallback = std::function<void(const absl::Status&, const Tensor&, const Origin&)>;

  Rendezvous() = default;
  ~Rendezvous();
  Rendezvous(const Rendezvous&) = delete;
  Rendezvous& operator=(const Rendezvous&) = delete;

  // "send_device;incarnation(hex);recv_device;tensor_name;0:0", TF's key.
  static std::string CreateKey(const std::string& send_device, int64_t send_incarnation,
                               const std::string& recv_device, const std::string& tensor_name);

  // Delivers `value` under `key`. InvalidArgument when the key was already
  // sent this step; the abort status after StartAbort.
  absl::Status Send(const std::string& key, const Tensor& value, const Origin& origin);
  absl::Status Send(const std::string& key, const Tensor& value) {
    return Send(key, value, Origin());
  }

  // Calls `done` with the value sent under `key` (once), or with an error.
  void RecvAsync(const std::string& key, DoneCallback done);

  // Fails pending and future Recvs with `status` (the first abort wins).
  // REQUIRES: !status.ok().
  void StartAbort(const absl::Status& status);

 private:
  struct Item {
    bool has_value = false;
    Tensor value;
    Origin origin;
    DoneCallback waiter;  // set when Recv came first
  };

  absl::Mutex mu_;
  absl::Status abort_status_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, Item> table_ ABSL_GUARDED_BY(mu_);
};

}  // namespace towerflow

#endif  // TOWERFLOW_RUNTIME_RENDEZVOUS_H_
