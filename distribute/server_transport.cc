// Server's MPI messages: requests and their answers, tensors pushed between
// tasks, and the poller thread that receives them (server_impl.h).
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "core/status_macros.h"
#include "distribute/mpi_status.h"
#include "distribute/server_impl.h"
#include "distribute/worker.pb.h"

namespace towerflow {
namespace distribute {
namespace {

using server_internal::kFirstDataTag;
using server_internal::kMaxMessageBytes;
using server_internal::kRequestTag;
using server_internal::kResponseTag;
using server_internal::kTensorTag;

bool IsMemcpyType(DataType dtype) { return dtype != DT_STRING && dtype != DT_RESOURCE; }

}  // namespace

absl::Status Server::Impl::SendRequest(int rank, const WorkerRequest& request) {
  absl::ReaderMutexLock lock(&send_mu_);
  return SendRequestLocked(rank, request);
}

absl::Status Server::Impl::SendRequestLocked(int rank, const WorkerRequest& request) {
  if (stopped_) {
    return absl::FailedPreconditionError(
        absl::StrCat("the server of task ", task_.name(), " has stopped"));
  }
  const std::string bytes = request.SerializeAsString();
  TW_MPI_RETURN_IF_ERROR(
      MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, rank, kRequestTag, comm_));
  return absl::OkStatus();
}

void Server::Impl::Call(int rank, WorkerRequest request, const char* what,
                        std::function<void(const WorkerResponse&)> done) {
  const int64_t id = next_request_.fetch_add(1);
  request.set_request_id(id);
  {
    absl::MutexLock lock(&mu_);
    if (!poll_error_.ok()) {
      WorkerResponse r;
      r.set_code(static_cast<int32_t>(poll_error_.code()));
      r.set_message(std::string(poll_error_.message()));
      done(r);
      return;
    }
    calls_[id] = PendingCall{std::move(done), absl::Now() + timeout_, rank, what};
  }
  const absl::Status sent = SendRequest(rank, request);
  if (sent.ok()) return;
  PendingCall call;
  {
    absl::MutexLock lock(&mu_);
    auto it = calls_.find(id);
    if (it == calls_.end()) return;
    call = std::move(it->second);
    calls_.erase(it);
  }
  WorkerResponse r;
  r.set_code(static_cast<int32_t>(absl::StatusCode::kUnavailable));
  r.set_message(absl::StrCat(what, " to task ", tasks_[rank].name(), " (process ", rank,
                             ") could not be sent: ", sent.message()));
  call.done(r);
}

absl::Status Server::Impl::SendTensor(int rank, int64_t step_id, const std::string& key,
                                      const Tensor& value, bool is_dead) {
  absl::ReaderMutexLock lock(&send_mu_);
  if (stopped_) {
    return absl::FailedPreconditionError(
        absl::StrCat("the server of task ", task_.name(), " has stopped"));
  }
  TensorHeader header;
  header.set_step_id(step_id);
  header.set_key(key);
  header.set_is_dead(is_dead);
  std::string proto_bytes;
  const char* data = nullptr;
  int64_t size = 0;
  if (!is_dead) {
    header.set_dtype(value.dtype());
    value.shape().AsProto(header.mutable_shape());
    if (IsMemcpyType(value.dtype())) {
      data = static_cast<const char*>(value.raw_data());
      size = static_cast<int64_t>(value.TotalBytes());
    } else {
      header.set_as_proto(true);
      proto_bytes = value.AsProto().SerializeAsString();
      data = proto_bytes.data();
      size = static_cast<int64_t>(proto_bytes.size());
    }
  }
  if (size > 0) {
    header.set_data_tag(kFirstDataTag + static_cast<int>(next_data_tag_.fetch_add(1) %
                                                         (max_tag_ - kFirstDataTag + 1)));
  }
  const std::string header_bytes = header.SerializeAsString();
  TW_MPI_RETURN_IF_ERROR(MPI_Send(header_bytes.data(), static_cast<int>(header_bytes.size()),
                                  MPI_BYTE, rank, kTensorTag, comm_));
  for (int64_t offset = 0; offset < size; offset += kMaxMessageBytes) {
    const int n = static_cast<int>(std::min(kMaxMessageBytes, size - offset));
    TW_MPI_RETURN_IF_ERROR(
        MPI_Send(const_cast<char*>(data) + offset, n, MPI_BYTE, rank, header.data_tag(), comm_));
  }
  bytes_sent_.fetch_add(size);
  return absl::OkStatus();
}

absl::Status Server::Impl::ReceiveTensor(int source, const std::string& header_bytes) {
  TensorHeader header;
  if (!header.ParseFromString(header_bytes)) {
    return absl::DataLossError(absl::StrCat("unparsable tensor header from process ", source));
  }
  Tensor value;
  if (!header.is_dead()) {
    if (TensorElementSize(header.dtype()) == 0) {
      return absl::DataLossError(absl::StrCat("tensor '", header.key(), "' from process ", source,
                                              " has dtype ", header.dtype()));
    }
    TW_ASSIGN_OR_RETURN(const TensorShape shape, TensorShape::FromProto(header.shape()));
    std::string proto_bytes;
    char* data = nullptr;
    int64_t size = 0;
    if (header.as_proto()) {
      MPI_Status status;
      TW_MPI_RETURN_IF_ERROR(MPI_Probe(source, header.data_tag(), comm_, &status));
      int count = 0;
      TW_MPI_RETURN_IF_ERROR(MPI_Get_count(&status, MPI_BYTE, &count));
      proto_bytes.resize(count);
      data = proto_bytes.data();
      size = count;
    } else {
      value = Tensor(header.dtype(), shape);
      data = static_cast<char*>(value.raw_data());
      size = static_cast<int64_t>(value.TotalBytes());
    }
    for (int64_t offset = 0; offset < size; offset += kMaxMessageBytes) {
      const int n = static_cast<int>(std::min(kMaxMessageBytes, size - offset));
      TW_MPI_RETURN_IF_ERROR(MPI_Recv(data + offset, n, MPI_BYTE, source, header.data_tag(), comm_,
                                      MPI_STATUS_IGNORE));
    }
    if (header.as_proto()) {
      TensorProto proto;
      if (!proto.ParseFromString(proto_bytes)) {
        return absl::DataLossError(
            absl::StrCat("unparsable tensor '", header.key(), "' from process ", source));
      }
      TW_ASSIGN_OR_RETURN(value, Tensor::FromProto(proto));
    }
    bytes_received_.fetch_add(size);
  }
  std::shared_ptr<Rendezvous> rendezvous = FindStep(header.step_id(), /*create=*/true);
  if (rendezvous == nullptr) return absl::OkStatus();  // the step has ended here: nobody waits
  // A second value under one key, or one for an aborted step, has no taker.
  static_cast<StepRendezvous*>(rendezvous.get())
      ->Deliver(header.key(), value, header.is_dead())
      .IgnoreError();
  return absl::OkStatus();
}

void Server::Impl::PollLoop() {
  int idle = 0;
  while (!stopping_.load()) {
    bool got = false;
    const absl::Status s = PollOnce(&got);
    if (!s.ok()) {
      // The transport broke: every waiting call and Join learn it.
      std::vector<PendingCall> calls;
      {
        absl::MutexLock lock(&mu_);
        poll_error_ = absl::UnavailableError(absl::StrCat(
            "task ", task_.name(), " lost its connection to the others: ", s.message()));
        for (auto& [id, call] : calls_) calls.push_back(std::move(call));
        calls_.clear();
      }
      WorkerResponse r;
      r.set_code(static_cast<int32_t>(absl::StatusCode::kUnavailable));
      r.set_message(std::string(s.message()));
      for (PendingCall& call : calls) call.done(r);
      return;
    }
    if (got) {
      idle = 0;
      continue;
    }
    // Nothing to receive: spin briefly, then sleep longer and longer (up to
    // a millisecond), so that an idle task takes no core from the busy ones.
    ++idle;
    if (idle % 64 == 0) ExpireCalls();
    if (idle < 64) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(std::min(1000, (idle - 63) * 20)));
    }
  }
}

