#include "framework/tensor.h"

#include <algorithm>
#include <complex>
#include <cstring>
#include <new>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "core/tensor_proto_util.h"
#include "core/type_dispatch.h"

namespace towerflow {

namespace tensor_internal {

// The owner of a tensor's memory. Constructs and destroys the elements of
// non-trivial dtypes (strings, resource handles, variants).
class Buffer : public BufferHeader {
 public:
  Buffer(Allocator* allocator, void* data, DataType dtype, int64_t n)
      : allocator_(allocator), data_(data), dtype_(dtype), n_(n) {
    if (dtype_ == DT_STRING) {
      for (int64_t i = 0; i < n_; ++i) new (static_cast<std::string*>(data_) + i) std::string();
    } else if (dtype_ == DT_RESOURCE) {
      for (int64_t i = 0; i < n_; ++i) {
        new (static_cast<ResourceHandle*>(data_) + i) ResourceHandle();
      }
    } else if (dtype_ == DT_VARIANT) {
      for (int64_t i = 0; i < n_; ++i) new (static_cast<Variant*>(data_) + i) Variant();
    }
  }
  ~Buffer() {
    if (dtype_ == DT_STRING) {
      for (int64_t i = 0; i < n_; ++i) static_cast<std::string*>(data_)[i].~basic_string();
    } else if (dtype_ == DT_RESOURCE) {
      for (int64_t i = 0; i < n_; ++i) static_cast<ResourceHandle*>(data_)[i].~ResourceHandle();
    } else if (dtype_ == DT_VARIANT) {
      for (int64_t i = 0; i < n_; ++i) static_cast<Variant*>(data_)[i].~Variant();
    }
    allocator_->DeallocateRaw(data_);
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return data_; }

 private:
  Allocator* const allocator_;  // must outlive the buffer (devices outlive tensors)
  void* const data_;
  const DataType dtype_;
  const int64_t n_;
};

void BufferRef::Destroy(BufferHeader* header) { delete static_cast<Buffer*>(header); }

}  // namespace tensor_internal

namespace {

// Copies `values` into `out[0, n)`, repeating the last value; zeros when
// there are none. ValidateTensorProto already checked values.size() <= n.
template <typename T, typename Values>
void FillRepeatingLast(const Values& values, T* out, int64_t n) {
  const int64_t have = values.size();
  for (int64_t i = 0; i < have; ++i) out[i] = static_cast<T>(values.Get(i));
  const T last = have == 0 ? T() : static_cast<T>(values.Get(have - 1));
  for (int64_t i = have; i < n; ++i) out[i] = last;
}

template <typename T, typename Values>
void FillComplex(const Values& parts, T* out, int64_t n) {
  const int64_t have = parts.size() / 2;
  for (int64_t i = 0; i < have; ++i) out[i] = T(parts.Get(2 * i), parts.Get(2 * i + 1));
  const T last = have == 0 ? T() : out[have - 1];
  for (int64_t i = have; i < n; ++i) out[i] = last;
}

void DecodeValues(const TensorProto& p, const Tensor& t) {
  const int64_t n = t.NumElements();
  switch (t.dtype()) {
    case DT_FLOAT:
      return FillRepeatingLast(p.float_val(), t.data<float>(), n);
    case DT_DOUBLE:
      return FillRepeatingLast(p.double_val(), t.data<double>(), n);
    case DT_INT32:
      return FillRepeatingLast(p.int_val(), t.data<int32_t>(), n);
    case DT_INT16:
      return FillRepeatingLast(p.int_val(), t.data<int16_t>(), n);
    case DT_INT8:
      return FillRepeatingLast(p.int_val(), t.data<int8_t>(), n);
    case DT_UINT8:
      return FillRepeatingLast(p.int_val(), t.data<uint8_t>(), n);
    case DT_UINT16:
      return FillRepeatingLast(p.int_val(), t.data<uint16_t>(), n);
    // The quantized types travel in int_val too (TF's single-value
    // constants of them do).
    case DT_QINT8:
      return FillRepeatingLast(p.int_val(), static_cast<int8_t*>(t.raw_data()), n);
    case DT_QUINT8:
      return FillRepeatingLast(p.int_val(), static_cast<uint8_t*>(t.raw_data()), n);
    case DT_QINT16:
      return FillRepeatingLast(p.int_val(), static_cast<int16_t*>(t.raw_data()), n);
    case DT_QUINT16:
      return FillRepeatingLast(p.int_val(), static_cast<uint16_t*>(t.raw_data()), n);
    case DT_QINT32:
      return FillRepeatingLast(p.int_val(), static_cast<int32_t*>(t.raw_data()), n);
    case DT_INT64:
      return FillRepeatingLast(p.int64_val(), t.data<int64_t>(), n);
    case DT_UINT32:
      return FillRepeatingLast(p.uint32_val(), t.data<uint32_t>(), n);
    case DT_UINT64:
      return FillRepeatingLast(p.uint64_val(), t.data<uint64_t>(), n);
    case DT_BOOL:
      return FillRepeatingLast(p.bool_val(), t.data<bool>(), n);
    case DT_COMPLEX64:
      return FillComplex(p.scomplex_val(), t.data<complex64>(), n);
    case DT_COMPLEX128:
      return FillComplex(p.dcomplex_val(), t.data<complex128>(), n);
    case DT_STRING:
      return FillRepeatingLast(p.string_val(), t.data<std::string>(), n);
    case DT_HALF:
    case DT_BFLOAT16:
      // 16-bit floats travel as their bit patterns in half_val.
      return FillRepeatingLast(p.half_val(), static_cast<uint16_t*>(t.raw_data()), n);
    default:
      return;  // ValidateTensorProto admits no other dtype
  }
}

absl::StatusOr<Tensor> ResourceFromProto(const TensorProto& proto, Allocator* allocator) {
  TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromProto(proto.tensor_shape()));
  if (proto.resource_handle_val_size() > shape.num_elements()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "resource_handle_val has ", proto.resource_handle_val_size(), " values, but shape ",
        shape.DebugString(), " has only ", shape.num_elements(), " elements"));
  }
  TW_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(allocator, DT_RESOURCE, shape));
  ResourceHandle* out = t.data<ResourceHandle>();
  for (int i = 0; i < proto.resource_handle_val_size(); ++i) {
    out[i] = ResourceHandle::FromProto(proto.resource_handle_val(i));
  }
  return t;
}

