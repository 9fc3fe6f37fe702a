#include "distribute/cluster.h"

#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "core/status_macros.h"
#include "distribute/mpi_status.h"

namespace towerflow {
namespace distribute {
namespace {

absl::StatusOr<MPI_Datatype> MpiType(DataType dtype, const char* what) {
  switch (dtype) {
    case DT_FLOAT:
      return MPI_FLOAT;
    case DT_DOUBLE:
      return MPI_DOUBLE;
    case DT_INT32:
      return MPI_INT32_T;
    case DT_INT64:
      return MPI_INT64_T;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          what, " takes float, double, int32 or int64 tensors, got ", DataTypeString(dtype)));
  }
}

// The side channel's messages.
constexpr int kFailureTag = 1;   // a failure's text, to every process
constexpr int kQuestionTag = 2;  // "are you waiting in a collective?"
constexpr int kAnswerTag = 3;    // "yes"
constexpr int kFailureBytes = 4096;
// A collective that has waited this long says so once on stderr.
constexpr absl::Duration kWarnAfter = absl::Seconds(60);
// How long a process that timed out waits for the others' answers.
constexpr absl::Duration kAnswerGrace = absl::Seconds(5);

Cluster* the_cluster = nullptr;  // for the exit handler

// MPI's counts are ints: the most elements one call moves.
constexpr int64_t kMaxMpiCount = int64_t{1} << 30;

// Note [All-reduce pieces]
// When every process runs on one machine (MPI's shared-memory split holds
// them all), a large sum goes as one MPI_Allreduce per 512 KiB piece rather
// than one call for the whole buffer (presumably because a piece stays in
// the cores' caches between its copy through shared memory and its sum;
// Open MPI's own segments of one large call do not). On the 2-core VM, 25 M
// floats in pieces of 256 KiB-1 MiB took 0.34-0.45 of one whole call's time
// with 2 and with 3 processes (bench/README); small buffers are one piece
// anyway. Across machines MPI segments the transfer itself, and the extra
// calls would add a network round trip each, so there it stays one call.
constexpr int64_t kSharedMemoryPieceBytes = int64_t{512} << 10;

// Note [Collectives across machines]
// A collective is two phases: the agreement on dtypes and shapes, always a
// non-blocking call waited for with the side channel and the timeout
// (Cluster::Wait), then the data. On one machine the data goes through the
// blocking call (and in pieces: Note [All-reduce pieces]): there a process
// that dies is found by mpirun at once, and a live one always completes it.
// Across machines a link can go down in the middle of the data, and a
// blocking MPI call then waits forever (TCP retries; found by
// tests/multihost_test.sh: the process whose peer was cut off in the data
// phase never returned), so there the data also goes through the
// non-blocking call and Wait: every process ends in DeadlineExceeded naming
// the silent one. A request whose wait failed cannot be cancelled (MPI has
// no cancel for collectives) and may still complete into its buffers if
// the link comes back, so they are kept for the rest of the process.
void KeepForever(std::shared_ptr<const void> buffers) {
  static absl::Mutex mu(absl::kConstInit);
  static auto* const kept = new std::vector<std::shared_ptr<const void>>;
  absl::MutexLock lock(&mu);
  kept->push_back(std::move(buffers));
}

}  // namespace

// A duplicate of MPI_COMM_WORLD for failures and questions, apart from the
// collectives; a receive for each is always posted.
struct Cluster::Channel {
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Request failure_recv = MPI_REQUEST_NULL, question_recv = MPI_REQUEST_NULL;
  char failure_text[kFailureBytes] = {};
  char question[1] = {};

  // Non-blocking sends whose buffers live until they complete.
  absl::Mutex send_mu;
  std::vector<std::pair<MPI_Request, std::unique_ptr<std::string>>> sends ABSL_GUARDED_BY(send_mu);