absl::Status Server::Impl::PollOnce(bool* got) {
  int flag = 0;
  MPI_Message message;
  MPI_Status status;
  TW_MPI_RETURN_IF_ERROR(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &flag, &message, &status));
  if (!flag) return absl::OkStatus();
  *got = true;
  const int source = status.MPI_SOURCE;
  const int tag = status.MPI_TAG;
  int count = 0;
  TW_MPI_RETURN_IF_ERROR(MPI_Get_count(&status, MPI_BYTE, &count));
  std::string bytes(count, '\0');
  TW_MPI_RETURN_IF_ERROR(MPI_Mrecv(bytes.data(), count, MPI_BYTE, &message, MPI_STATUS_IGNORE));
  switch (tag) {
    case kRequestTag: {
      WorkerRequest request;
      if (!request.ParseFromString(bytes)) {
        return absl::DataLossError(absl::StrCat("unparsable request from process ", source));
      }
      handlers_->Schedule([this, source, request = std::move(request)]() mutable {
        HandleRequest(source, std::move(request));
      });
      return absl::OkStatus();
    }
    case kResponseTag: {
      WorkerResponse response;
      if (!response.ParseFromString(bytes)) {
        return absl::DataLossError(absl::StrCat("unparsable answer from process ", source));
      }
      std::function<void(const WorkerResponse&)> done;
      {
        absl::MutexLock lock(&mu_);
        auto it = calls_.find(response.request_id());
        if (it == calls_.end()) return absl::OkStatus();  // expired already
        done = std::move(it->second.done);
        calls_.erase(it);
      }
      handlers_->Schedule(
          [done = std::move(done), response = std::move(response)] { done(response); });
      return absl::OkStatus();
    }
    case kTensorTag:
      return ReceiveTensor(source, bytes);
    default:
      return absl::InternalError(
          absl::StrCat("message with unexpected tag ", tag, " from process ", source));
  }
}