// Variant elements from variant_val (DecodeVariant: the types Towerflow
// knows).
absl::StatusOr<Tensor> VariantFromProto(const TensorProto& proto, Allocator* allocator) {
  TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromProto(proto.tensor_shape()));
  if (proto.variant_val_size() > shape.num_elements()) {
    return absl::InvalidArgumentError(
        absl::StrCat("variant_val has ", proto.variant_val_size(), " values, but shape ",
                     shape.DebugString(), " has only ", shape.num_elements(), " elements"));
  }
  TW_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(allocator, DT_VARIANT, shape));
  Variant* out = t.data<Variant>();
  for (int i = 0; i < proto.variant_val_size(); ++i) {
    const VariantTensorDataProto& value = proto.variant_val(i);
    if (value.type_name().empty() && value.metadata().empty() && value.tensors_size() == 0) {
      continue;  // an empty variant, as AsProto writes one
    }
    TW_ASSIGN_OR_RETURN(out[i], DecodeVariant(value));
  }
  return t;
}

template <typename T>
std::string ValueString(const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v ? "1" : "0";
  } else if constexpr (std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>) {
    return absl::StrCat(static_cast<int>(v));
  } else if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>) {
    return absl::StrCat("(", v.real(), ",", v.imag(), ")");
  } else if constexpr (kIsFloat16<T>) {
    return absl::StrCat(static_cast<float>(v));
  } else {
    return absl::StrCat(v);
  }
}

}  // namespace

ResourceHandleProto ResourceHandle::ToProto() const {
  ResourceHandleProto p;
  p.set_device(device);
  p.set_container(container);
  p.set_name(name);
  p.set_maybe_type_name(type_name);
  return p;
}

ResourceHandle ResourceHandle::FromProto(const ResourceHandleProto& p) {
  return ResourceHandle{p.device(), p.container(), p.name(), p.maybe_type_name()};
}

size_t TensorElementSize(DataType dtype) {
  if (dtype == DT_STRING) return sizeof(std::string);
  if (dtype == DT_RESOURCE) return sizeof(ResourceHandle);
  if (dtype == DT_VARIANT) return sizeof(Variant);
  if (IsRefType(dtype)) return 0;
  return static_cast<size_t>(DataTypeSize(dtype));
}

