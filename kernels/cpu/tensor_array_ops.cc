// The TensorArray kernels (TF's TensorArrayV3 family): TensorArrayV3,
// Write, Read, Gather, Scatter, Concat, Split, Size, Close and Grad, with
// TensorFlow's semantics (tensor_array.h):
// - An array holds `size` elements of one dtype; dynamic_size arrays grow
//   on a write past the end. Each element is written once (a gradient
//   array adds later writes into it instead), with a shape compatible with
//   the element shape; with identical_element_shapes (Python's
//   infer_shape) the first write fixes that shape.
// - A read of an unwritten element gives zeros when the element shape is
//   fully known, else an error; with clear_after_read (the default) a read
//   drops the element, and a second read of it is an error.
// - TensorArrayGradV3(handle, source) finds or makes the gradient array of
//   (handle, source): the forward array's size and element shape, writes
//   aggregating. Gradient functions (ops/gradients/tensor_array_grad.cc)
//   write into it what the forward reads gave and read back what the
//   forward writes took.
// The flow tensors carry no data: they order the ops, as in TF (a write's
// flow_out is the scalar 0 whose consumers must wait for the write).
//
// Each run of TensorArrayV3 makes a new array in the step's resource
// container (StepContainerName), dropped when the step ends, as StackV2's
// stacks (kernels/stack_ops.cc). Elements share their producers' buffers
// (a scattered value's rows are slices of it). CPU only: soft placement
// puts a GPU tower's arrays on the CPU.
#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "core/float16.h"
#include "core/status_macros.h"
#include "core/type_dispatch.h"
#include "framework/device.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/resource_handle.h"
#include "framework/resource_mgr.h"
#include "kernels/kernel_util.h"
#include "kernels/variable_util.h"

namespace towerflow {
namespace {

// dst += src elementwise. REQUIRES: equal dtypes and shapes.
absl::Status AddInto(const Tensor& src, Tensor* dst) {
  const bool numeric = VisitNumberType(src.dtype(), [&](auto zero) {
    using T = decltype(zero);
    dst->flat<T>() += src.flat<T>();
  });
  if (!numeric) {
    return absl::UnimplementedError(
        absl::StrCat("TensorArray gradients of ", DataTypeString(src.dtype()), " cannot add"));
  }
  return absl::OkStatus();
}

// InvalidArgument unless `value` (a Scatter's or Split's) is at least a vector.
absl::Status CheckAtLeastVector(const Tensor& value) {
  if (value.dims() < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("Expected value to be at least a vector, but received shape: ",
                     value.shape().DebugString()));
  }
  return absl::OkStatus();
}

// Copies `src` into row `row` of `dst` (dst's rows being src-sized).
absl::Status CopyRows(const Tensor& src, int64_t row_offset_elements, Tensor* dst) {
  const int64_t n = src.NumElements();
  if (n == 0) return absl::OkStatus();
  if (src.dtype() == DT_STRING) {
    const std::string* s = static_cast<const std::string*>(src.raw_data());
    std::string* d = static_cast<std::string*>(dst->raw_data()) + row_offset_elements;
    std::copy(s, s + n, d);
    return absl::OkStatus();
  }
  const int size = DataTypeSize(src.dtype());
  if (size <= 0) {
    return absl::UnimplementedError(
        absl::StrCat("TensorArray cannot pack ", DataTypeString(src.dtype()), " elements"));
  }
  std::memcpy(static_cast<char*>(dst->raw_data()) + row_offset_elements * size, src.raw_data(),
              n * size);
  return absl::OkStatus();
}

std::string ShapeString(const PartialTensorShape& s) { return s.DebugString(); }

// The most elements an array may hold: each costs a Tensor's bookkeeping
// before any data (about 64 bytes), and a size or index from a GraphDef must
// not exhaust memory on bookkeeping alone. Sequences are far shorter.
constexpr int64_t kMaxElements = int64_t{1} << 24;

class TensorArray : public ResourceBase {
 public:
  struct Options {
    DataType dtype = DT_INVALID;
    PartialTensorShape element_shape;
    int64_t size = 0;
    bool dynamic_size = false;
    bool clear_after_read = true;
    bool identical_element_shapes = false;
    bool multiple_writes_aggregate = false;  // gradient arrays
    std::string name;
  };
  explicit TensorArray(Options o) : o_(std::move(o)), entries_(o_.size) {}