  void Send(int to, int tag, std::string bytes) {
    absl::MutexLock lock(&send_mu);
    // Forget the sends that have completed.
    std::vector<std::pair<MPI_Request, std::unique_ptr<std::string>>> pending;
    for (auto& send : sends) {
      int done = 0;
      if (MPI_Test(&send.first, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || !done) {
        pending.push_back(std::move(send));
      }
    }
    sends = std::move(pending);
    auto buffer = std::make_unique<std::string>(std::move(bytes));
    MPI_Request request;
    if (MPI_Isend(buffer->data(), static_cast<int>(buffer->size()), MPI_CHAR, to, tag, comm,
                  &request) == MPI_SUCCESS) {
      sends.emplace_back(request, std::move(buffer));
    }
  }

  absl::Status PostFailureRecv() {
    return MpiStatus(MPI_Irecv(failure_text, kFailureBytes, MPI_CHAR, MPI_ANY_SOURCE, kFailureTag,
                               comm, &failure_recv),
                     "MPI_Irecv");
  }
  absl::Status PostQuestionRecv() {
    return MpiStatus(
        MPI_Irecv(question, 1, MPI_CHAR, MPI_ANY_SOURCE, kQuestionTag, comm, &question_recv),
        "MPI_Irecv");
  }
  // Withdraws the posted receives (at exit, before MPI_Finalize).
  void CancelRecvs() {
    for (MPI_Request* r : {&failure_recv, &question_recv}) {
      if (*r == MPI_REQUEST_NULL) continue;
      MPI_Cancel(r);
      MPI_Wait(r, MPI_STATUS_IGNORE);
    }
  }
};

Cluster::Cluster() : channel_(std::make_unique<Channel>()) {}
Cluster::~Cluster() = default;

absl::StatusOr<Cluster*> Cluster::Get() {
  static Cluster* cluster = new Cluster();
  static const absl::Status* init = new absl::Status(cluster->Init());
  if (!init->ok()) return *init;
  return cluster;
}

absl::Status Cluster::Init() {
  if (std::getenv("OMPI_COMM_WORLD_SIZE") == nullptr) return absl::OkStatus();
  int initialized = 0;
  TW_MPI_RETURN_IF_ERROR(MPI_Initialized(&initialized));
  if (!initialized) {
    int provided = 0;
    TW_MPI_RETURN_IF_ERROR(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided));
    // Finalised when the process exits normally, as mpirun expects. Not
    // after a failure: MPI_Finalize waits for every process, and the one
    // that failed may never come; mpirun then stops the job, non-zero.
    std::atexit([] {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (finalized) return;
      if (the_cluster != nullptr) {
        if (the_cluster->failed_.load()) return;
        the_cluster->channel_->CancelRecvs();
        if (the_cluster->channel_->comm != MPI_COMM_NULL) {
          MPI_Comm_free(&the_cluster->channel_->comm);
        }
      }
      MPI_Finalize();
    });
  }
  TW_MPI_RETURN_IF_ERROR(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  TW_MPI_RETURN_IF_ERROR(MPI_Comm_rank(MPI_COMM_WORLD, &rank_));
  TW_MPI_RETURN_IF_ERROR(MPI_Comm_size(MPI_COMM_WORLD, &size_));
  MPI_Comm local;
  TW_MPI_RETURN_IF_ERROR(
      MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local));
  TW_MPI_RETURN_IF_ERROR(MPI_Comm_rank(local, &local_rank_));
  TW_MPI_RETURN_IF_ERROR(MPI_Comm_size(local, &local_size_));
  TW_MPI_RETURN_IF_ERROR(MPI_Comm_free(&local));
  TW_MPI_RETURN_IF_ERROR(MPI_Comm_dup(MPI_COMM_WORLD, &channel_->comm));
  TW_MPI_RETURN_IF_ERROR(MPI_Comm_set_errhandler(channel_->comm, MPI_ERRORS_RETURN));
  TW_RETURN_IF_ERROR(channel_->PostFailureRecv());
  TW_RETURN_IF_ERROR(channel_->PostQuestionRecv());
  double timeout_s = 600;
  if (const char* env = std::getenv("TOWERFLOW_COLLECTIVE_TIMEOUT_SECONDS")) {
    if (!absl::SimpleAtod(env, &timeout_s) || !(timeout_s >= 0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "TOWERFLOW_COLLECTIVE_TIMEOUT_SECONDS must be a number of seconds >= 0, got '", env,
          "'"));
    }
  }
  set_collective_timeout(timeout_s == 0 ? absl::InfiniteDuration() : absl::Seconds(timeout_s));
  uses_mpi_ = true;
  the_cluster = this;
  return absl::OkStatus();
}

