// TF's staging areas on the CPU: Stage/Unstage (StagingArea, a sequence of
// tuples) and the MapStage/OrderedMapStage families (MapStagingArea, tuples
// by int64 key, staged a few components at a time if need be). A step
// stages the next step's input while it computes (tf_cnn_benchmarks, the
// multi-GPU input pipelines).
//
// An area lives in the device's ResourceMgr under the ops' (container,
// shared_name), the node name when shared_name is empty; the first op to
// run makes it with its capacity (elements), memory_limit (bytes of the
// staged tensors) and dtypes. A stage waits while the area is full and a
// take until its element is there; waits hold no thread and end when the
// step is aborted (kernels/cpu/resource_waits.h). Where TF's kernels lose
// data or block forever on a bad request, these refuse it before waiting:
// a negative peek index, indices out of order or out of range, components
// of the wrong dtype, a key staged twice, an element over the memory limit.
// Accounting is exact: a peek leaves the byte count alone (TF's lowers it).
#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/resource_mgr.h"
#include "kernels/cpu/resource_waits.h"
#include "kernels/variable_util.h"

namespace towerflow {
namespace {

using Tuple = std::vector<Tensor>;

// A sequence (Stage) or a map by key (MapStage and OrderedMapStage: both
// keep their elements ordered by key, which serves MapUnstageNoKey's "any
// key" and OrderedMapUnstageNoKey's smallest alike).
enum class AreaKind { kSequence, kMap };

// What a take asks for.
struct TakeRequest {
  enum Form {
    kFront,     // Unstage: remove the first tuple
    kPeekAt,    // StagePeek: copy tuple `position`
    kKey,       // MapUnstage: remove components `indices` of element `key`
    kPeekKey,   // MapPeek: copy them
    kFirstKey,  // MapUnstageNoKey: remove them from the first complete element
  };
  Form form = kFront;
  int64_t position = 0;
  int64_t key = 0;
  std::vector<int32_t> indices;
  DataTypeVector types;  // of the sequence's tuple
};

struct TakeResult {
  int64_t key = 0;
  Tuple values;
};

int64_t TupleBytes(const Tuple& t) {
  int64_t bytes = 0;
  for (const Tensor& c : t) bytes += static_cast<int64_t>(c.TotalBytes());
  return bytes;
}

class StagingArea : public ResourceBase {
 public:
  StagingArea(AreaKind kind, DataTypeVector dtypes, int64_t capacity, int64_t memory_limit,
              std::string name)
      : kind_(kind),
        dtypes_(std::move(dtypes)),
        capacity_(capacity),
        memory_limit_(memory_limit),
        name_(std::move(name)) {}

  std::string DebugString() const override { return absl::StrCat("staging area '", name_, "'"); }
  AreaKind kind() const { return kind_; }

  // InvalidArgument unless `indices` (strictly increasing, each below the
  // number of dtypes) name components of dtypes `types` (the map forms; the
  // sequence form takes whole tuples of its dtypes, unchecked when the area
  // was made without them).
  absl::Status CheckComponents(int64_t key, const std::vector<int32_t>& indices,
                               const DataTypeVector& types) const {
    if (kind_ == AreaKind::kSequence) {
      if (!dtypes_.empty() && types != dtypes_) {
        return absl::InvalidArgumentError(absl::StrCat(DebugString(), " holds tuples of (",
                                                       DataTypes(dtypes_), "), not (",
                                                       DataTypes(types), ")"));
      }
      return absl::OkStatus();
    }
    if (indices.size() != types.size()) {
      return absl::InvalidArgumentError(absl::StrCat(DebugString(), ": ", indices.size(),
                                                     " indices for ", types.size(), " values"));
    }
    for (size_t i = 0; i < indices.size(); ++i) {
      if (i > 0 && indices[i] <= indices[i - 1]) {
        return absl::InvalidArgumentError(absl::StrCat(
            DebugString(), ": indices are not strictly ordered: ", absl::StrJoin(indices, ", ")));
      }
      if (indices[i] < 0 || static_cast<size_t>(indices[i]) >= dtypes_.size()) {
        return absl::InvalidArgumentError(absl::StrCat("Index '", indices[i], "' for key '", key,
                                                       "' was out of bounds '", dtypes_.size(),
                                                       "'."));
      }
      if (types[i] != dtypes_[indices[i]]) {
        return absl::InvalidArgumentError(absl::StrCat(DebugString(), ": component ", indices[i],
                                                       " is ", DataTypeString(dtypes_[indices[i]]),
                                                       ", not ", DataTypeString(types[i])));
      }
    }
    return absl::OkStatus();
  }