  std::string DebugString() const override {
    return absl::StrCat("TensorArray<", DataTypeString(o_.dtype), " ", o_.name, ">");
  }
  DataType dtype() const { return o_.dtype; }

  absl::Status Write(int64_t index, const Tensor& value) {
    absl::MutexLock lock(&mu_);
    TW_RETURN_IF_ERROR(CheckOpen());
    if (value.dtype() != o_.dtype) {
      return absl::InvalidArgumentError(
          absl::StrCat("TensorArray ", o_.name, ": Could not write to TensorArray index ", index,
                       " because the value dtype is ", DataTypeString(value.dtype()),
                       " but TensorArray dtype is ", DataTypeString(o_.dtype), "."));
    }
    if (index < 0) {
      return absl::InvalidArgumentError(absl::StrCat("TensorArray ", o_.name,
                                                     ": Tried to write to index ", index,
                                                     " but array size is: ", entries_.size()));
    }
    if (index >= static_cast<int64_t>(entries_.size())) {
      if (!o_.dynamic_size) {
        return absl::InvalidArgumentError(
            absl::StrCat("TensorArray ", o_.name, ": Tried to write to index ", index,
                         " but array is not resizeable and size is: ", entries_.size()));
      }
      if (index >= kMaxElements) {
        return absl::InvalidArgumentError(absl::StrCat("TensorArray ", o_.name, ": index ", index,
                                                       " is beyond the ", kMaxElements,
                                                       " elements an array may hold"));
      }
      entries_.resize(index + 1);
    }
    const PartialTensorShape shape(value.shape().dim_sizes());
    if (!o_.element_shape.IsCompatibleWith(shape)) {
      return absl::InvalidArgumentError(
          absl::StrCat("TensorArray ", o_.name, ": Could not write to TensorArray index ", index,
                       " because the value shape is ", value.shape().DebugString(),
                       " which is incompatible with the TensorArray's inferred element shape: ",
                       ShapeString(o_.element_shape), " (consider setting infer_shape=False)."));
    }
    Entry& e = entries_[index];
    if (e.cleared) {
      return absl::InvalidArgumentError(
          absl::StrCat("TensorArray ", o_.name, ": Could not write to TensorArray index ", index,
                       " because it has already been read and cleared."));
    }
    if (e.written) {
      if (!o_.multiple_writes_aggregate) {
        return absl::InvalidArgumentError(
            absl::StrCat("TensorArray ", o_.name, ": Could not write to TensorArray index ", index,
                         " because it has already been written to."));
      }
      if (e.value.shape() != value.shape()) {
        return absl::InvalidArgumentError(
            absl::StrCat("TensorArray ", o_.name, ": Could not aggregate to TensorArray index ",
                         index, " because the existing shape is ", e.value.shape().DebugString(),
                         " but the new input shape is ", value.shape().DebugString()));
      }
      // The stored value may share a producer's buffer: add into a copy.
      TW_ASSIGN_OR_RETURN(Tensor sum, e.value.DeepCopy());
      TW_RETURN_IF_ERROR(AddInto(value, &sum));
      e.value = std::move(sum);
    } else {
      e.value = value;
      e.written = true;
    }
    // With identical_element_shapes (Python's infer_shape) the first write
    // fixes the shape of the rest, and of unwritten elements' zeros.
    if (o_.identical_element_shapes && !o_.element_shape.IsFullyDefined()) {
      o_.element_shape = shape;
    }
    return absl::OkStatus();
  }

  absl::StatusOr<Tensor> Read(int64_t index, Allocator* allocator) {
    absl::MutexLock lock(&mu_);
    return ReadLocked(index, allocator);
  }

  // The elements at `indices`, in order, read as Read reads them.
  absl::StatusOr<std::vector<Tensor>> ReadMany(const std::vector<int64_t>& indices,
                                               Allocator* allocator) {
    absl::MutexLock lock(&mu_);
    std::vector<Tensor> out;
    out.reserve(indices.size());
    for (int64_t i : indices) {
      TW_ASSIGN_OR_RETURN(Tensor t, ReadLocked(i, allocator));
      out.push_back(std::move(t));
    }
    return out;
  }

  int64_t Size() {
    absl::MutexLock lock(&mu_);
    return static_cast<int64_t>(entries_.size());
  }
  bool dynamic_size() const { return o_.dynamic_size; }
  bool identical_element_shapes() const { return o_.identical_element_shapes; }
  PartialTensorShape ElementShape() {
    absl::MutexLock lock(&mu_);
    return o_.element_shape;
  }
  absl::Status CheckOpenNow() {
    absl::MutexLock lock(&mu_);
    return CheckOpen();
  }
  void Close() {
    absl::MutexLock lock(&mu_);
    closed_ = true;
    entries_.clear();
  }