void Cluster::set_collective_timeout(absl::Duration timeout) {
  timeout_ms_.store(timeout == absl::InfiniteDuration()
                        ? 0
                        : std::max<int64_t>(1, absl::ToInt64Milliseconds(timeout)));
}

absl::Status Cluster::failure() const {
  absl::MutexLock lock(&failure_mu_);
  return failure_;
}

void Cluster::Abort(const absl::Status& error) {
  if (!uses_mpi_ || error.ok()) return;
  Fail(error, absl::StrCat("process ", rank_, " of ", size_, " failed: ", error.ToString()));
}

absl::Status Cluster::WaitKeeping(void* request, const std::string& what,
                                  std::shared_ptr<const void> buffers) {
  absl::Status status = Wait(request, what);
  if (!status.ok()) KeepForever(std::move(buffers));
  return status;
}

void Cluster::Fail(const absl::Status& failure, const std::string& message) {
  {
    absl::MutexLock lock(&failure_mu_);
    if (failed_.load()) return;
    failure_ = failure;
    failed_.store(true);
  }
  for (int r = 0; r < size_; ++r) {
    if (r != rank_) channel_->Send(r, kFailureTag, message.substr(0, kFailureBytes - 1));
  }
}

absl::Status Cluster::Wait(void* pending, const std::string& what) {
  MPI_Request* request = static_cast<MPI_Request*>(pending);
  Channel& ch = *channel_;
  const absl::Time start = absl::Now();
  const int64_t timeout_ms = timeout_ms_.load();
  bool warned = false;
  // Serves the side channel: another process's failure ends the wait with
  // it; a question is answered.
  const auto serve = [&]() -> absl::Status {
    int got = 0;
    MPI_Status status;
    TW_MPI_RETURN_IF_ERROR(MPI_Test(&ch.failure_recv, &got, &status));
    if (got) {
      int length = 0;
      MPI_Get_count(&status, MPI_CHAR, &length);
      const absl::Status failure = absl::AbortedError(absl::StrCat(
          what, " on process ", rank_,
          " stopped: ", std::string(ch.failure_text, std::clamp(length, 0, kFailureBytes))));
      absl::MutexLock lock(&failure_mu_);
      if (!failed_.load()) {
        failure_ = failure;
        failed_.store(true);
      }
      return failure_;
    }
    TW_MPI_RETURN_IF_ERROR(MPI_Test(&ch.question_recv, &got, &status));
    if (got) {
      ch.Send(status.MPI_SOURCE, kAnswerTag, std::string(1, '\0'));
      TW_RETURN_IF_ERROR(ch.PostQuestionRecv());
    }
    return absl::OkStatus();
  };
  for (int64_t spin = 0;; ++spin) {
    int done = 0;
    TW_MPI_RETURN_IF_ERROR(MPI_Test(request, &done, MPI_STATUS_IGNORE));
    if (done) return absl::OkStatus();
    if (failed_.load()) return failure();  // this process aborted meanwhile
    TW_RETURN_IF_ERROR(serve());
    if (spin < 1000) continue;  // a collective usually completes within microseconds
    std::this_thread::yield();
    if (spin % 256 != 0) continue;
    const absl::Duration waited = absl::Now() - start;
    if (!warned && waited > kWarnAfter && (timeout_ms == 0 || timeout_ms > 2 * 60000)) {
      warned = true;
      std::fprintf(stderr,
                   "towerflow: process %d has waited %s in %s (collective #%lld) for the other "
                   "processes\n",
                   rank_, absl::FormatDuration(absl::Trunc(waited, absl::Seconds(1))).c_str(),
                   what.c_str(), static_cast<long long>(sequence_));
    }
    if (timeout_ms == 0 || waited < absl::Milliseconds(timeout_ms)) continue;
    // Timed out: the processes waiting in a collective answer; the others
    // are named.
    for (int r = 0; r < size_; ++r) {
      if (r != rank_) ch.Send(r, kQuestionTag, std::string(1, '\0'));
    }
    std::vector<bool> answered(size_, false);
    answered[rank_] = true;
    char answer = 0;
    MPI_Request answer_recv;
    TW_MPI_RETURN_IF_ERROR(
        MPI_Irecv(&answer, 1, MPI_CHAR, MPI_ANY_SOURCE, kAnswerTag, ch.comm, &answer_recv));
    const absl::Time grace_end = absl::Now() + kAnswerGrace;
    while (std::count(answered.begin(), answered.end(), false) > 0 && absl::Now() < grace_end) {
      MPI_Status status;
      int got = 0;
      TW_MPI_RETURN_IF_ERROR(MPI_Test(&answer_recv, &got, &status));
      if (got) {
        answered[status.MPI_SOURCE] = true;
        TW_MPI_RETURN_IF_ERROR(
            MPI_Irecv(&answer, 1, MPI_CHAR, MPI_ANY_SOURCE, kAnswerTag, ch.comm, &answer_recv));
        continue;
      }
      if (const absl::Status s = serve(); !s.ok()) {  // another process gave up first
        MPI_Cancel(&answer_recv);
        MPI_Wait(&answer_recv, MPI_STATUS_IGNORE);
        return s;
      }
      std::this_thread::yield();
    }
    MPI_Cancel(&answer_recv);
    MPI_Wait(&answer_recv, MPI_STATUS_IGNORE);
    std::vector<int> silent;
    for (int r = 0; r < size_; ++r) {
      if (!answered[r]) silent.push_back(r);
    }
    const std::string message = absl::StrCat(
        "process ", rank_, " of ", size_, " waited ",
        absl::FormatDuration(absl::Trunc(waited, absl::Milliseconds(100))), " in ", what,
        " (collective #", sequence_, ") for the other processes; ",
        silent.empty() ? "all of them are waiting in collectives, but not in this one"
                       : absl::StrCat(silent.size() == 1 ? "process " : "processes ",
                                      absl::StrJoin(silent, ", "),
                                      " did not answer (hung, or busy outside the collectives)"),
        " (TOWERFLOW_COLLECTIVE_TIMEOUT_SECONDS sets the wait)");
    Fail(absl::DeadlineExceededError(message), message);
    return failure();
  }
}

