#include "runtime/testing/stream_device.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "core/philox.h"
#include "core/status_macros.h"
#include "framework/block_cache.h"
#include "framework/device.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/step_capture.h"
#include "kernels/basic_ops.h"
#include "kernels/random_op_base.h"
#include "kernels/variable_ops.h"
#include "kernels/variable_util.h"

namespace towerflow {
namespace testing {
namespace {

absl::Mutex counts_mu;
StreamDeviceCounts counts ABSL_GUARDED_BY(counts_mu);

void Count(int64_t StreamDeviceCounts::*field, int64_t n = 1) {
  absl::MutexLock lock(&counts_mu);
  counts.*field += n;
}

using Work = std::function<void()>;

// The device's one stream: work runs in the order it was enqueued, when the
// host waits for it. While recording, work is kept instead, and a wait or a
// host callback breaks the recording, as under CUDA's stream capture.
class Stream {
 public:
  void Enqueue(Work work) {
    absl::MutexLock lock(&mu_);
    (recording_ ? recorded_ : pending_).push_back(std::move(work));
  }

  // Runs everything enqueued so far. FailedPrecondition while recording.
  absl::Status Wait(const std::string& what) {
    absl::MutexLock run(&run_mu_);  // one runner at a time keeps the order
    std::vector<Work> work;
    {
      absl::MutexLock lock(&mu_);
      if (recording_) {
        broken_ = absl::FailedPreconditionError(
            absl::StrCat(what, " waits for the device while its work is being recorded"));
        return broken_;
      }
      work.swap(pending_);
    }
    Count(&StreamDeviceCounts::waits);
    for (Work& w : work) w();
    Count(&StreamDeviceCounts::closures_run, static_cast<int64_t>(work.size()));
    return absl::OkStatus();
  }

  absl::Status BeginRecording() {
    absl::MutexLock lock(&mu_);
    if (recording_) return absl::FailedPreconditionError("the device is already recording");
    recording_ = true;
    broken_ = absl::OkStatus();
    recorded_.clear();
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<Work>> EndRecording() {
    absl::MutexLock lock(&mu_);
    recording_ = false;
    std::vector<Work> work = std::move(recorded_);
    recorded_.clear();
    if (!broken_.ok()) return broken_;
    return work;
  }
  bool recording() const {
    absl::MutexLock lock(&mu_);
    return recording_;
  }

 private:
  absl::Mutex run_mu_;
  mutable absl::Mutex mu_;
  std::vector<Work> pending_ ABSL_GUARDED_BY(mu_);
  bool recording_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<Work> recorded_ ABSL_GUARDED_BY(mu_);
  absl::Status broken_ ABSL_GUARDED_BY(mu_);
};

// Device memory: host memory handed out in stream order by a BlockCache.
class StreamAllocator final : public Allocator {
 public:
  StreamAllocator()
      : cache_({[](size_t n) {
                  Count(&StreamDeviceCounts::backend_allocations);
                  return std::aligned_alloc(kTensorAlignment, n);  // n: a multiple of 512
                },
                [](void* p) { std::free(p); }}) {}
  std::string Name() const override { return "stream"; }
  void* AllocateRaw(size_t alignment, size_t num_bytes) override {
    if (alignment > kTensorAlignment) return nullptr;
    return cache_.Allocate(num_bytes);
  }
  void DeallocateRaw(void* ptr) override { cache_.Deallocate(ptr); }
  BlockCache& cache() { return cache_; }

 private:
  BlockCache cache_;
};

// Made before Device (which borrows the allocator), destroyed after it.
struct AllocatorOwner {
  StreamAllocator memory;
};

class StreamDevice;

class RecordedWork final : public CapturedWork {
 public:
  RecordedWork(std::vector<Work> work, BlockCache::PoolId pool, Stream* stream, BlockCache* cache)
      : work_(std::move(work)), pool_(pool), stream_(stream), cache_(cache) {}
  ~RecordedWork() override { cache_->ReleasePool(pool_); }
  absl::Status Launch() override {
    for (const Work& w : work_) stream_->Enqueue(w);
    Count(&StreamDeviceCounts::launches);
    return absl::OkStatus();
  }
  int64_t num_operations() const override { return static_cast<int64_t>(work_.size()); }
  int64_t reserved_bytes() const override { return cache_->PoolBytes(pool_); }