  // Stages `values` (components `indices` of element `key` in the map
  // forms) once there is room: memory for their bytes and, for a whole
  // tuple, a free place under the capacity.
  void Put(int64_t id, int64_t key, std::vector<int32_t> indices, Tuple values,
           WaitDone<bool> done) {
    const int64_t bytes = TupleBytes(values);
    if (memory_limit_ > 0 && bytes > memory_limit_) {
      return done(absl::ResourceExhaustedError(absl::StrCat(
                      "Attempted to insert tensors with combined size of '", bytes,
                      "' bytes into Staging Area with a memory limit of '", memory_limit_, "'.")),
                  false);
    }
    const bool whole = kind_ == AreaKind::kSequence || indices.size() == dtypes_.size();
    std::vector<std::function<void()>> to_run;
    {
      absl::MutexLock lock(&mu_);
      if (puts_.WasCancelled(id)) {
        to_run.push_back([done] { done(absl::CancelledError("stage cancelled"), false); });
      } else {
        puts_.Add(id, {key, std::move(indices), std::move(values), bytes, whole, std::move(done)});
        FlushLocked(&to_run);
      }
    }
    for (auto& fn : to_run) fn();
  }

  void Take(int64_t id, TakeRequest request, WaitDone<TakeResult> done) {
    std::vector<std::function<void()>> to_run;
    {
      absl::MutexLock lock(&mu_);
      if (takes_.WasCancelled(id)) {
        to_run.push_back([done] { done(absl::CancelledError("unstage cancelled"), {}); });
      } else {
        takes_.Add(id, {std::move(request), std::move(done)});
        FlushLocked(&to_run);
      }
    }
    for (auto& fn : to_run) fn();
  }

  void CancelPut(int64_t id, const absl::Status& status) {
    PendingPut put;
    bool got;
    {
      absl::MutexLock lock(&mu_);
      got = puts_.Take(id, &put);
    }
    if (got) put.done(status, false);
  }
  void CancelTake(int64_t id, const absl::Status& status) {
    PendingTake take;
    bool got;
    {
      absl::MutexLock lock(&mu_);
      got = takes_.Take(id, &take);
    }
    if (got) take.done(status, {});
  }

  // Whole tuples (the sequence's, the map's complete elements).
  int64_t Size() {
    absl::MutexLock lock(&mu_);
    return CountLocked();
  }
  int64_t IncompleteSize() {
    absl::MutexLock lock(&mu_);
    return static_cast<int64_t>(incomplete_.size());
  }

  void Clear() {
    std::vector<std::function<void()>> to_run;
    {
      absl::MutexLock lock(&mu_);
      sequence_.clear();
      complete_.clear();
      incomplete_.clear();
      bytes_ = 0;
      FlushLocked(&to_run);
    }
    for (auto& fn : to_run) fn();
  }

 private:
  using Components = std::vector<std::optional<Tensor>>;

  struct PendingPut {
    int64_t key = 0;
    std::vector<int32_t> indices;
    Tuple values;
    int64_t bytes = 0;
    bool whole = false;
    WaitDone<bool> done;
  };
  struct PendingTake {
    TakeRequest request;
    WaitDone<TakeResult> done;
  };