absl::Status Cluster::CheckAgreement(const char* what, absl::Span<const Tensor* const> group,
                                     bool rows_may_differ) {
  // Each process's (tensor count, element count, hash of the dtypes and
  // shapes) and their negations, reduced by MAX: the maxima and minima over
  // the processes. FNV-1a over the dtypes, ranks and dims (the same on every
  // process, unlike absl::Hash), kept to 62 bits so that its negation fits.
  // When rows may differ, the first dims are left out and the elements
  // counted are those of one row.
  uint64_t hash = 14695981039346656037ull;
  const auto mix = [&hash](int64_t v) {
    hash = (hash ^ static_cast<uint64_t>(v)) * 1099511628211ull;
  };
  int64_t elements = 0;
  for (const Tensor* t : group) {
    mix(t->dtype());
    mix(t->dims());
    const absl::Span<const int64_t> dims = t->shape().dim_sizes();
    int64_t row = 1;
    for (size_t d = rows_may_differ ? 1 : 0; d < dims.size(); ++d) {
      mix(dims[d]);
      row *= dims[d];
    }
    elements += rows_may_differ ? row : t->NumElements();
  }
  hash >>= 2;
  const int64_t mine[3] = {static_cast<int64_t>(group.size()), elements,
                           static_cast<int64_t>(hash)};
  // Both halves in one buffer that a failed wait keeps.
  auto buffers = std::make_shared<std::array<int64_t, 12>>();
  int64_t* const send = buffers->data();
  int64_t* const extremes = buffers->data() + 6;
  for (int i = 0; i < 3; ++i) {
    send[i] = mine[i];
    send[3 + i] = -mine[i];
  }
  if (failed_.load()) return failure();
  ++sequence_;
  agreements_.fetch_add(1, std::memory_order_relaxed);
  MPI_Request request;
  TW_MPI_RETURN_IF_ERROR(
      MPI_Iallreduce(send, extremes, 6, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD, &request));
  TW_RETURN_IF_ERROR(WaitKeeping(&request, what, buffers));
  for (int i = 0; i < 3; ++i) {
    if (extremes[i] == -extremes[3 + i]) continue;
    // This process's tensors, the first few.
    constexpr size_t kShown = 4;
    std::string passed;
    for (size_t j = 0; j < std::min(group.size(), kShown); ++j) {
      absl::StrAppend(&passed, j == 0 ? "" : ", ", DataTypeString(group[j]->dtype()),
                      group[j]->shape().DebugString());
    }
    if (group.size() > kShown) absl::StrAppend(&passed, ", ...");
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": the processes passed tensors of different dtypes or shapes",
        rows_may_differ ? " past the first dimension" : "", " (this process, rank ", rank_,
        ", passed ", group.size() == 1 ? "" : absl::StrCat(group.size(), " tensors: "), passed,
        "; ",
        extremes[0] != -extremes[3]
            ? absl::StrCat("tensor counts range over [", -extremes[3], ", ", extremes[0], "], ")
            : "",
        rows_may_differ ? "elements per row" : "element counts", " range over [", -extremes[4],
        ", ", extremes[1], "])"));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> Cluster::EveryProcess(bool mine) {
  Tensor count(DT_INT32, TensorShape({1}));
  count.data<int32_t>()[0] = mine ? 1 : 0;
  TW_RETURN_IF_ERROR(AllReduceSum(&count));
  return count.data<int32_t>()[0] == size_;
}