absl::StatusOr<Tensor> Tensor::Allocate(Allocator* allocator, DataType dtype,
                                        const TensorShape& shape) {
  TW_RETURN_IF_ERROR(shape.status());
  const size_t element_size = TensorElementSize(dtype);
  if (element_size == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("a Tensor cannot hold elements of dtype ", DataTypeString(dtype)));
  }
  const int64_t bytes =
      MultiplyWithoutOverflow(shape.num_elements(), static_cast<int64_t>(element_size));
  if (bytes < 0) {
    return absl::InvalidArgumentError(absl::StrCat("a ", DataTypeString(dtype), " tensor of shape ",
                                                   shape.DebugString(), " needs too many bytes"));
  }
  void* data = allocator->AllocateRaw(kTensorAlignment, static_cast<size_t>(bytes));
  if (data == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("OOM when allocating tensor with shape ", shape.DebugString(), " and type ",
                     DataTypeString(dtype), " (", bytes, " bytes) on ", allocator->Name()));
  }
  return Tensor(dtype, shape,
                tensor_internal::BufferRef::Adopt(
                    new tensor_internal::Buffer(allocator, data, dtype, shape.num_elements())),
                data);
}

Tensor::Tensor(DataType dtype, const TensorShape& shape) {
  absl::StatusOr<Tensor> t = Allocate(CpuAllocator(), dtype, shape);
  ABSL_RAW_CHECK(t.ok(), "Tensor(dtype, shape): bad dtype or shape, or out of memory");
  *this = *std::move(t);
}

absl::StatusOr<Tensor> Tensor::FromProto(const TensorProto& proto, Allocator* allocator) {
  if (proto.dtype() == DT_RESOURCE) return ResourceFromProto(proto, allocator);
  if (proto.dtype() == DT_VARIANT) return VariantFromProto(proto, allocator);
  TW_ASSIGN_OR_RETURN(TensorShape shape, TensorProtoShape(proto));
  TW_ASSIGN_OR_RETURN(Tensor t, Allocate(allocator, proto.dtype(), shape));
  if (!proto.tensor_content().empty()) {
    // Validated: exactly NumElements() * element size bytes.
    std::memcpy(t.raw_data(), proto.tensor_content().data(), proto.tensor_content().size());
    NormalizeBoolBytes(&t);
  } else {
    DecodeValues(proto, t);
  }
  return t;
}

TensorProto Tensor::AsProto() const {
  TensorProto p;
  if (dtype_ == DT_STRING) {
    return MakeTensorProto<std::string>(span<std::string>(), shape_);
  }
  if (dtype_ == DT_RESOURCE) {
    p.set_dtype(DT_RESOURCE);
    shape_.AsProto(p.mutable_tensor_shape());
    for (const ResourceHandle& h : span<ResourceHandle>())
      *p.add_resource_handle_val() = h.ToProto();
    return p;
  }
  if (dtype_ == DT_VARIANT) {
    p.set_dtype(DT_VARIANT);
    shape_.AsProto(p.mutable_tensor_shape());
    for (const Variant& v : span<Variant>()) *p.add_variant_val() = v.Encode();
    return p;
  }
  const bool visited = VisitNumberType(dtype_, [&](auto zero) {
    using T = decltype(zero);
    p = MakeTensorProto<T>(span<T>(), shape_);
  });
  if (!visited && IsInitialized()) {  // quantized types: raw bytes
    p.set_dtype(dtype_);
    shape_.AsProto(p.mutable_tensor_shape());
    p.set_tensor_content(std::string(static_cast<const char*>(data_), TotalBytes()));
  }
  return p;
}

size_t Tensor::TotalBytes() const {
  return static_cast<size_t>(NumElements()) * TensorElementSize(dtype_);
}

absl::StatusOr<Tensor> Tensor::Reshaped(const TensorShape& shape) const {
  TW_RETURN_IF_ERROR(shape.status());
  if (shape.num_elements() != NumElements()) {
    return absl::InvalidArgumentError(absl::StrCat("Cannot reshape a tensor with ", NumElements(),
                                                   " elements to shape ", shape.DebugString(), " (",
                                                   shape.num_elements(), " elements)"));
  }
  return Tensor(dtype_, shape, buffer_, data_);
}