 private:
  const std::vector<Work> work_;
  const BlockCache::PoolId pool_;
  Stream* const stream_;
  BlockCache* const cache_;
};

class StreamDevice final : private AllocatorOwner, public Device, public StepCapture {
 public:
  StreamDevice(const std::string& task, int index, ThreadPool* pool)
      : Device(DeviceName(task, kStreamDevice, index), kStreamDevice, &memory, pool) {}
  ~StreamDevice() override { stream_.Wait("the device's destruction").IgnoreError(); }

  bool has_device_memory() const override { return true; }
  bool kernels_only_enqueue() const override { return true; }
  StepCapture* step_capture() override { return this; }
  Stream& stream() { return stream_; }

  absl::StatusOr<Tensor> CopyToHost(const Tensor& t) override {
    TW_RETURN_IF_ERROR(stream_.Wait("a copy to the host"));
    return t.DeepCopy(CpuAllocator());
  }
  absl::StatusOr<Tensor> CopyFromHost(const Tensor& host) override {
    TW_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(allocator(), host.dtype(), host.shape()));
    EnqueueCopy(host, out);
    return out;
  }
  absl::StatusOr<Tensor> CopyToDevice(const Tensor& t, Device* dst) override {
    auto* other = dynamic_cast<StreamDevice*>(dst);
    if (other == nullptr) return absl::InvalidArgumentError("CopyToDevice to another device type");
    TW_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(dst->allocator(), t.dtype(), t.shape()));
    if (other == this) {
      void* to = out.raw_data();
      const void* from = t.raw_data();
      const size_t bytes = t.TotalBytes();
      stream_.Enqueue([to, from, bytes] { std::memcpy(to, from, bytes); });
      return out;
    }
    TW_ASSIGN_OR_RETURN(Tensor host, CopyToHost(t));
    other->EnqueueCopy(host, out);
    return out;
  }

  // StepCapture.
  absl::StatusOr<Tensor> AllocateHostSlot(DataType dtype, const TensorShape& shape) override {
    return Tensor::Allocate(CpuAllocator(), dtype, shape);
  }
  absl::Status BeginCapture(absl::Span<const Tensor> host_slots) override {
    TW_RETURN_IF_ERROR(stream_.BeginRecording());
    pool_ = memory.cache().BeginPool();
    absl::MutexLock lock(&slots_mu_);
    host_slots_.assign(host_slots.begin(), host_slots.end());
    return absl::OkStatus();
  }
  absl::StatusOr<std::unique_ptr<CapturedWork>> EndCapture() override {
    memory.cache().EndPool();
    {
      absl::MutexLock lock(&slots_mu_);
      host_slots_.clear();
    }
    absl::StatusOr<std::vector<Work>> work = stream_.EndRecording();
    if (!work.ok()) {
      memory.cache().ReleasePool(pool_);
      return work.status();
    }
    return std::unique_ptr<CapturedWork>(
        new RecordedWork(*std::move(work), pool_, &stream_, &memory.cache()));
  }
  bool capturing() const override { return stream_.recording(); }
  absl::Status CopyIntoDevice(const Tensor& host, Tensor* device) override {
    if (host.dtype() != device->dtype() || host.TotalBytes() != device->TotalBytes()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "CopyIntoDevice of a ", DataTypeString(host.dtype()), host.shape().DebugString(),
          " into a ", DataTypeString(device->dtype()), device->shape().DebugString()));
    }
    EnqueueCopy(host, *device);
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<Tensor>> CopyAllToHost(absl::Span<const Tensor> tensors) override {
    TW_RETURN_IF_ERROR(stream_.Wait("CopyAllToHost"));
    std::vector<Tensor> out;
    for (const Tensor& t : tensors) {
      TW_ASSIGN_OR_RETURN(Tensor host, t.DeepCopy(CpuAllocator()));
      out.push_back(std::move(host));
    }
    return out;
  }

  // A host-memory input of a kernel into `device`, as GpuDevice's
  // CopyHostBytes: from a recording's host slot, the slot's bytes when the
  // work runs; else the bytes as they are now.
  absl::Status CopyHostBytes(const Tensor& host, Tensor* device) {
    if (host.TotalBytes() != device->TotalBytes()) {
      return absl::InvalidArgumentError("CopyHostBytes of tensors of different sizes");
    }
    if (stream_.recording() && InHostSlot(host)) {
      void* to = device->raw_data();
      const void* from = host.raw_data();
      const size_t bytes = host.TotalBytes();
      stream_.Enqueue([to, from, bytes] { std::memcpy(to, from, bytes); });
      return absl::OkStatus();
    }
    EnqueueCopy(host, *device);
    return absl::OkStatus();
  }

