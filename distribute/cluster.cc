#include "distribute/cluster.h"

#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"

namespace towerflow {
namespace distribute {
namespace {

// An MPI call's result as a Status naming the call.
absl::Status MpiStatus(int code, const char* call) {
  if (code == MPI_SUCCESS) return absl::OkStatus();
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return absl::InternalError(absl::StrCat(call, " failed: ", std::string(text, length)));
}

#define TW_MPI_RETURN_IF_ERROR(call) TW_RETURN_IF_ERROR(MpiStatus((call), #call))

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

}  // namespace

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
    // Finalised when the process exits normally, as mpirun expects.
    std::atexit([] {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (!finalized) MPI_Finalize();
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
  uses_mpi_ = true;
  return absl::OkStatus();
}

absl::Status Cluster::CheckAgreement(const char* what, const Tensor& t) {
  // Each process's (dtype, rank, element count, hash of the dims) and their
  // negations, reduced by MAX: the maxima and minima over the processes.
  // FNV-1a over the dims (the same on every process, unlike absl::Hash),
  // kept to 62 bits so that its negation fits.
  uint64_t dims_hash = 14695981039346656037ull;
  for (int64_t d : t.shape().dim_sizes()) {
    dims_hash = (dims_hash ^ static_cast<uint64_t>(d)) * 1099511628211ull;
  }
  dims_hash >>= 2;
  const int64_t mine[4] = {static_cast<int64_t>(t.dtype()), t.dims(), t.NumElements(),
                           static_cast<int64_t>(dims_hash)};
  int64_t send[8], extremes[8];
  for (int i = 0; i < 4; ++i) {
    send[i] = mine[i];
    send[4 + i] = -mine[i];
  }
  TW_MPI_RETURN_IF_ERROR(MPI_Allreduce(send, extremes, 8, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD));
  for (int i = 0; i < 4; ++i) {
    if (extremes[i] != -extremes[4 + i]) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": the processes passed tensors of different dtypes or shapes (this process, rank ",
          rank_, ", passed ", DataTypeString(t.dtype()), t.shape().DebugString(),
          "; element counts range over [", -extremes[6], ", ", extremes[2], "])"));
    }
  }
  return absl::OkStatus();
}

absl::Status Cluster::AllReduceSum(Tensor* t) {
  TW_ASSIGN_OR_RETURN(MPI_Datatype type, MpiType(t->dtype(), "AllReduceSum"));
  if (!uses_mpi_) return absl::OkStatus();
  absl::MutexLock lock(&mu_);
  TW_RETURN_IF_ERROR(CheckAgreement("AllReduceSum", *t));
  // MPI counts are ints: large tensors go in chunks.
  constexpr int64_t kChunk = int64_t{1} << 30;
  char* data = static_cast<char*>(t->raw_data());
  const size_t element = TensorElementSize(t->dtype());
  for (int64_t done = 0; done < t->NumElements(); done += kChunk) {
    const int count = static_cast<int>(std::min(kChunk, t->NumElements() - done));
    TW_MPI_RETURN_IF_ERROR(
        MPI_Allreduce(MPI_IN_PLACE, data + done * element, count, type, MPI_SUM, MPI_COMM_WORLD));
    collectives_.fetch_add(1, std::memory_order_relaxed);
  }
  return absl::OkStatus();
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
  TW_RETURN_IF_ERROR(CheckAgreement("Broadcast", *t));
  constexpr int64_t kChunk = int64_t{1} << 30;
  char* data = static_cast<char*>(t->raw_data());
  const int64_t bytes = static_cast<int64_t>(t->TotalBytes());
  for (int64_t done = 0; done < bytes; done += kChunk) {
    const int count = static_cast<int>(std::min(kChunk, bytes - done));
    TW_MPI_RETURN_IF_ERROR(MPI_Bcast(data + done, count, MPI_BYTE, root, MPI_COMM_WORLD));
    collectives_.fetch_add(1, std::memory_order_relaxed);
  }
  return absl::OkStatus();
}

absl::Status Cluster::Barrier() {
  if (!uses_mpi_) return absl::OkStatus();
  absl::MutexLock lock(&mu_);
  TW_MPI_RETURN_IF_ERROR(MPI_Barrier(MPI_COMM_WORLD));
  return absl::OkStatus();
}

}  // namespace distribute
}  // namespace towerflow