  static std::string DataTypes(const DataTypeVector& types) {
    return absl::StrJoin(
        types, ", ", [](std::string* out, DataType t) { absl::StrAppend(out, DataTypeString(t)); });
  }

  int64_t CountLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return kind_ == AreaKind::kSequence ? static_cast<int64_t>(sequence_.size())
                                        : static_cast<int64_t>(complete_.size());
  }

  bool FitsLocked(const PendingPut& put) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (memory_limit_ > 0 && bytes_ + put.bytes > memory_limit_) return false;
    return !put.whole || capacity_ == 0 || CountLocked() < capacity_;
  }

  // Stores an admitted put; an error leaves the area as it was.
  absl::Status StoreLocked(PendingPut& put) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (kind_ == AreaKind::kSequence) {
      sequence_.push_back(std::move(put.values));
      bytes_ += put.bytes;
      return absl::OkStatus();
    }
    if (complete_.count(put.key) > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(DebugString(), ": key '", put.key, "' is already staged"));
    }
    auto it = incomplete_.find(put.key);
    if (it == incomplete_.end()) {
      it = incomplete_.emplace(put.key, Components(dtypes_.size())).first;
    } else {
      for (int32_t index : put.indices) {
        if (it->second[index].has_value()) {
          return absl::InvalidArgumentError(absl::StrCat("The tensor for index '", index,
                                                         "' for key '", put.key,
                                                         "' was already initialized."));
        }
      }
    }
    for (size_t i = 0; i < put.indices.size(); ++i) {
      it->second[put.indices[i]] = std::move(put.values[i]);
    }
    bytes_ += put.bytes;
    if (std::all_of(it->second.begin(), it->second.end(),
                    [](const std::optional<Tensor>& c) { return c.has_value(); })) {
      complete_.emplace(put.key, std::move(it->second));
      incomplete_.erase(it);
    }
    return absl::OkStatus();
  }

  // The result of `request` if it can be served now (an error if it never
  // can be), nullopt to wait.
  std::optional<absl::StatusOr<TakeResult>> ServeLocked(const TakeRequest& request)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    TakeResult result;
    switch (request.form) {
      case TakeRequest::kFront:
      case TakeRequest::kPeekAt: {
        const int64_t position = request.form == TakeRequest::kFront ? 0 : request.position;
        if (position >= static_cast<int64_t>(sequence_.size())) return std::nullopt;
        // Only an area made by StageSize or StageClear has no dtypes to
        // check a take against; a tuple that is not the take's stays.
        DataTypeVector types;
        for (const Tensor& t : sequence_[position]) types.push_back(t.dtype());
        if (types != request.types) {
          return absl::StatusOr<TakeResult>(absl::InvalidArgumentError(
              absl::StrCat("Mismatch stage/unstage: the tuple staged is (", DataTypes(types),
                           "), the op takes (", DataTypes(request.types), ")")));
        }
        if (request.form == TakeRequest::kPeekAt) {
          result.values = sequence_[position];
          return result;
        }
        result.values = std::move(sequence_.front());
        sequence_.pop_front();
        bytes_ -= TupleBytes(result.values);
        return result;
      }
      case TakeRequest::kKey:
      case TakeRequest::kPeekKey:
      case TakeRequest::kFirstKey: {
        auto it = request.form == TakeRequest::kFirstKey ? complete_.begin()
                                                         : complete_.find(request.key);
        if (it == complete_.end()) return std::nullopt;
        result.key = it->first;
        for (int32_t index : request.indices) {
          if (!it->second[index].has_value()) {
            return absl::StatusOr<TakeResult>(
                absl::InvalidArgumentError(absl::StrCat("Tensor at index '", index, "' for key '",
                                                        it->first, "' has already been removed.")));
          }
        }
        for (int32_t index : request.indices) result.values.push_back(*it->second[index]);
        if (request.form == TakeRequest::kPeekKey) return result;
        for (int32_t index : request.indices) it->second[index].reset();
        bytes_ -= TupleBytes(result.values);
        if (std::none_of(it->second.begin(), it->second.end(),
                         [](const std::optional<Tensor>& c) { return c.has_value(); })) {
          complete_.erase(it);
        }
        return result;
      }
    }
    return std::nullopt;
  }

  // Serves the takes that can go on and admits the puts that fit, each in
  // order of arrival, until neither moves; what to call after the lock goes
  // into `to_run`.
  void FlushLocked(std::vector<std::function<void()>>* to_run) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (bool progress = true; progress;) {
      progress = false;
      auto& takes = takes_.all();
      for (auto it = takes.begin(); it != takes.end();) {
        std::optional<absl::StatusOr<TakeResult>> served = ServeLocked(it->second.request);
        if (!served.has_value()) {
          ++it;
          continue;
        }
        absl::Status status = served->status();
        TakeResult result = served->ok() ? *std::move(*served) : TakeResult();
        to_run->push_back([done = std::move(it->second.done), status, result = std::move(result)] {
          done(status, result);
        });
        it = takes.erase(it);
        progress = true;
      }
      auto& puts = puts_.all();
      for (auto it = puts.begin(); it != puts.end();) {
        if (!FitsLocked(it->second)) {
          ++it;
          continue;
        }
        absl::Status status = StoreLocked(it->second);
        to_run->push_back([done = std::move(it->second.done), status] { done(status, true); });
        it = puts.erase(it);
        progress = true;
      }
    }
  }

  const AreaKind kind_;
  const DataTypeVector dtypes_;
  const int64_t capacity_;      // whole tuples; 0: no limit
  const int64_t memory_limit_;  // bytes; 0: no limit
  const std::string name_;
  absl::Mutex mu_;
  std::deque<Tuple> sequence_ ABSL_GUARDED_BY(mu_);
  // std::map for both map forms: MapUnstageNoKey may take any element, and
  // takes the smallest key, as the ordered form must.
  std::map<int64_t, Components> complete_ ABSL_GUARDED_BY(mu_);
  std::map<int64_t, Components> incomplete_ ABSL_GUARDED_BY(mu_);
  int64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  Waits<PendingPut> puts_ ABSL_GUARDED_BY(mu_);
  Waits<PendingTake> takes_ ABSL_GUARDED_BY(mu_);
};

