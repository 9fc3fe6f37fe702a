// Tensor: a typed, shaped view over a refcounted buffer.
//
// A Tensor is a value type. Copying one shares the buffer (an atomic refcount
// increment), so passing tensors along graph edges never copies data; a
// kernel that wants to write in place checks RefCountIsOne() first. Buffers
// come from an Allocator and are kTensorAlignment-aligned; element types are
// the fixed-size dtypes, std::string (DT_STRING), ResourceHandle
// (DT_RESOURCE) and Variant (DT_VARIANT, framework/variant.h), whose elements are constructed and
// destroyed with the buffer.
//
//   absl::StatusOr<Tensor> t = Tensor::Allocate(CpuAllocator(), DT_FLOAT, {2, 3});
//   t->matrix<float>()(1, 2) = 5.0f;              // Eigen TensorMap views
//   absl::StatusOr<Tensor> c = Tensor::FromProto(node_value_proto);
//   TensorProto p = t->AsProto();
//
// Views (flat/vec/matrix/tensor/scalar) REQUIRE the element type to match
// dtype() and the rank to match; a mismatch is a programmer error and aborts.
// They are Eigen's TensorMaps, defined in framework/tensor_views.h: a file
// that uses them includes it (kernels have it through kernel_context.h), and
// the many that do not are spared the seconds Eigen's headers take to compile.
// Anything from a GraphDef or a feed goes through the StatusOr factories,
// which never abort.
//
// Thread safety: distinct Tensor objects may be used concurrently even when
// they share a buffer; writing the elements of a shared buffer while others
// read it is a data race the writer must avoid (see RefCountIsOne).
#ifndef TOWERFLOW_FRAMEWORK_TENSOR_H_
#define TOWERFLOW_FRAMEWORK_TENSOR_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/base/internal/raw_logging.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/tensor_shape.h"
#include "core/types.h"
#include "framework/allocator.h"
#include "framework/resource_handle.h"
#include "framework/variant.h"
#include "proto/tensor.pb.h"

namespace towerflow {

template <>
struct DataTypeToEnum<ResourceHandle> {
  static constexpr DataType value = DT_RESOURCE;
};

namespace tensor_internal {

// The reference count at the start of every tensor buffer (tensor.cc's
// Buffer derives from it).
struct BufferHeader {
  std::atomic<int64_t> refs{1};
};

// A counted reference to a tensor buffer, as TensorFlow's TensorBuffer is
// core::RefCounted. Unlike std::shared_ptr::use_count(), a relaxed load,
// IsUnique() loads the count with acquire ordering and owners let go with
// acq_rel: a kernel that finds itself the only owner and writes in place is
// ordered after the reads of every owner before it. (With shared_ptr,
// ThreadSanitizer reported it: one tower's optimizer copied a variable for
// writing while another updated the buffer they had just stopped sharing.)
class BufferRef {
 public:
  BufferRef() = default;
  BufferRef(const BufferRef& other) noexcept : header_(other.header_) {
    if (header_ != nullptr) header_->refs.fetch_add(1, std::memory_order_relaxed);
  }
  BufferRef(BufferRef&& other) noexcept : header_(other.header_) { other.header_ = nullptr; }
  BufferRef& operator=(BufferRef other) noexcept {
    std::swap(header_, other.header_);
    return *this;
  }
  ~BufferRef() {
    if (header_ != nullptr && header_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      Destroy(header_);
    }
  }

  // Takes the first reference to a new buffer (count 1).
  static BufferRef Adopt(BufferHeader* header) { return BufferRef(header); }

  bool IsUnique() const {
    return header_ != nullptr && header_->refs.load(std::memory_order_acquire) == 1;
  }
  int64_t count() const {
    return header_ == nullptr ? 0 : header_->refs.load(std::memory_order_acquire);
  }
  explicit operator bool() const { return header_ != nullptr; }
  bool operator==(const BufferRef& other) const { return header_ == other.header_; }

 private:
  explicit BufferRef(BufferHeader* header) : header_(header) {}
  static void Destroy(BufferHeader* header);  // tensor.cc: deletes the Buffer

  BufferHeader* header_ = nullptr;
};

}  // namespace tensor_internal

class Tensor {
 public:
  // An uninitialised tensor: dtype DT_INVALID, no buffer. Kernels never see
  // one as an input.
  Tensor() = default;

  // A tensor of `shape` from `allocator` (elements of strings/handles are
  // default-constructed, numbers are left uninitialised). InvalidArgument for
  // a dtype without elements (refs) or an invalid shape;
  // ResourceExhausted when the allocator has no memory, naming the bytes.
  static absl::StatusOr<Tensor> Allocate(Allocator* allocator, DataType dtype,
                                         const TensorShape& shape);

  // Convenience for tests and host code: Allocate from the CPU allocator.
  // REQUIRES: a valid shape and a dtype with elements; aborts when the
  // process is out of memory.
  Tensor(DataType dtype, const TensorShape& shape);

  // Decodes `proto` with TensorFlow's rules (see core/tensor_proto_util.h):
  // exact-size tensor_content, a short *_val list repeats its last value, no
  // values means zeros. InvalidArgument for any malformed proto.
  static absl::StatusOr<Tensor> FromProto(const TensorProto& proto,
                                          Allocator* allocator = CpuAllocator());