 private:
  // The bytes of `host` as they are now, into `device` in stream order (the
  // staging copy lives with the work, and so with a recording of it).
  void EnqueueCopy(const Tensor& host, const Tensor& device) {
    absl::StatusOr<Tensor> staging = host.DeepCopy(CpuAllocator());
    void* to = device.raw_data();
    const size_t bytes = device.TotalBytes();
    stream_.Enqueue([to, bytes, staging = *std::move(staging)] {
      if (bytes > 0) std::memcpy(to, staging.raw_data(), bytes);
    });
  }

  bool InHostSlot(const Tensor& host) {
    const char* begin = static_cast<const char*>(host.raw_data());
    absl::MutexLock lock(&slots_mu_);
    for (const Tensor& slot : host_slots_) {
      const char* slot_begin = static_cast<const char*>(slot.raw_data());
      if (begin >= slot_begin && begin + host.TotalBytes() <= slot_begin + slot.TotalBytes()) {
        return true;
      }
    }
    return false;
  }

  Stream stream_;
  BlockCache::PoolId pool_ = 0;
  absl::Mutex slots_mu_;
  std::vector<Tensor> host_slots_ ABSL_GUARDED_BY(slots_mu_);
};

class StreamDeviceFactory final : public DeviceFactory {
 public:
  absl::StatusOr<std::vector<std::unique_ptr<Device>>> CreateDevices(int max_count,
                                                                     const std::string& task,
                                                                     ThreadPool* pool) override {
    std::vector<std::unique_ptr<Device>> devices;
    for (int i = 0; i < max_count; ++i)
      devices.push_back(std::make_unique<StreamDevice>(task, i, pool));
    return devices;
  }
  // None unless a session asks (SessionOptions::device_count["STREAM"]).
  int NumPresent() const override { return 0; }
};

Stream& StreamOf(KernelContext* ctx) { return static_cast<StreamDevice*>(ctx->device())->stream(); }

// ---- Kernels. Each checks shapes and allocates on the host, then enqueues
// its arithmetic over raw pointers: the buffers stay valid in stream order.

class MatMulOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("transpose_a", &ta_));
    return c.GetAttr("transpose_b", &tb_);
  }
  // a: [m, k] ([k, m] when transposed), b: [k, n] ([n, k]); out: [m, n].
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    if (a.dims() != 2 || b.dims() != 2) return absl::InvalidArgumentError("MatMul of non-matrices");
    const int64_t m = a.dim_size(ta_ ? 1 : 0), k = a.dim_size(ta_ ? 0 : 1);
    const int64_t n = b.dim_size(tb_ ? 0 : 1);
    if (b.dim_size(tb_ ? 1 : 0) != k)
      return absl::InvalidArgumentError("MatMul: inner dims differ");
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({m, n})));
    const float* pa = a.data<float>();
    const float* pb = b.data<float>();
    float* po = out->data<float>();
    const bool ta = ta_, tb = tb_;
    StreamOf(ctx).Enqueue([=] {
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          float sum = 0;
          for (int64_t p = 0; p < k; ++p) {
            sum += pa[ta ? p * m + i : i * k + p] * pb[tb ? j * k + p : p * n + j];
          }
          po[i * n + j] = sum;
        }
      }
    });
    return absl::OkStatus();
  }

 private:
  bool ta_ = false, tb_ = false;
};

// x op y for equal shapes, a scalar y, or a row y ([m, n] op [n]).
template <typename F>
class BinaryOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    int64_t period = 0;  // y's index is i % period
    if (x.shape() == y.shape()) {
      period = x.NumElements();
    } else if (y.NumElements() == 1) {
      period = 1;
    } else if (x.dims() == 2 && y.dims() == 1 && y.dim_size(0) == x.dim_size(1)) {
      period = y.dim_size(0);
    } else {
      return absl::InvalidArgumentError(absl::StrCat(ctx->op(), " of ", x.shape().DebugString(),
                                                     " and ", y.shape().DebugString()));
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, x.shape()));
    const float* px = x.data<float>();
    const float* py = y.data<float>();
    float* po = out->data<float>();
    const int64_t n = x.NumElements();
    StreamOf(ctx).Enqueue([=] {
      for (int64_t i = 0; i < n; ++i) po[i] = F()(px[i], py[period > 0 ? i % period : 0]);
    });
    return absl::OkStatus();
  }
};