// What every staging op shares: its area, made on first use from the op's
// attrs.
class StagingOpBase {
 protected:
  explicit StagingOpBase(AreaKind kind) : kind_(kind) {}
  absl::Status InitArea(const KernelConstruction& c) {
    TW_RETURN_IF_ERROR(c.GetAttr("capacity", &capacity_));
    TW_RETURN_IF_ERROR(c.GetAttr("memory_limit", &memory_limit_));
    TW_RETURN_IF_ERROR(c.GetAttr("dtypes", &dtypes_));
    return ResourceName(c, &container_, &name_);
  }
  absl::StatusOr<std::shared_ptr<StagingArea>> Area(KernelContext* ctx) const {
    TW_ASSIGN_OR_RETURN(
        std::shared_ptr<StagingArea> area,
        ctx->resource_manager()->LookupOrCreate<StagingArea>(
            container_, name_, [&]() -> absl::StatusOr<std::shared_ptr<StagingArea>> {
              return std::make_shared<StagingArea>(kind_, dtypes_, capacity_, memory_limit_, name_);
            }));
    if (area->kind() != kind_) {
      return absl::InvalidArgumentError(absl::StrCat(ctx->name(), ": ", area->DebugString(), " is ",
                                                     area->kind() == AreaKind::kSequence
                                                         ? "a Stage area, not a map"
                                                         : "a map, not a Stage area"));
    }
    return area;
  }
  AreaKind kind() const { return kind_; }
  const DataTypeVector& dtypes() const { return dtypes_; }