absl::Status Cluster::CheckSameValues(const std::string& what, const std::vector<int64_t>& values) {
  if (!uses_mpi_) return absl::OkStatus();
  absl::MutexLock lock(&mu_);
  const int64_t n = static_cast<int64_t>(values.size());
  // As many values everywhere (the agreement on a [n] tensor), then their
  // maxima and the maxima of their negations: the minima.
  Tensor shape_of_values(DT_INT64, TensorShape({n}));
  const Tensor* const group[] = {&shape_of_values};
  TW_RETURN_IF_ERROR(CheckAgreement(what.c_str(), group));
  std::vector<int64_t> send(2 * n), extremes(2 * n);
  for (int64_t i = 0; i < n; ++i) {
    // INT64_MIN has no negation: it counts as INT64_MIN + 1.
    send[i] = std::max(values[i], std::numeric_limits<int64_t>::min() + 1);
    send[n + i] = -send[i];
  }
  ++sequence_;
  MPI_Request request;
  TW_MPI_RETURN_IF_ERROR(MPI_Iallreduce(send.data(), extremes.data(), static_cast<int>(2 * n),
                                        MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD, &request));
  TW_RETURN_IF_ERROR(Wait(&request, what));
  for (int64_t i = 0; i < n; ++i) {
    if (extremes[i] != -extremes[n + i]) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": the processes disagree on value ", i, " (this process, rank ", rank_, ", has ",
          values[i], "; they range over [", -extremes[n + i], ", ", extremes[i], "])"));
    }
  }
  return absl::OkStatus();
}

absl::Status Cluster::AllReduceSum(Tensor* t) { return AllReduceSum(absl::MakeSpan(&t, 1)); }

