// NodeDef helpers: reading typed attrs, filling OpDef defaults, validating
// attrs against an OpDef, expanding an op's argument lists into input and
// output types, and parsing input strings ("x", "x:1", "^x").
//
//   AddDefaultsToNodeDef(op_def, &node_def);
//   TW_RETURN_IF_ERROR(ValidateNodeDefAttrs(node_def, op_def));
//   DataTypeVector in, out;
//   TW_RETURN_IF_ERROR(InOutTypesForNode(node_def, op_def, &in, &out));
//   int64_t n;
//   TW_RETURN_IF_ERROR(GetNodeAttr(node_def, "N", &n));
//
// Every function treats the NodeDef as untrusted: bad values are Status
// errors, never crashes. Pure functions; thread-safe.
#ifndef TOWERFLOW_FRAMEWORK_NODE_DEF_UTIL_H_
#define TOWERFLOW_FRAMEWORK_NODE_DEF_UTIL_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/tensor_shape.h"
#include "core/types.h"
#include "proto/attr_value.pb.h"
#include "proto/node_def.pb.h"
#include "proto/op_def.pb.h"

namespace towerflow {

// The largest list length (`N`, `num_split`, a type list) a node may declare
// for its outputs. Inputs are bounded by the NodeDef itself; outputs are not,
// so without a cap a NodeDef of a few bytes could demand billions of them.
inline constexpr int64_t kMaxArgListLength = 1 << 16;

// Node names: [A-Za-z0-9.][A-Za-z0-9_>./-]* (TensorFlow's rule: a dash may follow the first).
bool IsValidNodeName(absl::string_view name);
// Op names: [A-Za-z0-9>_][A-Za-z0-9>_]* ("MatMul", "_Send").
bool IsValidOpName(absl::string_view name);
// Attr names: [A-Za-z_][A-Za-z0-9_]*; names starting with '_' are internal.
bool IsValidAttrName(absl::string_view name);

// One parsed entry of NodeDef.input.
struct TensorId {
  std::string node;
  int index = 0;  // kControlSlot (-1) for "^node"
  bool IsControl() const { return index < 0; }
};
inline constexpr int kControlSlot = -1;

// "x" -> {x, 0}; "x:3" -> {x, 3}; "^x" -> {x, -1}. InvalidArgument for an
// empty name, a bad or negative index, or trailing junk.
absl::StatusOr<TensorId> ParseTensorName(absl::string_view name);
// The inverse: "x" for index 0, "x:3", "^x".
std::string TensorIdString(absl::string_view node, int index);

// Sets every attr the OpDef declares with a default and the NodeDef lacks.
void AddDefaultsToNodeDef(const OpDef& op_def, NodeDef* node_def);

// Checks the attrs of `node_def` (defaults already added) against `op_def`:
// no empty names, no unknown attrs except '_'-prefixed ones, every declared
// attr present, of its type, within allowed_values, and at least its minimum.
// InvalidArgument naming the attr.
absl::Status ValidateNodeDefAttrs(const NodeDef& node_def, const OpDef& op_def);

// The types of the node's inputs and outputs, with `N * T` and type lists
// expanded; is_ref arguments give ref types. InvalidArgument when an attr it
// needs is missing or of the wrong type, or a list is longer than
// kMaxArgListLength.
absl::Status InOutTypesForNode(const NodeDef& node_def, const OpDef& op_def, DataTypeVector* inputs,
                               DataTypeVector* outputs);

// Argument name -> [start, stop) of the expanded inputs / outputs.
using NameRangeMap = absl::flat_hash_map<std::string, std::pair<int, int>>;
absl::Status NameRangesForNode(const NodeDef& node_def, const OpDef& op_def, NameRangeMap* inputs,
                               NameRangeMap* outputs);

// Typed attr reads. InvalidArgument when the attr is absent ("No attr named
// 'x'") or of another type; int32 reads also check the range.
absl::Status GetNodeAttr(const NodeDef& node_def, absl::string_view name, int64_t* value);
absl::Status GetNodeAttr(const NodeDef& node_def, absl::string_view name, int32_t* value);
absl::Status GetNodeAttr(const NodeDef& node_def, absl::string_view name, float* value);
absl::Status GetNodeAttr(const NodeDef& node_def, absl::string_view name, bool* value);
absl::Status GetNodeAttr(const NodeDef& node_def, absl::string_view name, std::string* value);
absl::Status GetNodeAttr(const NodeDef& node_def, absl::string_view name, DataType* value);
absl::Status GetNodeAttr(const NodeDef& node_def, absl::string_view name,
                         PartialTensorShape* value);
absl::Status GetNodeAttr(const NodeDef& node_def, absl::string_view name,
                         const TensorProto** value);
absl::Status GetNodeAttr(const NodeDef& node_def, absl::string_view name,
                         std::vector<int64_t>* value);
absl::Status GetNodeAttr(const NodeDef& node_def, absl::string_view name,
                         std::vector<int32_t>* value);
absl::Status GetNodeAttr(const NodeDef& node_def, absl::string_view name,
                         std::vector<float>* value);
absl::Status GetNodeAttr(const NodeDef& node_def, absl::string_view name,
                         std::vector<std::string>* value);
absl::Status GetNodeAttr(const NodeDef& node_def, absl::string_view name, DataTypeVector* value);
absl::Status GetNodeAttr(const NodeDef& node_def, absl::string_view name,
                         std::vector<PartialTensorShape>* value);
absl::Status GetNodeAttr(const NodeDef& node_def, absl::string_view name,
                         const NameAttrList** value);

// "name = MatMul[T=float, transpose_a=false](a, b)" for messages and tools.
std::string SummarizeNodeDef(const NodeDef& node_def);

}  // namespace towerflow

#endif  // TOWERFLOW_FRAMEWORK_NODE_DEF_UTIL_H_