void Server::Impl::ExpireCalls() {
  std::vector<PendingCall> expired;
  {
    absl::MutexLock lock(&mu_);
    const absl::Time now = absl::Now();
    for (auto it = calls_.begin(); it != calls_.end();) {
      if (it->second.deadline <= now) {
        expired.push_back(std::move(it->second));
        calls_.erase(it++);
      } else {
        ++it;
      }
    }
  }
  for (PendingCall& call : expired) {
    WorkerResponse r;
    r.set_code(static_cast<int32_t>(absl::StatusCode::kDeadlineExceeded));
    r.set_message(
        absl::StrCat("task ", tasks_[call.rank].name(), " (process ", call.rank,
                     ") did not answer ", call.what, " within ", absl::FormatDuration(timeout_),
                     " (hung, or busy; TOWERFLOW_COLLECTIVE_TIMEOUT_SECONDS sets the wait)"));
    call.done(r);
  }
}

void Server::Impl::Reply(int rank, int64_t request_id, const absl::Status& status, int64_t handle) {
  WorkerResponse response;
  response.set_request_id(request_id);
  response.set_code(static_cast<int32_t>(status.code()));
  response.set_message(std::string(status.message()));
  response.set_graph_handle(handle);
  const std::string bytes = response.SerializeAsString();
  absl::ReaderMutexLock lock(&send_mu_);
  if (stopped_) return;  // the asker is told by the TaskDone instead
  // A task that cannot be answered is gone; mpirun reports it.
  MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, rank, kResponseTag, comm_);
}

}  // namespace distribute
}  // namespace towerflow