 private:
  struct Entry {
    Tensor value;
    bool written = false;
    bool cleared = false;
  };

  absl::Status CheckOpen() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (closed_) {
      return absl::InvalidArgumentError(
          absl::StrCat("TensorArray ", o_.name, " has already been closed."));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<Tensor> ReadLocked(int64_t index, Allocator* allocator)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    TW_RETURN_IF_ERROR(CheckOpen());
    if (index < 0 || index >= static_cast<int64_t>(entries_.size())) {
      return absl::InvalidArgumentError(absl::StrCat("TensorArray ", o_.name,
                                                     ": Tried to read from index ", index,
                                                     " but array size is: ", entries_.size()));
    }
    Entry& e = entries_[index];
    if (e.cleared) {
      return absl::InvalidArgumentError(
          absl::StrCat("TensorArray ", o_.name, ": Could not read index ", index,
                       " twice because it was cleared after a previous read (perhaps try setting "
                       "clear_after_read = false?)."));
    }
    if (!e.written) {
      if (!o_.element_shape.IsFullyDefined()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "TensorArray ", o_.name, ": Could not read from TensorArray index ", index,
            ".  Furthermore, the element shape is not fully defined: ",
            ShapeString(o_.element_shape),
            ".  It is possible you are working with a resizeable TensorArray and stop_gradients "
            "is not allowing the gradients to be written.  If you set the full element_shape "
            "property on the forward TensorArray, the proper all-zeros tensor will be returned "
            "instead of incurring this error."));
      }
      TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(o_.element_shape.dim_sizes()));
      TW_ASSIGN_OR_RETURN(Tensor zeros, Tensor::Allocate(allocator, o_.dtype, shape));
      if (o_.dtype != DT_STRING && zeros.TotalBytes() > 0) {
        std::memset(zeros.raw_data(), 0, zeros.TotalBytes());
      }
      return zeros;
    }
    Tensor value = e.value;
    if (o_.clear_after_read && !o_.multiple_writes_aggregate) {
      e.value = Tensor();
      e.cleared = true;
    }
    return value;
  }

  Options o_;
  absl::Mutex mu_;
  std::vector<Entry> entries_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

absl::StatusOr<std::shared_ptr<TensorArray>> LookupArray(KernelContext* ctx) {
  TW_ASSIGN_OR_RETURN(const ResourceHandle* h, ResourceHandleInput(ctx, 0));
  return ctx->resource_manager()->Lookup<TensorArray>(h->container, h->name);
}

absl::Status SetFlow(KernelContext* ctx, int output) {
  TW_ASSIGN_OR_RETURN(Tensor * flow, ctx->allocate_output(output, TensorShape()));
  *flow->data<float>() = 0;
  return absl::OkStatus();
}

absl::Status OutputHandle(KernelContext* ctx, const std::string& container,
                          const std::string& name) {
  TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
  ResourceHandle h;
  h.device = ctx->device()->name();
  h.container = container;
  h.name = name;
  h.type_name = "TensorArray";
  *out->data<ResourceHandle>() = std::move(h);
  return SetFlow(ctx, 1);
}

absl::StatusOr<std::vector<int64_t>> Indices(const Tensor& t) {
  if (t.dims() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Expected indices to be a vector, but received shape: ", t.shape().DebugString()));
  }
  return IntVector(t, "indices");
}

class TensorArrayOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("dtype", &o_.dtype));
    TW_RETURN_IF_ERROR(c.GetAttr("element_shape", &o_.element_shape));
    TW_RETURN_IF_ERROR(c.GetAttr("dynamic_size", &o_.dynamic_size));
    TW_RETURN_IF_ERROR(c.GetAttr("clear_after_read", &o_.clear_after_read));
    TW_RETURN_IF_ERROR(c.GetAttr("identical_element_shapes", &o_.identical_element_shapes));
    TW_RETURN_IF_ERROR(c.GetAttr("tensor_array_name", &o_.name));
    if (o_.name.empty()) o_.name = c.name();
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(int64_t size, IntScalar(ctx->input(0), "size"));
    if (size < 0) {
      return absl::InvalidArgumentError(absl::StrCat("Size should be >= 0, got ", size));
    }
    if (size > kMaxElements) {
      return absl::InvalidArgumentError(absl::StrCat("TensorArray size ", size, " is beyond the ",
                                                     kMaxElements, " elements an array may hold"));
    }
    TensorArray::Options o = o_;
    o.size = size;
    // A new array per run (an enclosing loop runs this node once per
    // iteration); the resource name is unique in the process.
    const std::string container = StepContainerName(ctx->step_id());
    const std::string name =
        absl::StrCat(o_.name, "_", next_id.fetch_add(1, std::memory_order_relaxed));
    o.name = name;
    TW_RETURN_IF_ERROR(
        ctx->resource_manager()
            ->LookupOrCreate<TensorArray>(container, name,
                                          [&]() -> absl::StatusOr<std::shared_ptr<TensorArray>> {
                                            return std::make_shared<TensorArray>(o);
                                          })
            .status());
    return OutputHandle(ctx, container, name);
  }

 private:
  static std::atomic<int64_t> next_id;
  TensorArray::Options o_;
};
std::atomic<int64_t> TensorArrayOp::next_id{0};

// TensorArrayGradV3(handle, flow_in): the gradient array of (handle,
// source), made on first use with the forward array's size and element
// shape.
class TensorArrayGradOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return c.GetAttr("source", &source_); }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(const ResourceHandle* h, ResourceHandleInput(ctx, 0));
    TW_ASSIGN_OR_RETURN(std::shared_ptr<TensorArray> forward,
                        ctx->resource_manager()->Lookup<TensorArray>(h->container, h->name));
    TW_RETURN_IF_ERROR(forward->CheckOpenNow());
    const std::string name = absl::StrCat(h->name, "@", source_);
    TensorArray::Options o;
    o.dtype = forward->dtype();
    o.element_shape = forward->ElementShape();
    o.size = forward->Size();
    o.identical_element_shapes = forward->identical_element_shapes();
    o.multiple_writes_aggregate = true;
    o.name = name;
    TW_RETURN_IF_ERROR(
        ctx->resource_manager()
            ->LookupOrCreate<TensorArray>(h->container, name,
                                          [&]() -> absl::StatusOr<std::shared_ptr<TensorArray>> {
                                            return std::make_shared<TensorArray>(o);
                                          })
            .status());
    return OutputHandle(ctx, h->container, name);
  }

 private:
  std::string source_;
};

class TensorArrayWriteOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::shared_ptr<TensorArray> ta, LookupArray(ctx));
    TW_ASSIGN_OR_RETURN(int64_t index, IntScalar(ctx->input(1), "index"));
    TW_RETURN_IF_ERROR(ta->Write(index, ctx->input(2)));
    return SetFlow(ctx, 0);
  }
};

class TensorArrayReadOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override { return c.GetAttr("dtype", &dtype_); }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::shared_ptr<TensorArray> ta, LookupArray(ctx));
    TW_RETURN_IF_ERROR(CheckDtype(*ta, dtype_));
    TW_ASSIGN_OR_RETURN(int64_t index, IntScalar(ctx->input(1), "index"));
    TW_ASSIGN_OR_RETURN(Tensor value, ta->Read(index, ctx->device()->allocator()));
    return ctx->set_output(0, std::move(value));
  }
  static absl::Status CheckDtype(TensorArray& ta, DataType want) {
    if (ta.dtype() != want) {
      return absl::InvalidArgumentError(
          absl::StrCat("TensorArray dtype is ", DataTypeString(ta.dtype()),
                       " but Op requested dtype ", DataTypeString(want), "."));
    }
    return absl::OkStatus();
  }

 private:
  DataType dtype_ = DT_INVALID;
};