 private:
  const AreaKind kind_;
  int64_t capacity_ = 0;
  int64_t memory_limit_ = 0;
  DataTypeVector dtypes_;
  std::string container_, name_;
};

// The int32 indices in input `input`, all of them.
std::vector<int32_t> Indices(const Tensor& t) {
  return std::vector<int32_t>(t.data<int32_t>(), t.data<int32_t>() + t.NumElements());
}

// Stage, MapStage, OrderedMapStage.
class StageOp : public AsyncOpKernel, StagingOpBase {
 public:
  explicit StageOp(AreaKind kind) : StagingOpBase(kind) {}
  absl::Status Init(const KernelConstruction& c) override { return InitArea(c); }
  void ComputeAsync(KernelContext* ctx, DoneCallback done) override {
    absl::StatusOr<std::shared_ptr<StagingArea>> area = Area(ctx);
    if (!area.ok()) return done(area.status());
    const bool map = kind() == AreaKind::kMap;
    int64_t key = 0;
    std::vector<int32_t> indices;
    if (map) {
      absl::StatusOr<int64_t> k = ScalarInput(ctx, 0, DT_INT64, "key");
      if (!k.ok()) return done(k.status());
      key = *k;
      indices = Indices(ctx->input(1));
    }
    Tuple values;
    DataTypeVector types;
    for (int i = map ? 2 : 0; i < ctx->num_inputs(); ++i) {
      values.push_back(ctx->input(i));
      types.push_back(ctx->input(i).dtype());
    }
    std::shared_ptr<StagingArea> a = *area;
    if (absl::Status s = a->CheckComponents(key, indices, types); !s.ok()) return done(s);
    StartCancellableWait(
        ctx, [a](int64_t id, const absl::Status& s) { a->CancelPut(id, s); }, std::move(done),
        [a, key, indices = std::move(indices), values = std::move(values)](
            int64_t id, DoneCallback done) mutable {
          a->Put(id, key, std::move(indices), std::move(values),
                 [done](absl::Status s, bool) { done(s); });
        });
  }
};

// Unstage, StagePeek and the map forms' MapUnstage, MapPeek and
// MapUnstageNoKey.
class TakeOp : public AsyncOpKernel, StagingOpBase {
 public:
  TakeOp(AreaKind kind, TakeRequest::Form form) : StagingOpBase(kind), form_(form) {}
  absl::Status Init(const KernelConstruction& c) override { return InitArea(c); }
  void ComputeAsync(KernelContext* ctx, DoneCallback done) override {
    absl::StatusOr<std::shared_ptr<StagingArea>> area = Area(ctx);
    if (!area.ok()) return done(area.status());
    TakeRequest request;
    request.form = form_;
    request.types = dtypes();
    switch (form_) {
      case TakeRequest::kFront:
        break;
      case TakeRequest::kPeekAt: {
        absl::StatusOr<int64_t> index = ScalarInput(ctx, 0, DT_INT32, "index");
        if (!index.ok()) return done(index.status());
        if (*index < 0) {
          return done(absl::InvalidArgumentError(
              absl::StrCat(ctx->name(), ": index must be >= 0, not ", *index)));
        }
        request.position = *index;
        break;
      }
      case TakeRequest::kKey:
      case TakeRequest::kPeekKey: {
        absl::StatusOr<int64_t> key = ScalarInput(ctx, 0, DT_INT64, "key");
        if (!key.ok()) return done(key.status());
        request.key = *key;
        request.indices = Indices(ctx->input(1));
        break;
      }
      case TakeRequest::kFirstKey:
        request.indices = Indices(ctx->input(0));
        break;
    }
    std::shared_ptr<StagingArea> a = *area;
    if (absl::Status s = a->CheckComponents(request.key, request.indices, dtypes()); !s.ok()) {
      return done(s);
    }
    const int first = form_ == TakeRequest::kFirstKey ? 1 : 0;
    StartCancellableWait(
        ctx, [a](int64_t id, const absl::Status& s) { a->CancelTake(id, s); }, std::move(done),
        [a, ctx, first, request = std::move(request)](int64_t id, DoneCallback done) mutable {
          a->Take(id, std::move(request), [ctx, first, done](absl::Status s, TakeResult r) {
            if (s.ok() && first == 1) {
              Tensor key(DT_INT64, TensorShape());
              key.flat<int64_t>()(0) = r.key;
              s = ctx->set_output(0, key);
            }
            for (size_t i = 0; s.ok() && i < r.values.size(); ++i) {
              s = ctx->set_output(first + static_cast<int>(i), std::move(r.values[i]));
            }
            done(s);
          });
        });
  }

