// AttrValue helpers: setting values from C++ types, checking a value against
// an attr type ("int", "list(type)", ...), parsing defaults written in op
// specs, and printing values for messages and tools.
//
//   AttrValue v;
//   SetAttrValue(std::vector<int64_t>{1, 2, 2, 1}, &v);
//   TW_RETURN_IF_ERROR(AttrValueHasType(v, "list(int)"));
//   SummarizeAttrValue(v);  // "[1, 2, 2, 1]"
//
// Pure functions; thread-safe.
#ifndef TOWERFLOW_FRAMEWORK_ATTR_VALUE_UTIL_H_
#define TOWERFLOW_FRAMEWORK_ATTR_VALUE_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/tensor_shape.h"
#include "core/types.h"
#include "proto/attr_value.pb.h"

namespace towerflow {

void SetAttrValue(int64_t value, AttrValue* out);
void SetAttrValue(int32_t value, AttrValue* out);
void SetAttrValue(float value, AttrValue* out);
void SetAttrValue(double value, AttrValue* out);
void SetAttrValue(bool value, AttrValue* out);
void SetAttrValue(absl::string_view value, AttrValue* out);
void SetAttrValue(const std::string& value, AttrValue* out);
void SetAttrValue(const char* value, AttrValue* out);
void SetAttrValue(DataType value, AttrValue* out);
void SetAttrValue(const PartialTensorShape& value, AttrValue* out);
void SetAttrValue(const TensorShape& value, AttrValue* out);
void SetAttrValue(const TensorShapeProto& value, AttrValue* out);
void SetAttrValue(const TensorProto& value, AttrValue* out);
void SetAttrValue(const NameAttrList& value, AttrValue* out);
void SetAttrValue(absl::Span<const int64_t> value, AttrValue* out);
void SetAttrValue(absl::Span<const int32_t> value, AttrValue* out);
void SetAttrValue(absl::Span<const float> value, AttrValue* out);
void SetAttrValue(const std::vector<bool>& value, AttrValue* out);
void SetAttrValue(absl::Span<const std::string> value, AttrValue* out);
void SetAttrValue(absl::Span<const DataType> value, AttrValue* out);
void SetAttrValue(absl::Span<const PartialTensorShape> value, AttrValue* out);
void SetAttrValue(absl::Span<const TensorProto> value, AttrValue* out);
void SetAttrValue(absl::Span<const NameAttrList> value, AttrValue* out);
void SetAttrValue(const std::vector<int64_t>& value, AttrValue* out);
void SetAttrValue(const std::vector<int32_t>& value, AttrValue* out);
void SetAttrValue(const std::vector<float>& value, AttrValue* out);
void SetAttrValue(const std::vector<std::string>& value, AttrValue* out);
void SetAttrValue(const DataTypeVector& value, AttrValue* out);
void SetAttrValue(const std::vector<DataType>& value, AttrValue* out);
void SetAttrValue(const std::vector<PartialTensorShape>& value, AttrValue* out);

// True for the attr type strings of OpDef: "int", "float", "bool", "string",
// "type", "shape", "tensor", "func" and "list(...)" of each.
bool IsValidAttrType(absl::string_view type);

// The attr type a value holds: "int", "list(float)", "list(?)" for an empty
// list (which matches every list type), "placeholder", or "" when unset.
std::string AttrValueTypeString(const AttrValue& value);

// OK when `value` fits `type` (an AttrDef type string). InvalidArgument
// otherwise: the wrong kind ("a value of type 'int' where 'type' is
// expected"), a list mixing kinds, an invalid or ref DataType, a bad shape, a
// bad TensorProto, or a function-body placeholder outside a function.
absl::Status AttrValueHasType(const AttrValue& value, absl::string_view type);

// Parses a default written in an op spec: "false", "-1", "1e-4", "'NHWC'",
// "DT_FLOAT" or "float", "[1, 1, 1, 1]", "[]", "{ unknown_rank: true }" (a
// text-format TensorShapeProto or TensorProto for shape and tensor attrs).
absl::Status ParseAttrValue(absl::string_view type, absl::string_view text, AttrValue* out);

// A short human form: 3, 0.5, true, "NHWC", float, [?,784], [1, 2],
// float [2,2] for tensors, f[...] for functions.
std::string SummarizeAttrValue(const AttrValue& value);

// Equality that ignores serialization order of maps.
bool AreAttrValuesEqual(const AttrValue& a, const AttrValue& b);

}  // namespace towerflow

#endif  // TOWERFLOW_FRAMEWORK_ATTR_VALUE_UTIL_H_