  // Encodes as TensorFlow's writers do (numbers as tensor_content, strings,
  // resource handles and variants in their *_val fields).
  TensorProto AsProto() const;

  bool IsInitialized() const { return dtype_ != DT_INVALID; }
  DataType dtype() const { return dtype_; }
  const TensorShape& shape() const { return shape_; }
  int dims() const { return shape_.dims(); }
  int64_t dim_size(int d) const { return shape_.dim_size(d); }
  int64_t NumElements() const { return shape_.num_elements(); }
  // Bytes of element storage (sizeof(std::string) per string element).
  size_t TotalBytes() const;

  // True when no other Tensor shares this buffer, so writing is private.
  bool RefCountIsOne() const { return buffer_.IsUnique(); }
  // How many Tensors share this buffer (0 without one): a kernel that knows
  // which of them are its own tells whether anyone else holds it.
  int64_t BufferRefCount() const { return buffer_.count(); }
  bool SharesBufferWith(const Tensor& other) const {
    return static_cast<bool>(buffer_) && buffer_ == other.buffer_;
  }

  // This tensor's elements under another shape with the same number of
  // elements, sharing the buffer. InvalidArgument otherwise.
  absl::StatusOr<Tensor> Reshaped(const TensorShape& shape) const;

  // This tensor's bytes as `dtype` elements in `shape` (TF's Bitcast),
  // sharing the buffer. InvalidArgument unless both dtypes have fixed sizes
  // and the byte counts agree.
  absl::StatusOr<Tensor> BitcastTo(DataType dtype, const TensorShape& shape) const;

  // Rows [begin, end) of dimension 0, sharing the buffer.
  // InvalidArgument for a scalar or a bad range.
  absl::StatusOr<Tensor> Slice(int64_t begin, int64_t end) const;

  // A copy with a buffer of its own from `allocator`.
  absl::StatusOr<Tensor> DeepCopy(Allocator* allocator = CpuAllocator()) const;

  // Typed element access. REQUIRES: DataTypeToEnum<T>::value == dtype().
  template <typename T>
  T* data() const {
    CheckType(DataTypeToEnum<T>::value);
    return static_cast<T*>(data_);
  }
  template <typename T>
  absl::Span<T> span() const {
    return absl::Span<T>(data<T>(), static_cast<size_t>(NumElements()));
  }
  // Eigen views (framework/tensor_views.h defines them): flat() the
  // elements as a vector; tensor<T, N>() REQUIRES dims() == N; shaped<T, N>
  // the elements with another shape of the same element count (REQUIRES:
  // the product of `dims` == NumElements()); vec() and matrix() are
  // tensor<T, 1> and tensor<T, 2>; scalar() REQUIRES NumElements() == 1 (any
  // rank, as TF allows for scalars); flat_inner_dims() the elements as a
  // [d0*...*d(n-2), d(n-1)] matrix (a scalar is [1, 1]).
  template <typename T>
  auto flat() const;
  template <typename T, int N>
  auto tensor() const;
  template <typename T, int N>
  auto shaped(absl::Span<const int64_t> dims) const;
  template <typename T>
  auto vec() const;
  template <typename T>
  auto matrix() const;
  template <typename T>
  auto scalar() const;
  template <typename T>
  auto flat_inner_dims() const;

  // Raw bytes, for copies between devices and tensor_content.
  void* raw_data() const { return data_; }

  // "Tensor<type: float shape: [2,3] values: 1 2 3...>" with at most
  // `max_entries` values.
  std::string DebugString(int max_entries = 6) const;
  // Just the values, "[[1 2][3 4]]" style flattened: "1 2 3 4...".
  std::string SummarizeValue(int max_entries) const;

 private:
  Tensor(DataType dtype, TensorShape shape, tensor_internal::BufferRef buffer, void* data)
      : dtype_(dtype), shape_(std::move(shape)), buffer_(std::move(buffer)), data_(data) {}

  void CheckType(DataType expected) const {
    ABSL_RAW_CHECK(expected == dtype_, "Tensor element type does not match its dtype");
  }
  void CheckRank(int rank) const {
    ABSL_RAW_CHECK(rank == shape_.dims(), "Tensor view rank does not match its shape");
  }

  DataType dtype_ = DT_INVALID;
  TensorShape shape_;
  tensor_internal::BufferRef buffer_;
  void* data_ = nullptr;  // inside buffer_ (a Slice may start past its beginning)
};

// Bytes per element in a Tensor buffer: DataTypeSize for numbers,
// sizeof(std::string) / sizeof(ResourceHandle) / sizeof(Variant) for
// strings, handles and variants, 0 for
// dtypes a Tensor cannot hold.
size_t TensorElementSize(DataType dtype);

// Tensors whose buffer was filled with raw bytes from outside (a
// TensorProto's tensor_content, a checkpoint's data file, a .npy file): for
// a bool tensor, makes every nonzero byte 1 (true); other dtypes are left as
// they are. A bool object holding another byte is undefined behaviour in
// C++ (UBSan: "load of value 32, which is not a valid value for type
// 'bool'", found by fuzz/tensor_proto), and any nonzero byte means true.
void NormalizeBoolBytes(Tensor* t);

}  // namespace towerflow

#endif  // TOWERFLOW_FRAMEWORK_TENSOR_H_