// Stacks `values` (one shape) into output 0 as [n] + shape, or [0] +
// `empty_shape` when there are none.
absl::Status Pack(KernelContext* ctx, const std::vector<Tensor>& values,
                  const PartialTensorShape& empty_shape) {
  std::vector<int64_t> dims = {static_cast<int64_t>(values.size())};
  if (values.empty()) {
    if (!empty_shape.IsFullyDefined()) {
      return absl::UnimplementedError(absl::StrCat(
          "TensorArray has size zero, but element shape ", empty_shape.DebugString(),
          " is not fully defined. Currently only static shapes are supported when packing "
          "zero-size TensorArrays."));
    }
    dims.insert(dims.end(), empty_shape.dim_sizes().begin(), empty_shape.dim_sizes().end());
  } else {
    const TensorShape& first = values[0].shape();
    for (size_t i = 1; i < values.size(); ++i) {
      if (values[i].shape() != first) {
        return absl::InvalidArgumentError(absl::StrCat(
            "TensorArray has inconsistent shapes.  Index 0 has shape: ", first.DebugString(),
            " but index ", i, " has shape: ", values[i].shape().DebugString()));
      }
    }
    dims.insert(dims.end(), first.dim_sizes().begin(), first.dim_sizes().end());
  }
  TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
  TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
  int64_t offset = 0;
  for (const Tensor& v : values) {
    TW_RETURN_IF_ERROR(CopyRows(v, offset, out));
    offset += v.NumElements();
  }
  return absl::OkStatus();
}

class TensorArrayGatherOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("dtype", &dtype_));
    return c.GetAttr("element_shape", &element_shape_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::shared_ptr<TensorArray> ta, LookupArray(ctx));
    TW_RETURN_IF_ERROR(TensorArrayReadOp::CheckDtype(*ta, dtype_));
    TW_ASSIGN_OR_RETURN(std::vector<int64_t> indices, Indices(ctx->input(1)));
    TW_ASSIGN_OR_RETURN(std::vector<Tensor> values,
                        ta->ReadMany(indices, ctx->device()->allocator()));
    absl::StatusOr<PartialTensorShape> empty = element_shape_.MergeWith(ta->ElementShape());
    return Pack(ctx, values, empty.ok() ? *empty : element_shape_);
  }

 private:
  DataType dtype_ = DT_INVALID;
  PartialTensorShape element_shape_;
};

class TensorArrayScatterOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::shared_ptr<TensorArray> ta, LookupArray(ctx));
    TW_ASSIGN_OR_RETURN(std::vector<int64_t> indices, Indices(ctx->input(1)));
    const Tensor& value = ctx->input(2);
    TW_RETURN_IF_ERROR(CheckAtLeastVector(value));
    if (value.dim_size(0) != static_cast<int64_t>(indices.size())) {
      return absl::InvalidArgumentError(
          absl::StrCat("Expected len(indices) == values.shape[0], but saw: ", indices.size(),
                       " vs. ", value.dim_size(0)));
    }
    for (size_t i = 0; i < indices.size(); ++i) {
      TW_ASSIGN_OR_RETURN(Tensor row, value.Slice(i, i + 1));
      std::vector<int64_t> dims(value.shape().dim_sizes().begin() + 1,
                                value.shape().dim_sizes().end());
      TW_ASSIGN_OR_RETURN(Tensor element, row.Reshaped(TensorShape(dims)));
      TW_RETURN_IF_ERROR(ta->Write(indices[i], element));
    }
    return SetFlow(ctx, 0);
  }
};

class TensorArrayConcatOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("dtype", &dtype_));
    return c.GetAttr("element_shape_except0", &except0_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::shared_ptr<TensorArray> ta, LookupArray(ctx));
    TW_RETURN_IF_ERROR(TensorArrayReadOp::CheckDtype(*ta, dtype_));
    std::vector<int64_t> all(ta->Size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
    TW_ASSIGN_OR_RETURN(std::vector<Tensor> values, ta->ReadMany(all, ctx->device()->allocator()));
    std::vector<int64_t> rest;
    int64_t rows = 0;
    for (size_t i = 0; i < values.size(); ++i) {
      const TensorShape& s = values[i].shape();
      if (s.dims() == 0) {
        return absl::InvalidArgumentError(absl::StrCat("Concat saw a scalar shape at index ", i,
                                                       " but requires at least vectors."));
      }
      const std::vector<int64_t> r(s.dim_sizes().begin() + 1, s.dim_sizes().end());
      if (i == 0) {
        rest = r;
      } else if (r != rest) {
        return absl::InvalidArgumentError(absl::StrCat(
            "TensorArray has inconsistent shapes.  Index 0 has (excepting dimension 0) shape: ",
            TensorShape(rest).DebugString(), " but index ", i,
            " has (excepting dimension 0) shape: ", TensorShape(r).DebugString()));
      }
      rows += s.dim_size(0);
    }
    if (values.empty()) {
      if (!except0_.IsFullyDefined()) {
        return absl::UnimplementedError(absl::StrCat(
            "TensorArray has size zero, but element_shape_except0 ", except0_.DebugString(),
            " is not fully defined. Currently only static shapes are supported when concatenating "
            "zero-size TensorArrays."));
      }
      rest.assign(except0_.dim_sizes().begin(), except0_.dim_sizes().end());
    }
    std::vector<int64_t> dims = {rows};
    dims.insert(dims.end(), rest.begin(), rest.end());
    TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    TW_ASSIGN_OR_RETURN(
        Tensor * lengths,
        ctx->allocate_output(1, TensorShape({static_cast<int64_t>(values.size())})));
    int64_t offset = 0;
    for (size_t i = 0; i < values.size(); ++i) {
      TW_RETURN_IF_ERROR(CopyRows(values[i], offset, out));
      offset += values[i].NumElements();
      lengths->data<int64_t>()[i] = values[i].dim_size(0);
    }
    return absl::OkStatus();
  }

 private:
  DataType dtype_ = DT_INVALID;
  PartialTensorShape except0_;
};

class TensorArraySplitOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::shared_ptr<TensorArray> ta, LookupArray(ctx));
    const Tensor& value = ctx->input(1);
    TW_RETURN_IF_ERROR(CheckAtLeastVector(value));
    const Tensor& lengths_in = ctx->input(2);
    if (lengths_in.dims() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Expected lengths to be a vector, received shape: ", lengths_in.shape().DebugString()));
    }
    TW_ASSIGN_OR_RETURN(std::vector<int64_t> lengths, IntVector(lengths_in, "lengths"));
    const int64_t rows = value.dim_size(0);
    int64_t total = 0;
    bool beyond = false;  // the sum passed the rows (and is not summed further)
    for (int64_t l : lengths) {
      if (l < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("TensorArray split length ", l, " is negative"));
      }
      if (l > rows - total) {
        beyond = true;
        break;
      }
      total += l;
    }
    if (beyond || total != rows) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Expected sum of lengths to be equal to values.shape[0], but sum of lengths is: ",
          beyond ? absl::StrCat("more than ", rows) : absl::StrCat(total),
          " and value's shape is: ", value.shape().DebugString()));
    }
    if (!ta->dynamic_size() && ta->Size() != static_cast<int64_t>(lengths.size())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "TensorArray's size is not equal to the size of lengths (", ta->Size(), " vs. ",
          lengths.size(), "), and the TensorArray is not marked as dynamically resizeable"));
    }
    int64_t begin = 0;
    for (size_t i = 0; i < lengths.size(); ++i) {
      TW_ASSIGN_OR_RETURN(Tensor piece, value.Slice(begin, begin + lengths[i]));
      TW_RETURN_IF_ERROR(ta->Write(static_cast<int64_t>(i), piece));
      begin += lengths[i];
    }
    return SetFlow(ctx, 0);
  }
};

class TensorArraySizeOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::shared_ptr<TensorArray> ta, LookupArray(ctx));
    TW_RETURN_IF_ERROR(ta->CheckOpenNow());
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
    *out->data<int32_t>() = static_cast<int32_t>(ta->Size());
    return absl::OkStatus();
  }
};

class TensorArrayCloseOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(std::shared_ptr<TensorArray> ta, LookupArray(ctx));
    ta->Close();
    return absl::OkStatus();
  }
};

TW_REGISTER_KERNELS(tensor_array_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterKernel(cpu("TensorArrayV3"), MakeFactory<TensorArrayOp>());
  RegisterKernel(cpu("TensorArrayGradV3"), MakeFactory<TensorArrayGradOp>());
  RegisterKernel(cpu("TensorArrayWriteV3"), MakeFactory<TensorArrayWriteOp>());
  RegisterKernel(cpu("TensorArrayReadV3"), MakeFactory<TensorArrayReadOp>());
  RegisterKernel(cpu("TensorArrayGatherV3"), MakeFactory<TensorArrayGatherOp>());
  RegisterKernel(cpu("TensorArrayScatterV3"), MakeFactory<TensorArrayScatterOp>());
  RegisterKernel(cpu("TensorArrayConcatV3"), MakeFactory<TensorArrayConcatOp>());
  RegisterKernel(cpu("TensorArraySplitV3"), MakeFactory<TensorArraySplitOp>());
  RegisterKernel(cpu("TensorArraySizeV3"), MakeFactory<TensorArraySizeOp>());
  RegisterKernel(cpu("TensorArrayCloseV3"), MakeFactory<TensorArrayCloseOp>());
}

}  // namespace
}  // namespace towerflow
