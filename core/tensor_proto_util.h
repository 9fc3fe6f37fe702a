// Reading, checking and building TensorProto values without a runtime Tensor.
//
// The graph layer needs constant values before anything runs: Const nodes,
// shape inference of Reshape/Fill from constant inputs, initializers. These
// helpers apply TensorFlow's decoding rules (tensor.cc FromProto):
//  * non-empty `tensor_content` holds exactly num_elements raw little-endian
//    values (never for strings);
//  * otherwise the `*_val` field of the dtype is used; when it has fewer
//    values than elements the last one repeats, and when empty the tensor is
//    zeros (empty strings).
// Towerflow is stricter than TensorFlow where TF silently accepts nonsense:
// more values than elements, values in another dtype's field, or both
// content and values are InvalidArgument.
//
//   TensorProto p = MakeTensorProto<float>({1, 2, 3, 4}, TensorShape({2, 2}));
//   absl::StatusOr<std::vector<int64_t>> dims = TensorProtoAsInt64s(shape_proto);
//
// Pure functions; thread-safe.
#ifndef TOWERFLOW_CORE_TENSOR_PROTO_UTIL_H_
#define TOWERFLOW_CORE_TENSOR_PROTO_UTIL_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/float16.h"
#include "core/tensor_shape.h"
#include "core/types.h"
#include "proto/tensor.pb.h"

namespace towerflow {

// OK when `proto` decodes to a tensor: a concrete fixed-size or string dtype
// (no refs, resources, variants or sub-byte types), a fully defined valid
// shape, and values laid out by the rules above. Otherwise InvalidArgument
// saying what is wrong, e.g. "tensor_content has 12 bytes, but shape [2,2] of
// float needs 16".
absl::Status ValidateTensorProto(const TensorProto& proto);

// The shape of a valid proto (validates first).
absl::StatusOr<TensorShape> TensorProtoShape(const TensorProto& proto);

// The decoders below serve shapes, axis lists and literals: a proto of
// more elements than this is InvalidArgument before anything is allocated
// (a splat of shape [2^62] in a GraphDef is a few bytes).
inline constexpr int64_t kMaxDecodedElements = int64_t{1} << 24;

// All elements, row-major, of an integer-typed tensor (int8..int64,
// uint8..uint64, bool). InvalidArgument for other dtypes, for uint64 values
// past int64, for more than kMaxDecodedElements elements, or for a proto
// that fails ValidateTensorProto.
absl::StatusOr<std::vector<int64_t>> TensorProtoAsInt64s(const TensorProto& proto);

// All elements of a real-number or bool tensor (half and bfloat16 included),
// converted to double; the same errors.
absl::StatusOr<std::vector<double>> TensorProtoAsDoubles(const TensorProto& proto);

// All elements of a DT_STRING tensor; the same errors.
absl::StatusOr<std::vector<std::string>> TensorProtoAsStrings(const TensorProto& proto);

// The same values in dtype `to`. Only exact conversions are allowed: 2.0 to
// int32 works, 2.5 does not, 300 to uint8 does not. Used to give a literal
// constant the dtype an op expects (ops::Mul(s, x, 0.5) with float x).
absl::StatusOr<TensorProto> ConvertTensorProto(const TensorProto& proto, DataType to);

// Builds a TensorProto the way TensorFlow's Python writers do: numeric
// tensors of more than one element as tensor_content, scalars, bools,
// complex numbers and strings in their `*_val` field.
// REQUIRES: values.size() == shape.num_elements() and shape.IsValid().
template <typename T>
TensorProto MakeTensorProto(absl::Span<const T> values, const TensorShape& shape);

template <typename T>
TensorProto MakeTensorProto(std::initializer_list<T> values, const TensorShape& shape) {
  return MakeTensorProto<T>(absl::MakeConstSpan(values.begin(), values.size()), shape);
}

template <typename T>
TensorProto MakeScalarTensorProto(const T& value) {
  return MakeTensorProto<T>(absl::MakeConstSpan(&value, 1), TensorShape());
}

// A tensor of `shape` whose elements all equal `value`, stored compactly as a
// single `*_val` entry (how TensorFlow writes tf.zeros and tf.fill consts).
template <typename T>
TensorProto MakeFilledTensorProto(const T& value, const TensorShape& shape);

// ------------------------------------------------------------------ details

namespace tensor_proto_internal {

// Appends `value` to the `*_val` field for dtype DataTypeToEnum<T>::value.
void AppendValue(float value, TensorProto* proto);
void AppendValue(double value, TensorProto* proto);
void AppendValue(int32_t value, TensorProto* proto);
void AppendValue(int64_t value, TensorProto* proto);
void AppendValue(uint8_t value, TensorProto* proto);
void AppendValue(uint16_t value, TensorProto* proto);
void AppendValue(uint32_t value, TensorProto* proto);
void AppendValue(uint64_t value, TensorProto* proto);
void AppendValue(int16_t value, TensorProto* proto);
void AppendValue(int8_t value, TensorProto* proto);
void AppendValue(bool value, TensorProto* proto);
void AppendValue(const std::string& value, TensorProto* proto);
void AppendValue(half value, TensorProto* proto);
void AppendValue(bfloat16 value, TensorProto* proto);
void AppendValue(const complex64& value, TensorProto* proto);
void AppendValue(const complex128& value, TensorProto* proto);

// Whether Python writes this dtype as tensor_content when it has several
// elements.
bool UsesTensorContent(DataType dtype);

}  // namespace tensor_proto_internal

template <typename T>
TensorProto MakeTensorProto(absl::Span<const T> values, const TensorShape& shape) {
  TensorProto proto;
  constexpr DataType kType = DataTypeToEnum<T>::value;
  proto.set_dtype(kType);
  shape.AsProto(proto.mutable_tensor_shape());
  if constexpr ((std::is_arithmetic_v<T> || kIsFloat16<T>)&&!std::is_same_v<T, bool>) {
    if (values.size() > 1 && tensor_proto_internal::UsesTensorContent(kType)) {
      std::string* content = proto.mutable_tensor_content();
      content->resize(values.size() * sizeof(T));
      std::memcpy(content->data(), values.data(), values.size() * sizeof(T));
      return proto;
    }
  }
  for (const T& v : values) tensor_proto_internal::AppendValue(v, &proto);
  return proto;
}

template <typename T>
TensorProto MakeFilledTensorProto(const T& value, const TensorShape& shape) {
  TensorProto proto;
  proto.set_dtype(DataTypeToEnum<T>::value);
  shape.AsProto(proto.mutable_tensor_shape());
  if (shape.num_elements() > 0) tensor_proto_internal::AppendValue(value, &proto);
  return proto;
}

}  // namespace towerflow

#endif  // TOWERFLOW_CORE_TENSOR_PROTO_UTIL_H_