struct AddF {
  float operator()(float a, float b) const { return a + b; }
};
struct SubF {
  float operator()(float a, float b) const { return a - b; }
};
struct MulF {
  float operator()(float a, float b) const { return a * b; }
};
struct ReluGradF {
  float operator()(float g, float x) const { return x > 0 ? g : 0.0f; }
};

template <typename F>
class UnaryOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, x.shape()));
    const float* px = x.data<float>();
    float* po = out->data<float>();
    const int64_t n = x.NumElements();
    StreamOf(ctx).Enqueue([=] {
      for (int64_t i = 0; i < n; ++i) po[i] = F()(px[i]);
    });
    return absl::OkStatus();
  }
};

struct SquareF {
  float operator()(float a) const { return a * a; }
};
struct ReluF {
  float operator()(float a) const { return a > 0 ? a : 0.0f; }
};

// Sum over the axes in host memory, of a tensor of rank <= 4.
class SumOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return c.GetAttr("keep_dims", &keep_); }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& axes = ctx->input(1);
    if (x.dims() > 4) return absl::UnimplementedError("Sum of rank > 4");
    std::vector<bool> reduced(x.dims(), false);
    for (int64_t i = 0; i < axes.NumElements(); ++i) {
      int32_t a = axes.data<int32_t>()[i];
      if (a < 0) a += x.dims();
      if (a < 0 || a >= x.dims()) return absl::InvalidArgumentError("Sum: axis out of range");
      reduced[a] = true;
    }
    std::vector<int64_t> dims(4, 1), kept(4, 1);
    TensorShape out_shape;
    for (int d = 0; d < x.dims(); ++d) {
      dims[4 - x.dims() + d] = x.dim_size(d);
      kept[4 - x.dims() + d] = reduced[d] ? 1 : x.dim_size(d);
      if (!reduced[d]) {
        TW_RETURN_IF_ERROR(out_shape.AddDim(x.dim_size(d)));
      } else if (keep_) {
        TW_RETURN_IF_ERROR(out_shape.AddDim(1));
      }
    }
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
    const float* px = x.data<float>();
    float* po = out->data<float>();
    const int64_t n_out = out->NumElements();
    StreamOf(ctx).Enqueue([=] {
      for (int64_t i = 0; i < n_out; ++i) po[i] = 0;
      int64_t i = 0;
      for (int64_t a = 0; a < dims[0]; ++a)
        for (int64_t b = 0; b < dims[1]; ++b)
          for (int64_t c = 0; c < dims[2]; ++c)
            for (int64_t d = 0; d < dims[3]; ++d, ++i) {
              const int64_t o =
                  (((kept[0] == 1 ? 0 : a) * kept[1] + (kept[1] == 1 ? 0 : b)) * kept[2] +
                   (kept[2] == 1 ? 0 : c)) *
                      kept[3] +
                  (kept[3] == 1 ? 0 : d);
              po[o] += px[i];
            }
    });
    return absl::OkStatus();
  }

 private:
  bool keep_ = false;
};

// Reshape: the same buffer under the shape in host memory (int32 or int64,
// one -1 allowed).
class ReshapeOp : public OpKernel {
 public:
  bool IsExpensive() const override { return false; }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& dims = ctx->input(1);
    int64_t known = 1, unknown = -1;
    std::vector<int64_t> shape;
    for (int64_t i = 0; i < dims.NumElements(); ++i) {
      const int64_t d =
          dims.dtype() == DT_INT64 ? dims.data<int64_t>()[i] : dims.data<int32_t>()[i];
      if (d == -1)
        unknown = i;
      else
        known *= d;
      shape.push_back(d);
    }
    if (unknown >= 0 && known > 0) shape[unknown] = x.NumElements() / known;
    TW_ASSIGN_OR_RETURN(TensorShape s, TensorShape::FromDims(shape));
    TW_ASSIGN_OR_RETURN(Tensor out, x.Reshaped(s));
    return ctx->set_output(0, std::move(out));
  }
};

// Shape: computed on the host from the input's shape (host output).
class ShapeOp : public OpKernel {
 public:
  bool IsExpensive() const override { return false; }
  absl::Status Compute(KernelContext* ctx) override {
    const TensorShape& s = ctx->input(0).shape();
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({s.dims()})));
    for (int d = 0; d < s.dims(); ++d)
      out->data<int32_t>()[d] = static_cast<int32_t>(s.dim_size(d));
    return absl::OkStatus();
  }
};

