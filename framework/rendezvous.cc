#include "framework/rendezvous.h"

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

Rendezvous::CollectiveGroup Rendezvous::JoinCollective(const std::string& key, int group_size,
                                                       std::unique_ptr<CollectiveMember> member) {
  absl::Status refused;
  CollectiveGroup refused_members;
  {
    absl::MutexLock lock(&mu_);
    if (!abort_status_.ok()) {
      refused = abort_status_;
    } else {
      PendingCollective& pending = collectives_[key];
      if (pending.members.empty()) pending.group_size = group_size;
      if (group_size != pending.group_size) {
        // Neither size can complete: fail the members waiting as well.
        refused = absl::InvalidArgumentError(
            absl::StrCat("Collective '", key, "' was joined with group size ", group_size,
                         " after an earlier member said ", pending.group_size));
        refused_members = std::move(pending.members);
        collectives_.erase(key);
      } else {
        pending.members.push_back(std::move(member));
        if (static_cast<int>(pending.members.size()) < group_size) return {};
        CollectiveGroup group = std::move(pending.members);
        collectives_.erase(key);
        return group;
      }
    }
  }
  refused_members.push_back(std::move(member));
  for (auto& m : refused_members) m->Abort(refused);
  return {};
}

int64_t Rendezvous::AddAbortCallback(std::function<void(const absl::Status&)> fn) {
  absl::Status aborted;
  int64_t token;
  {
    absl::MutexLock lock(&mu_);
    token = next_abort_token_++;
    aborted = abort_status_;
    if (aborted.ok()) abort_callbacks_.emplace(token, std::move(fn));
  }
  if (!aborted.ok()) fn(aborted);
  return token;
}

void Rendezvous::RemoveAbortCallback(int64_t token) {
  absl::MutexLock lock(&mu_);
  abort_callbacks_.erase(token);
}

void Rendezvous::StartAbort(const absl::Status& status) {
  std::vector<DoneCallback> waiters;
  std::vector<CollectiveGroup> members;
  std::vector<std::function<void(const absl::Status&)>> callbacks;
  {
    absl::MutexLock lock(&mu_);
    if (abort_status_.ok()) abort_status_ = status;
    for (auto& [token, fn] : abort_callbacks_) callbacks.push_back(std::move(fn));
    abort_callbacks_.clear();
    for (auto& [key, item] : table_) {
      if (item.waiter) waiters.push_back(std::move(item.waiter));
    }
    table_.clear();
    for (auto& [key, pending] : collectives_) members.push_back(std::move(pending.members));
    collectives_.clear();
  }
  for (DoneCallback& w : waiters) w(status, Tensor(), Origin());
  for (CollectiveGroup& group : members) {
    for (auto& m : group) m->Abort(status);
  }
  for (auto& fn : callbacks) fn(status);
}

}  // namespace towerflow