 private:
  const TakeRequest::Form form_;
};

// StageSize, MapSize, MapIncompleteSize (and the ordered forms).
class SizeOp : public OpKernel, StagingOpBase {
 public:
  SizeOp(AreaKind kind, bool incomplete) : StagingOpBase(kind), incomplete_(incomplete) {}
  bool IsExpensive() const override { return false; }
  absl::Status Init(const KernelConstruction& c) override { return InitArea(c); }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::shared_ptr<StagingArea> area, Area(ctx));
    Tensor size(DT_INT32, TensorShape());
    size.flat<int32_t>()(0) =
        static_cast<int32_t>(incomplete_ ? area->IncompleteSize() : area->Size());
    return ctx->set_output(0, size);
  }

 private:
  const bool incomplete_;
};

// StageClear, MapClear, OrderedMapClear.
class ClearOp : public OpKernel, StagingOpBase {
 public:
  explicit ClearOp(AreaKind kind) : StagingOpBase(kind) {}
  bool IsExpensive() const override { return false; }
  absl::Status Init(const KernelConstruction& c) override { return InitArea(c); }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::shared_ptr<StagingArea> area, Area(ctx));
    area->Clear();
    return absl::OkStatus();
  }
};

TW_REGISTER_KERNELS(stage_ops) {
  const auto cpu = [](const std::string& op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  const auto kind = AreaKind::kSequence;
  RegisterKernel(cpu("Stage"), [kind] { return std::make_unique<StageOp>(kind); });
  RegisterKernel(cpu("Unstage"),
                 [kind] { return std::make_unique<TakeOp>(kind, TakeRequest::kFront); });
  RegisterKernel(cpu("StagePeek"),
                 [kind] { return std::make_unique<TakeOp>(kind, TakeRequest::kPeekAt); });
  RegisterKernel(cpu("StageSize"), [kind] { return std::make_unique<SizeOp>(kind, false); });
  RegisterKernel(cpu("StageClear"), [kind] { return std::make_unique<ClearOp>(kind); });
  for (const std::string p : {"", "Ordered"}) {
    const AreaKind k = AreaKind::kMap;
    RegisterKernel(cpu(p + "MapStage"), [k] { return std::make_unique<StageOp>(k); });
    RegisterKernel(cpu(p + "MapUnstage"),
                   [k] { return std::make_unique<TakeOp>(k, TakeRequest::kKey); });
    RegisterKernel(cpu(p + "MapPeek"),
                   [k] { return std::make_unique<TakeOp>(k, TakeRequest::kPeekKey); });
    RegisterKernel(cpu(p + "MapUnstageNoKey"),
                   [k] { return std::make_unique<TakeOp>(k, TakeRequest::kFirstKey); });
    RegisterKernel(cpu(p + "MapSize"), [k] { return std::make_unique<SizeOp>(k, false); });
    RegisterKernel(cpu(p + "MapIncompleteSize"), [k] { return std::make_unique<SizeOp>(k, true); });
    RegisterKernel(cpu(p + "MapClear"), [k] { return std::make_unique<ClearOp>(k); });
  }
}

}  // namespace
}  // namespace towerflow