// RandomUniform with its place in the stream in device memory: the enqueued
// work reads the blocks used so far there and advances them, so a
// recording of it draws new numbers every replay, continuing the eager
// steps' stream (the GPU kernel's scheme, TF's numbers as the CPU's).
class RandomUniformOp : public RandomOpBase {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(RandomOpBase::Init(c));
    auto* device = static_cast<StreamDevice*>(c.device());
    TW_ASSIGN_OR_RETURN(counter_, Tensor::Allocate(device->allocator(), DT_INT64, TensorShape()));
    uint64_t* counter = static_cast<uint64_t*>(counter_.raw_data());
    device->stream().Enqueue([counter] { *counter = 0; });
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    std::vector<int64_t> dims;
    const Tensor& shape = ctx->input(0);
    for (int64_t i = 0; i < shape.NumElements(); ++i) dims.push_back(shape.data<int32_t>()[i]);
    TW_ASSIGN_OR_RETURN(TensorShape s, TensorShape::FromDims(dims));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, s));
    float* po = out->data<float>();
    const int64_t n = out->NumElements();
    uint64_t* counter = static_cast<uint64_t*>(counter_.raw_data());
    const PhiloxStream initial = generator().initial();
    StreamOf(ctx).Enqueue([=] {
      PhiloxStream stream = initial;
      stream.Skip(*counter);
      for (int64_t g = 0; g * 4 < n; ++g) {
        float values[4];
        PhiloxGroup<float>(PhiloxDist::kUniform, stream, static_cast<uint64_t>(g), values);
        for (int64_t k = 0; k < 4 && g * 4 + k < n; ++k) po[g * 4 + k] = values[k];
      }
      *counter += static_cast<uint64_t>(n) * kPhiloxBlocksPerOutput;
    });
    return absl::OkStatus();
  }

 private:
  Tensor counter_;  // [] uint64 in device memory: blocks used so far
};

class GradientDescentOp : public ApplyOpBase<float, 0> {
 public:
  GradientDescentOp() : ApplyOpBase<float, 0>(false, kApplyGradientDescent) {}

 protected:
  // var -= alpha * delta, alpha read on the device.
  absl::Status Update(KernelContext* ctx, const Vars& t, const Tensor& grad) override {
    float* var = t[0]->data<float>();
    const float* alpha = ctx->input(1).data<float>();
    const float* delta = grad.data<float>();
    const int64_t n = grad.NumElements();
    StreamOf(ctx).Enqueue([=] {
      for (int64_t i = 0; i < n; ++i) var[i] -= alpha[0] * delta[i];
    });
    return absl::OkStatus();
  }
};

// int32 Sub in host memory, computed on the host (a GPU's shape arithmetic).
class HostSubOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    if (x.shape() != y.shape()) return absl::InvalidArgumentError("int32 Sub of unequal shapes");
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, x.shape()));
    for (int64_t i = 0; i < x.NumElements(); ++i) {
      out->data<int32_t>()[i] = x.data<int32_t>()[i] - y.data<int32_t>()[i];
    }
    return absl::OkStatus();
  }
};

// Cast of an int32 tensor (host memory, as on a GPU) to float on the
// device: the input is checked on the host (each value exact as a float,
// as a GPU kernel checks its int32 class labels' range), copied over, then
// converted (a copied host input, KernelDef::copied_host_inputs).
class CastToFloatOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    for (int64_t i = 0; i < x.NumElements(); ++i) {
      const int32_t v = x.data<int32_t>()[i];
      if (v > (1 << 24) || v < -(1 << 24)) {
        return absl::InvalidArgumentError(
            absl::StrCat("x[", i, "] = ", v, " is not exact as a float"));
      }
    }
    TW_ASSIGN_OR_RETURN(Tensor on_device, ctx->allocate_temp(DT_INT32, x.shape()));
    TW_RETURN_IF_ERROR(static_cast<StreamDevice*>(ctx->device())->CopyHostBytes(x, &on_device));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, x.shape()));
    const int32_t* px = on_device.data<int32_t>();
    float* po = out->data<float>();
    const int64_t n = x.NumElements();
    StreamOf(ctx).Enqueue([=] {
      for (int64_t i = 0; i < n; ++i) po[i] = static_cast<float>(px[i]);
    });
    return absl::OkStatus();
  }
};