absl::StatusOr<Tensor> Tensor::BitcastTo(DataType dtype, const TensorShape& shape) const {
  TW_RETURN_IF_ERROR(shape.status());
  if (dtype_ == DT_STRING || dtype == DT_STRING || DataTypeSize(dtype_) <= 0 ||
      DataTypeSize(dtype) <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Cannot bitcast ", DataTypeString(dtype_), " to ", DataTypeString(dtype)));
  }
  if (shape.num_elements() * DataTypeSize(dtype) != NumElements() * DataTypeSize(dtype_)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Cannot bitcast ", DataTypeString(dtype_), shape_.DebugString(), " (",
        NumElements() * DataTypeSize(dtype_), " bytes) to ", DataTypeString(dtype),
        shape.DebugString(), " (", shape.num_elements() * DataTypeSize(dtype), " bytes)"));
  }
  return Tensor(dtype, shape, buffer_, data_);
}

absl::StatusOr<Tensor> Tensor::Slice(int64_t begin, int64_t end) const {
  if (dims() == 0) return absl::InvalidArgumentError("Cannot slice a scalar tensor");
  if (begin < 0 || end < begin || end > dim_size(0)) {
    return absl::InvalidArgumentError(absl::StrCat("Slice [", begin, ", ", end,
                                                   ") is out of range for dimension 0 of shape ",
                                                   shape_.DebugString()));
  }
  std::vector<int64_t> dims(shape_.dim_sizes().begin(), shape_.dim_sizes().end());
  dims[0] = end - begin;
  TW_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
  int64_t row = 1;
  for (int d = 1; d < shape_.dims(); ++d) row *= shape_.dim_size(d);
  char* start = static_cast<char*>(data_) + begin * row * TensorElementSize(dtype_);
  return Tensor(dtype_, shape, buffer_, start);
}

absl::StatusOr<Tensor> Tensor::DeepCopy(Allocator* allocator) const {
  if (!IsInitialized()) return Tensor();
  TW_ASSIGN_OR_RETURN(Tensor copy, Allocate(allocator, dtype_, shape_));
  if (dtype_ == DT_STRING) {
    std::copy_n(data<std::string>(), NumElements(), copy.data<std::string>());
  } else if (dtype_ == DT_RESOURCE) {
    std::copy_n(data<ResourceHandle>(), NumElements(), copy.data<ResourceHandle>());
  } else if (dtype_ == DT_VARIANT) {
    std::copy_n(data<Variant>(), NumElements(), copy.data<Variant>());
  } else if (TotalBytes() > 0) {
    std::memcpy(copy.raw_data(), data_, TotalBytes());
  }
  return copy;
}

std::string Tensor::SummarizeValue(int max_entries) const {
  // A negative count shows nothing (attrs cast from int64 can be).
  const int64_t n = std::clamp<int64_t>(max_entries, 0, NumElements());
  std::vector<std::string> parts;
  parts.reserve(n);
  if (dtype_ == DT_STRING) {
    for (int64_t i = 0; i < n; ++i) parts.push_back(data<std::string>()[i]);
  } else if (dtype_ == DT_RESOURCE) {
    for (int64_t i = 0; i < n; ++i) parts.push_back(data<ResourceHandle>()[i].DebugString());
  } else if (dtype_ == DT_VARIANT) {
    for (int64_t i = 0; i < n; ++i) parts.push_back(data<Variant>()[i].DebugString());
  } else if (!VisitNumberType(dtype_, [&](auto zero) {
               using T = decltype(zero);
               for (int64_t i = 0; i < n; ++i) parts.push_back(ValueString(data<T>()[i]));
             })) {
    VisitQuantizedType(dtype_, [&](auto zero) {  // their integers, as TF prints them
      using S = decltype(zero);
      for (int64_t i = 0; i < n; ++i) {
        parts.push_back(absl::StrCat(static_cast<int64_t>(static_cast<const S*>(data_)[i])));
      }
    });
  }
  std::string out = absl::StrJoin(parts, " ");
  if (NumElements() > n) absl::StrAppend(&out, "...");
  return out;
}

std::string Tensor::DebugString(int max_entries) const {
  if (!IsInitialized()) return "Tensor<uninitialized>";
  return absl::StrCat("Tensor<type: ", DataTypeString(dtype_), " shape: ", shape_.DebugString(),
                      " values: ", SummarizeValue(max_entries), ">");
}

void NormalizeBoolBytes(Tensor* t) {
  if (t->dtype() != DT_BOOL) return;
  // Read as bytes: reading them as bool is what must not happen.
  auto* bytes = static_cast<uint8_t*>(t->raw_data());
  for (int64_t i = 0, n = t->NumElements(); i < n; ++i) bytes[i] = bytes[i] != 0 ? 1 : 0;
}

}  // namespace towerflow
