#include "runtime/rendezvous.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace towerflow {

Rendezvous::~Rendezvous() {
  // A step that ends with Recvs still waiting has failed elsewhere; tell
  // them so rather than dropping their callbacks.
  StartAbort(absl::CancelledError("Rendezvous destroyed before the value was sent"));
}

std::string Rendezvous::CreateKey(const std::string& send_device, int64_t send_incarnation,
                                  const std::string& recv_device, const std::string& tensor_name) {
  return absl::StrCat(send_device, ";", absl::Hex(static_cast<uint64_t>(send_incarnation)), ";",
                      recv_device, ";", tensor_name, ";0:0");
}

absl::Status Rendezvous::Send(const std::string& key, const Tensor& value, const Origin& origin) {
  DoneCallback waiter;
  {
    absl::MutexLock lock(&mu_);
    if (!abort_status_.ok()) return abort_status_;
    Item& item = table_[key];
    if (item.has_value) {
      return absl::InvalidArgumentError(absl::StrCat("Send of an already sent tensor: ", key));
    }
    if (!item.waiter) {
      item.has_value = true;
      item.value = value;
      item.origin = origin;
      return absl::OkStatus();
    }
    waiter = std::move(item.waiter);
    table_.erase(key);
  }
  waiter(absl::OkStatus(), value, origin);
  return absl::OkStatus();
}

void Rendezvous::RecvAsync(const std::string& key, DoneCallback done) {
  Tensor value;
  Origin origin;
  absl::Status status;
  {
    absl::MutexLock lock(&mu_);
    if (!abort_status_.ok()) {
      status = abort_status_;
    } else {
      auto it = table_.find(key);
      if (it == table_.end() || !it->second.has_value) {
        Item& item = table_[key];
        if (item.waiter) {
          status = absl::InvalidArgumentError(absl::StrCat("Two Recvs of one tensor: ", key));
        } else {
          item.waiter = std::move(done);
          return;
        }
      } else {
        value = std::move(it->second.value);
        origin = it->second.origin;
        table_.erase(it);
      }
    }
  }
  done(status, value, origin);
}

void Rendezvous::StartAbort(const absl::Status& status) {
  std::vector<DoneCallback> waiters;
  {
    absl::MutexLock lock(&mu_);
    if (abort_status_.ok()) abort_status_ = status;
    for (auto& [key, item] : table_) {
      if (item.waiter) waiters.push_back(std::move(item.waiter));
    }
    table_.clear();
  }
  for (DoneCallback& w : waiters) w(status, Tensor(), Origin());
}

}  // namespace towerflow