// Where: reads its input back to count the true elements (not capturable).
class WhereOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(Tensor host, ctx->device()->CopyToHost(ctx->input(0)));
    std::vector<int64_t> rows;
    for (int64_t i = 0; i < host.NumElements(); ++i) {
      if (host.data<float>()[i] != 0) rows.push_back(i);
    }
    Tensor indices(DT_INT64, TensorShape({static_cast<int64_t>(rows.size()), 1}));
    for (size_t i = 0; i < rows.size(); ++i) indices.data<int64_t>()[i] = rows[i];
    TW_ASSIGN_OR_RETURN(Tensor out, ctx->device()->CopyFromHost(indices));
    return ctx->set_output(0, std::move(out));
  }
};

// CheckNumerics that reads its input back, though declared capturable: how
// a kernel declared wrongly fails a recording.
class WaitingCheckNumericsOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(Tensor host, ctx->device()->CopyToHost(ctx->input(0)));
    for (int64_t i = 0; i < host.NumElements(); ++i) {
      if (!std::isfinite(host.data<float>()[i])) {
        return absl::InvalidArgumentError("CheckNumerics: not finite");
      }
    }
    return ctx->set_output(0, ctx->input(0));
  }
};

// A variable's value copied into its own buffer, in stream order
// (variable_ops.h, CopyIntoFn).
absl::Status StreamCopyInto(KernelContext* ctx, const Tensor& from, Tensor* to) {
  const void* src = from.raw_data();
  void* dst = to->raw_data();
  const size_t bytes = from.TotalBytes();
  StreamOf(ctx).Enqueue([src, dst, bytes] { std::memcpy(dst, src, bytes); });
  return absl::OkStatus();
}

[[maybe_unused]] const bool registered = [] {
  RegisterDeviceFactory(kStreamDevice, std::make_unique<StreamDeviceFactory>());
  RegisterBasicKernels(kStreamDevice);
  RegisterVariableKernels(kStreamDevice, StreamCopyInto);
  const auto on = [](const char* op) {
    return KernelDefBuilder(op).Device(kStreamDevice).TypeConstraint<float>("T");
  };
  RegisterKernel(on("MatMul").Capturable(), MakeFactory<MatMulOp>());
  RegisterKernel(on("AddV2").Capturable(), MakeFactory<BinaryOp<AddF>>());
  RegisterKernel(on("Sub").Capturable(), MakeFactory<BinaryOp<SubF>>());
  RegisterKernel(on("Mul").Capturable(), MakeFactory<BinaryOp<MulF>>());
  RegisterKernel(on("ReluGrad").Capturable(), MakeFactory<BinaryOp<ReluGradF>>());
  RegisterKernel(on("Square").Capturable(), MakeFactory<UnaryOp<SquareF>>());
  RegisterKernel(on("Relu").Capturable(), MakeFactory<UnaryOp<ReluF>>());
  RegisterKernel(on("Sum").HostMemory("reduction_indices").Capturable(), MakeFactory<SumOp>());
  RegisterKernel(on("Reshape").HostMemory("shape").Capturable(), MakeFactory<ReshapeOp>());
  RegisterKernel(on("Shape").HostMemory("output").Capturable(), MakeFactory<ShapeOp>());
  RegisterKernel(on("ApplyGradientDescent").Capturable(), MakeFactory<GradientDescentOp>());
  RegisterKernel(on("Where"), MakeFactory<WhereOp>());
  RegisterKernel(KernelDefBuilder("Cast")
                     .Device(kStreamDevice)
                     .TypeConstraint<int32_t>("SrcT")
                     .TypeConstraint<float>("DstT")
                     .Capturable()
                     .CopiedHostInput("x"),
                 MakeFactory<CastToFloatOp>());
  RegisterKernel(KernelDefBuilder("Sub")
                     .Device(kStreamDevice)
                     .TypeConstraint<int32_t>("T")
                     .HostMemory("x")
                     .HostMemory("y")
                     .HostMemory("z")
                     .Capturable(),
                 MakeFactory<HostSubOp>());
  RegisterKernel(on("CheckNumerics").Capturable(), MakeFactory<WaitingCheckNumericsOp>());
  RegisterKernel(KernelDefBuilder("RandomUniform")
                     .Device(kStreamDevice)
                     .TypeConstraint<float>("dtype")
                     .HostMemory("shape")
                     .Capturable(),
                 MakeFactory<RandomUniformOp>());
  return true;
}();

}  // namespace

StreamDeviceCounts TakeStreamDeviceCounts() {
  absl::MutexLock lock(&counts_mu);
  StreamDeviceCounts taken = counts;
  counts = StreamDeviceCounts();
  return taken;
}

}  // namespace testing
}  // namespace towerflow
