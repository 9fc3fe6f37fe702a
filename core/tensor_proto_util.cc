#include "core/tensor_proto_util.h"

#include <cmath>
#include <limits>
#include <memory>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"

namespace towerflow {
namespace {

// The repeated field that carries values of each dtype when tensor_content
// is empty.
enum class ValField {
  kNone,
  kHalf,
  kFloat,
  kDouble,
  kInt,
  kString,
  kSComplex,
  kInt64,
  kBool,
  kDComplex,
  kUint32,
  kUint64,
};

ValField FieldFor(DataType dtype) {
  switch (dtype) {
    case DT_HALF:
    case DT_BFLOAT16:
      return ValField::kHalf;
    case DT_FLOAT:
      return ValField::kFloat;
    case DT_DOUBLE:
      return ValField::kDouble;
    case DT_INT32:
    case DT_INT16:
    case DT_INT8:
    case DT_UINT8:
    case DT_UINT16:
    case DT_QINT8:
    case DT_QUINT8:
    case DT_QINT16:
    case DT_QUINT16:
    case DT_QINT32:
      return ValField::kInt;
    case DT_STRING:
      return ValField::kString;
    case DT_COMPLEX64:
      return ValField::kSComplex;
    case DT_INT64:
      return ValField::kInt64;
    case DT_BOOL:
      return ValField::kBool;
    case DT_COMPLEX128:
      return ValField::kDComplex;
    case DT_UINT32:
      return ValField::kUint32;
    case DT_UINT64:
      return ValField::kUint64;
    default:
      return ValField::kNone;
  }
}

const char* FieldName(ValField f) {
  switch (f) {
    case ValField::kHalf:
      return "half_val";
    case ValField::kFloat:
      return "float_val";
    case ValField::kDouble:
      return "double_val";
    case ValField::kInt:
      return "int_val";
    case ValField::kString:
      return "string_val";
    case ValField::kSComplex:
      return "scomplex_val";
    case ValField::kInt64:
      return "int64_val";
    case ValField::kBool:
      return "bool_val";
    case ValField::kDComplex:
      return "dcomplex_val";
    case ValField::kUint32:
      return "uint32_val";
    case ValField::kUint64:
      return "uint64_val";
    case ValField::kNone:
      break;
  }
  return "none";
}

// Raw entry count of a field (complex fields count floats, two per element).
int FieldCount(const TensorProto& p, ValField f) {
  switch (f) {
    case ValField::kHalf:
      return p.half_val_size();
    case ValField::kFloat:
      return p.float_val_size();
    case ValField::kDouble:
      return p.double_val_size();
    case ValField::kInt:
      return p.int_val_size();
    case ValField::kString:
      return p.string_val_size();
    case ValField::kSComplex:
      return p.scomplex_val_size();
    case ValField::kInt64:
      return p.int64_val_size();
    case ValField::kBool:
      return p.bool_val_size();
    case ValField::kDComplex:
      return p.dcomplex_val_size();
    case ValField::kUint32:
      return p.uint32_val_size();
    case ValField::kUint64:
      return p.uint64_val_size();
    case ValField::kNone:
      break;
  }
  return 0;
}

constexpr ValField kAllFields[] = {ValField::kHalf,   ValField::kFloat,  ValField::kDouble,
                                   ValField::kInt,    ValField::kString, ValField::kSComplex,
                                   ValField::kInt64,  ValField::kBool,   ValField::kDComplex,
                                   ValField::kUint32, ValField::kUint64};

template <typename T>
T LoadRaw(const std::string& content, int64_t i) {
  T v;
  std::memcpy(&v, content.data() + i * sizeof(T), sizeof(T));
  return v;
}

// Element i from a repeated field, repeating the last entry.
template <typename Field>
auto Repeated(const Field& field, int64_t i) -> decltype(field.Get(0)) {
  return field.Get(i < field.size() ? static_cast<int>(i) : field.size() - 1);
}

// Element i of a validated non-string, non-complex proto as double. Integer
// types go through ElementAsInt64 when exactness matters.
double ElementAsDouble(const TensorProto& p, int64_t i) {
  const std::string& c = p.tensor_content();
  const bool raw = !c.empty();
  switch (p.dtype()) {
    case DT_FLOAT:
      return raw ? LoadRaw<float>(c, i) : Repeated(p.float_val(), i);
    case DT_DOUBLE:
      return raw ? LoadRaw<double>(c, i) : Repeated(p.double_val(), i);
    case DT_HALF: {
      const uint16_t bits =
          raw ? LoadRaw<uint16_t>(c, i) : static_cast<uint16_t>(Repeated(p.half_val(), i));
      return static_cast<float>(Float16FromBits<half>(bits));
    }
    case DT_BFLOAT16: {
      const uint16_t bits =
          raw ? LoadRaw<uint16_t>(c, i) : static_cast<uint16_t>(Repeated(p.half_val(), i));
      return static_cast<float>(Float16FromBits<bfloat16>(bits));
    }
    default:
      return 0;  // integer types are read by ElementAsInt64
  }
}

// Element i of a validated integer or bool proto; *fits is false for a uint64
// past INT64_MAX.
int64_t ElementAsInt64(const TensorProto& p, int64_t i, bool* fits) {
  const std::string& c = p.tensor_content();
  const bool raw = !c.empty();
  *fits = true;
  switch (p.dtype()) {
    case DT_INT8:
    case DT_QINT8:
      return raw ? LoadRaw<int8_t>(c, i) : static_cast<int8_t>(Repeated(p.int_val(), i));
    case DT_UINT8:
    case DT_QUINT8:
      return raw ? LoadRaw<uint8_t>(c, i) : static_cast<uint8_t>(Repeated(p.int_val(), i));
    case DT_INT16:
    case DT_QINT16:
      return raw ? LoadRaw<int16_t>(c, i) : static_cast<int16_t>(Repeated(p.int_val(), i));
    case DT_UINT16:
    case DT_QUINT16:
      return raw ? LoadRaw<uint16_t>(c, i) : static_cast<uint16_t>(Repeated(p.int_val(), i));
    case DT_INT32:
    case DT_QINT32:
      return raw ? LoadRaw<int32_t>(c, i) : Repeated(p.int_val(), i);
    case DT_UINT32:
      return raw ? LoadRaw<uint32_t>(c, i) : Repeated(p.uint32_val(), i);
    case DT_INT64:
      return raw ? LoadRaw<int64_t>(c, i) : Repeated(p.int64_val(), i);
    case DT_UINT64: {
      const uint64_t v = raw ? LoadRaw<uint64_t>(c, i) : Repeated(p.uint64_val(), i);
      *fits = v <= static_cast<uint64_t>(INT64_MAX);
      return static_cast<int64_t>(v);
    }
    case DT_BOOL:
      return raw ? (LoadRaw<uint8_t>(c, i) != 0) : Repeated(p.bool_val(), i);
    default:
      return 0;
  }
}

bool IsIntegerLike(DataType dtype) {
  return DataTypeIsInteger(dtype) || dtype == DT_BOOL || (DataTypeIsQuantized(dtype));
}

bool HasNoValues(const TensorProto& p) {
  return p.tensor_content().empty() && FieldCount(p, FieldFor(p.dtype())) == 0;
}

}  // namespace

namespace tensor_proto_internal {

void AppendValue(float v, TensorProto* p) { p->add_float_val(v); }
void AppendValue(double v, TensorProto* p) { p->add_double_val(v); }
void AppendValue(int32_t v, TensorProto* p) { p->add_int_val(v); }
void AppendValue(int64_t v, TensorProto* p) { p->add_int64_val(v); }
void AppendValue(uint8_t v, TensorProto* p) { p->add_int_val(v); }
void AppendValue(uint16_t v, TensorProto* p) { p->add_int_val(v); }
void AppendValue(uint32_t v, TensorProto* p) { p->add_uint32_val(v); }
void AppendValue(uint64_t v, TensorProto* p) { p->add_uint64_val(v); }
void AppendValue(int16_t v, TensorProto* p) { p->add_int_val(v); }
void AppendValue(int8_t v, TensorProto* p) { p->add_int_val(v); }
void AppendValue(bool v, TensorProto* p) { p->add_bool_val(v); }
void AppendValue(const std::string& v, TensorProto* p) { p->add_string_val(v); }
// TensorFlow keeps both 16-bit types' bit patterns in half_val.
void AppendValue(half v, TensorProto* p) { p->add_half_val(Float16Bits(v)); }
void AppendValue(bfloat16 v, TensorProto* p) { p->add_half_val(Float16Bits(v)); }
void AppendValue(const complex64& v, TensorProto* p) {
  p->add_scomplex_val(v.real());
  p->add_scomplex_val(v.imag());
}
void AppendValue(const complex128& v, TensorProto* p) {
  p->add_dcomplex_val(v.real());
  p->add_dcomplex_val(v.imag());
}

bool UsesTensorContent(DataType dtype) {
  switch (dtype) {
    case DT_HALF:
    case DT_BFLOAT16:
    case DT_FLOAT:
    case DT_DOUBLE:
    case DT_INT32:
    case DT_UINT8:
    case DT_INT16:
    case DT_INT8:
    case DT_INT64:
    case DT_QINT8:
    case DT_QUINT8:
    case DT_QINT16:
    case DT_QUINT16:
    case DT_QINT32:
    case DT_UINT16:
    case DT_UINT32:
    case DT_UINT64:
      return true;
    default:
      return false;
  }
}

}  // namespace tensor_proto_internal

absl::Status ValidateTensorProto(const TensorProto& proto) {
  const DataType dtype = proto.dtype();
  if (!IsValidDataType(dtype) || IsRefType(dtype)) {
    return absl::InvalidArgumentError(
        absl::StrCat("TensorProto has invalid dtype ", DataTypeString(dtype)));
  }
  const ValField own = FieldFor(dtype);
  if (own == ValField::kNone) {
    return absl::InvalidArgumentError(absl::StrCat("TensorProto of dtype ", DataTypeString(dtype),
                                                   " cannot hold a constant value"));
  }
  absl::StatusOr<TensorShape> shape = TensorShape::FromProto(proto.tensor_shape());
  if (!shape.ok()) {
    return AddErrorContext(shape.status(), "TensorProto has a bad shape");
  }
  const int64_t n = shape->num_elements();
  const std::string& content = proto.tensor_content();
  if (!content.empty()) {
    if (dtype == DT_STRING) {
      return absl::InvalidArgumentError("TensorProto of dtype string must not use tensor_content");
    }
    const int64_t need = MultiplyWithoutOverflow(n, DataTypeSize(dtype));
    if (need < 0 || static_cast<int64_t>(content.size()) != need) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor_content has ", content.size(), " bytes, but shape ",
                       shape->DebugString(), " of ", DataTypeString(dtype), " needs ",
                       need < 0 ? std::string("more than int64 bytes") : absl::StrCat(need)));
    }
  }
  for (ValField f : kAllFields) {
    const int count = FieldCount(proto, f);
    if (count == 0) continue;
    if (f != own) {
      return absl::InvalidArgumentError(absl::StrCat("TensorProto of dtype ", DataTypeString(dtype),
                                                     " carries ", FieldName(f), " values"));
    }
    if (!content.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("TensorProto sets both tensor_content and ", FieldName(f)));
    }
    const bool complex = f == ValField::kSComplex || f == ValField::kDComplex;
    if (complex && count % 2 != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(FieldName(f), " has an odd number of entries (", count,
                       "); complex values need a real and an imaginary part"));
    }
    const int64_t elements = complex ? count / 2 : count;
    if (elements > n) {
      return absl::InvalidArgumentError(absl::StrCat(FieldName(f), " has ", elements,
                                                     " values, but shape ", shape->DebugString(),
                                                     " has only ", n, " elements"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<TensorShape> TensorProtoShape(const TensorProto& proto) {
  TW_RETURN_IF_ERROR(ValidateTensorProto(proto));
  return TensorShape::FromProto(proto.tensor_shape());
}

namespace {

// InvalidArgument for a shape of more elements than the decoders return.
absl::Status CheckDecodable(const TensorShape& shape) {
  if (shape.num_elements() > kMaxDecodedElements) {
    return absl::InvalidArgumentError(
        absl::StrCat("A constant of shape ", shape.DebugString(), " has ", shape.num_elements(),
                     " elements, more than the ", kMaxDecodedElements,
                     " a shape, an axis list or a literal is decoded with"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<int64_t>> TensorProtoAsInt64s(const TensorProto& proto) {
  TW_ASSIGN_OR_RETURN(const TensorShape shape, TensorProtoShape(proto));
  TW_RETURN_IF_ERROR(CheckDecodable(shape));
  if (!IsIntegerLike(proto.dtype())) {
    return absl::InvalidArgumentError(
        absl::StrCat("Expected an integer tensor, got ", DataTypeString(proto.dtype())));
  }
  std::vector<int64_t> out;
  const int64_t n = shape.num_elements();
  if (HasNoValues(proto)) return std::vector<int64_t>(n, 0);
  out.reserve(n);
  for (int64_t i = 0; i < n; ++i) {
    bool fits;
    out.push_back(ElementAsInt64(proto, i, &fits));
    if (!fits) {
      return absl::InvalidArgumentError(
          absl::StrCat("Element ", i, " of a uint64 tensor does not fit in int64"));
    }
  }
  return out;
}

absl::StatusOr<std::vector<double>> TensorProtoAsDoubles(const TensorProto& proto) {
  TW_ASSIGN_OR_RETURN(const TensorShape shape, TensorProtoShape(proto));
  TW_RETURN_IF_ERROR(CheckDecodable(shape));
  const DataType dtype = proto.dtype();
  const int64_t n = shape.num_elements();
  if (IsIntegerLike(dtype)) {
    TW_ASSIGN_OR_RETURN(std::vector<int64_t> ints, TensorProtoAsInt64s(proto));
    return std::vector<double>(ints.begin(), ints.end());
  }
  if (!DataTypeIsFloating(dtype)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Expected a real-number tensor, got ", DataTypeString(dtype)));
  }
  if (HasNoValues(proto)) return std::vector<double>(n, 0.0);
  std::vector<double> out;
  out.reserve(n);
  for (int64_t i = 0; i < n; ++i) out.push_back(ElementAsDouble(proto, i));
  return out;
}

absl::StatusOr<std::vector<std::string>> TensorProtoAsStrings(const TensorProto& proto) {
  TW_ASSIGN_OR_RETURN(const TensorShape shape, TensorProtoShape(proto));
  TW_RETURN_IF_ERROR(CheckDecodable(shape));
  if (proto.dtype() != DT_STRING) {
    return absl::InvalidArgumentError(
        absl::StrCat("Expected a string tensor, got ", DataTypeString(proto.dtype())));
  }
  const int64_t n = shape.num_elements();
  if (proto.string_val_size() == 0) return std::vector<std::string>(n);
  std::vector<std::string> out;
  out.reserve(n);
  for (int64_t i = 0; i < n; ++i) out.push_back(Repeated(proto.string_val(), i));
  return out;
}

namespace {

template <typename T>
TensorProto FromDoubles(const std::vector<double>& v, const TensorShape& shape) {
  std::vector<T> cast(v.begin(), v.end());
  return MakeTensorProto<T>(absl::MakeConstSpan(cast), shape);
}

template <typename T>
absl::StatusOr<TensorProto> FromInts(const std::vector<int64_t>& v, const TensorShape& shape,
                                     DataType to) {
  std::vector<T> cast;
  cast.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const int64_t x = v[i];
    const bool in_range =
        std::is_signed_v<T> ? (x >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
                               x <= static_cast<int64_t>(std::numeric_limits<T>::max()))
                            : (x >= 0 && static_cast<uint64_t>(x) <=
                                             static_cast<uint64_t>(std::numeric_limits<T>::max()));
    if (!in_range) {
      return absl::InvalidArgumentError(
          absl::StrCat("Value ", x, " (element ", i, ") does not fit in ", DataTypeString(to)));
    }
    cast.push_back(static_cast<T>(x));
  }
  return MakeTensorProto<T>(absl::MakeConstSpan(cast), shape);
}

}  // namespace

absl::StatusOr<TensorProto> ConvertTensorProto(const TensorProto& proto, DataType to) {
  TW_ASSIGN_OR_RETURN(const TensorShape shape, TensorProtoShape(proto));
  const DataType from = proto.dtype();
  if (from == to) return proto;
  const bool from_int = IsIntegerLike(from) && !DataTypeIsQuantized(from);
  const bool from_float = DataTypeIsFloating(from);
  if (!from_int && !from_float) {
    return absl::InvalidArgumentError(absl::StrCat("Cannot convert a ", DataTypeString(from),
                                                   " constant to ", DataTypeString(to)));
  }
  // Floating and complex targets accept any real value (rounded to the
  // target; imaginary part 0).
  if (to == DT_FLOAT || to == DT_DOUBLE || to == DT_COMPLEX64 || to == DT_COMPLEX128) {
    TW_ASSIGN_OR_RETURN(std::vector<double> v, TensorProtoAsDoubles(proto));
    if (to == DT_FLOAT) return FromDoubles<float>(v, shape);
    if (to == DT_COMPLEX64) return FromDoubles<complex64>(v, shape);
    if (to == DT_COMPLEX128) return FromDoubles<complex128>(v, shape);
    return FromDoubles<double>(v, shape);
  }
  // Integer and bool targets need integral values in range.
  std::vector<int64_t> ints;
  if (from_int) {
    TW_ASSIGN_OR_RETURN(ints, TensorProtoAsInt64s(proto));
  } else {
    TW_ASSIGN_OR_RETURN(std::vector<double> v, TensorProtoAsDoubles(proto));
    ints.reserve(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      const double x = v[i];
      if (!std::isfinite(x) || x != std::trunc(x) || x < -9.2e18 || x > 9.2e18) {
        return absl::InvalidArgumentError(
            absl::StrCat("Value ", x, " (element ", i, ") is not an exact ", DataTypeString(to)));
      }
      ints.push_back(static_cast<int64_t>(x));
    }
  }
  switch (to) {
    case DT_INT8:
      return FromInts<int8_t>(ints, shape, to);
    case DT_UINT8:
      return FromInts<uint8_t>(ints, shape, to);
    case DT_INT16:
      return FromInts<int16_t>(ints, shape, to);
    case DT_UINT16:
      return FromInts<uint16_t>(ints, shape, to);
    case DT_INT32:
      return FromInts<int32_t>(ints, shape, to);
    case DT_UINT32:
      return FromInts<uint32_t>(ints, shape, to);
    case DT_INT64:
      return FromInts<int64_t>(ints, shape, to);
    case DT_UINT64:
      return FromInts<uint64_t>(ints, shape, to);
    case DT_BOOL: {
      for (size_t i = 0; i < ints.size(); ++i) {
        if (ints[i] != 0 && ints[i] != 1) {
          return absl::InvalidArgumentError(
              absl::StrCat("Value ", ints[i], " (element ", i, ") is not a bool"));
        }
      }
      std::unique_ptr<bool[]> b(new bool[ints.size()]);
      for (size_t i = 0; i < ints.size(); ++i) b[i] = ints[i] != 0;
      return MakeTensorProto<bool>(absl::MakeConstSpan(b.get(), ints.size()), shape);
    }
    default:
      return absl::InvalidArgumentError(absl::StrCat("Cannot convert a ", DataTypeString(from),
                                                     " constant to ", DataTypeString(to)));
  }
}

}  // namespace towerflow