absl::Status Cluster::AllReduceSum(absl::Span<Tensor* const> tensors) {
  std::vector<MPI_Datatype> types(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    TW_ASSIGN_OR_RETURN(types[i], MpiType(tensors[i]->dtype(), "AllReduceSum"));
  }
  if (!uses_mpi_) return absl::OkStatus();
  absl::MutexLock lock(&mu_);
  TW_RETURN_IF_ERROR(
      CheckAgreement("AllReduceSum", std::vector<const Tensor*>(tensors.begin(), tensors.end())));
  for (size_t i = 0; i < tensors.size(); ++i) {
    Tensor* t = tensors[i];
    if (t->NumElements() > 0) collectives_.fetch_add(1, std::memory_order_relaxed);
    // Note [All-reduce pieces]: on one machine, pieces of 512 KiB; elsewhere
    // as large as MPI's int counts allow.
    char* data = static_cast<char*>(t->raw_data());
    const int64_t element = static_cast<int64_t>(TensorElementSize(t->dtype()));
    const int64_t piece = across_machines() ? kMaxMpiCount : kSharedMemoryPieceBytes / element;
    for (int64_t done = 0; done < t->NumElements(); done += piece) {
      const int count = static_cast<int>(std::min(piece, t->NumElements() - done));
      if (!across_machines()) {
        TW_MPI_RETURN_IF_ERROR(MPI_Allreduce(MPI_IN_PLACE, data + done * element, count, types[i],
                                             MPI_SUM, MPI_COMM_WORLD));
        continue;
      }
      // Note [Collectives across machines]
      MPI_Request request;
      TW_MPI_RETURN_IF_ERROR(MPI_Iallreduce(MPI_IN_PLACE, data + done * element, count, types[i],
                                            MPI_SUM, MPI_COMM_WORLD, &request));
      TW_RETURN_IF_ERROR(WaitKeeping(&request, "AllReduceSum", std::make_shared<Tensor>(*t)));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Tensor>> Cluster::AllGather(absl::Span<const Tensor> tensors) {
  std::vector<const Tensor*> group;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (t.dtype() == DT_STRING || t.dtype() == DT_RESOURCE || t.dtype() == DT_VARIANT) {
      return absl::InvalidArgumentError(
          absl::StrCat("AllGather takes tensors of plain elements, got ", DataTypeString(t.dtype()),
                       " (tensor ", i, ")"));
    }
    if (t.dims() < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("AllGather concatenates rows, so it takes tensors of rank >= 1; tensor ", i,
                       " is ", DataTypeString(t.dtype()), t.shape().DebugString()));
    }
    group.push_back(&t);
  }
  if (!uses_mpi_) return std::vector<Tensor>(tensors.begin(), tensors.end());
  absl::MutexLock lock(&mu_);
  TW_RETURN_IF_ERROR(CheckAgreement("AllGather", group, /*rows_may_differ=*/true));
  // Every process's row count of every tensor: rows[r * n + i].
  const int n = static_cast<int>(tensors.size());
  // This process's row counts, then every process's (a failed wait keeps
  // them: Note [Collectives across machines]).
  auto counts_buffer = std::make_shared<std::vector<int64_t>>(static_cast<size_t>(n) * (size_ + 1));
  int64_t* const mine = counts_buffer->data();
  int64_t* const rows = counts_buffer->data() + n;
  for (int i = 0; i < n; ++i) mine[i] = tensors[i].shape().dim_size(0);
  if (n > 0) {
    MPI_Request request;
    TW_MPI_RETURN_IF_ERROR(
        MPI_Iallgather(mine, n, MPI_INT64_T, rows, n, MPI_INT64_T, MPI_COMM_WORLD, &request));
    TW_RETURN_IF_ERROR(WaitKeeping(&request, "AllGather", counts_buffer));
  }
  std::vector<Tensor> out;
  for (int i = 0; i < n; ++i) {
    const Tensor& t = tensors[i];
    // Counts and displacements in rows, of a datatype of one row.
    auto layout = std::make_shared<std::vector<int>>(2 * size_);
    int* const counts = layout->data();
    int* const displacements = layout->data() + size_;
    int64_t total = 0;
    for (int r = 0; r < size_; ++r) {
      const int64_t count = rows[static_cast<size_t>(r) * n + i];
      if (total > std::numeric_limits<int>::max() - count) {
        return absl::InvalidArgumentError(absl::StrCat(
            "AllGather: tensor ", i, " would gather more than 2^31 rows over the processes"));
      }
      counts[r] = static_cast<int>(count);
      displacements[r] = static_cast<int>(total);
      total += count;
    }
    std::vector<int64_t> dims(t.shape().dim_sizes().begin(), t.shape().dim_sizes().end());
    dims[0] = total;
    TW_ASSIGN_OR_RETURN(const TensorShape shape, TensorShape::FromDims(dims));
    Tensor gathered(t.dtype(), shape);
    int64_t row_bytes = static_cast<int64_t>(TensorElementSize(t.dtype()));
    for (size_t d = 1; d < dims.size(); ++d) row_bytes *= dims[d];
    if (row_bytes > std::numeric_limits<int>::max()) {
      return absl::InvalidArgumentError(
          absl::StrCat("AllGather: tensor ", i, "'s rows of ", row_bytes, " bytes are over 2 GiB"));
    }
    if (total > 0 && row_bytes > 0) {
      collectives_.fetch_add(1, std::memory_order_relaxed);
      MPI_Datatype row;
      TW_MPI_RETURN_IF_ERROR(MPI_Type_contiguous(static_cast<int>(row_bytes), MPI_BYTE, &row));
      TW_MPI_RETURN_IF_ERROR(MPI_Type_commit(&row));
      if (!across_machines()) {
        const int status = MPI_Allgatherv(t.raw_data(), counts[rank_], row, gathered.raw_data(),
                                          counts, displacements, row, MPI_COMM_WORLD);
        MPI_Type_free(&row);
        TW_MPI_RETURN_IF_ERROR(status);
      } else {
        // Note [Collectives across machines]
        MPI_Request request;
        const int status = MPI_Iallgatherv(t.raw_data(), counts[rank_], row, gathered.raw_data(),
                                           counts, displacements, row, MPI_COMM_WORLD, &request);
        MPI_Type_free(&row);  // freed once the collective is done with it
        TW_MPI_RETURN_IF_ERROR(status);
        struct Buffers {
          Tensor sent, gathered;
          std::shared_ptr<std::vector<int>> layout;
        };
        TW_RETURN_IF_ERROR(WaitKeeping(&request, "AllGather",
                                       std::make_shared<Buffers>(Buffers{t, gathered, layout})));
      }
    }
    out.push_back(std::move(gathered));
  }
  return out;
}

absl::Status Cluster::Broadcast(Tensor* t, int root) {
  if (root < 0 || root >= size_) {
    return absl::InvalidArgumentError(
        absl::StrCat("Broadcast from rank ", root, " in a cluster of ", size_, " processes"));
  }
  if (!uses_mpi_) return absl::OkStatus();
  if (t->dtype() == DT_STRING || t->dtype() == DT_RESOURCE || t->dtype() == DT_VARIANT) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Broadcast takes tensors of plain elements, got ", DataTypeString(t->dtype())));
  }
  absl::MutexLock lock(&mu_);
  const Tensor* const group[] = {t};
  TW_RETURN_IF_ERROR(CheckAgreement("Broadcast", group));
  char* data = static_cast<char*>(t->raw_data());
  const int64_t bytes = static_cast<int64_t>(t->TotalBytes());
  if (bytes > 0) collectives_.fetch_add(1, std::memory_order_relaxed);
  for (int64_t done = 0; done < bytes; done += kMaxMpiCount) {
    const int count = static_cast<int>(std::min(kMaxMpiCount, bytes - done));
    if (!across_machines()) {
      TW_MPI_RETURN_IF_ERROR(MPI_Bcast(data + done, count, MPI_BYTE, root, MPI_COMM_WORLD));
      continue;
    }
    // Note [Collectives across machines]
    MPI_Request request;
    TW_MPI_RETURN_IF_ERROR(
        MPI_Ibcast(data + done, count, MPI_BYTE, root, MPI_COMM_WORLD, &request));
    TW_RETURN_IF_ERROR(WaitKeeping(&request, "Broadcast", std::make_shared<Tensor>(*t)));
  }
  return absl::OkStatus();
}

absl::Status Cluster::Barrier() {
  if (!uses_mpi_) return absl::OkStatus();
  absl::MutexLock lock(&mu_);
  if (failed_.load()) return failure();
  ++sequence_;
  MPI_Request request;
  TW_MPI_RETURN_IF_ERROR(MPI_Ibarrier(MPI_COMM_WORLD, &request));
  return Wait(&request, "Barrier");
}

}  // namespace distribute
}  // namespace towerflow
