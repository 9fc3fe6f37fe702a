#include "framework/node_def_util.h"

#include <algorithm>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "framework/attr_value_util.h"

namespace towerflow {
namespace {

bool IsNameChar(char c, absl::string_view extra) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
         extra.find(c) != absl::string_view::npos;
}

const OpDef::AttrDef* FindAttrDef(const OpDef& op_def, absl::string_view name) {
  for (const auto& attr : op_def.attr()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

absl::StatusOr<const AttrValue*> FindAttr(const NodeDef& node_def, absl::string_view name,
                                          AttrValue::ValueCase want, const char* want_name) {
  auto it = node_def.attr().find(std::string(name));
  if (it == node_def.attr().end()) {
    return absl::InvalidArgumentError(absl::StrCat("No attr named '", name, "' in NodeDef"));
  }
  if (it->second.value_case() != want) {
    return absl::InvalidArgumentError(absl::StrCat("Attr '", name, "' has a value of type '",
                                                   AttrValueTypeString(it->second), "' where '",
                                                   want_name, "' is expected"));
  }
  return &it->second;
}

// Number of list entries of the kind named by `type` ("list(int)" etc.).
int ListLength(const AttrValue& value) {
  const auto& l = value.list();
  return l.s_size() + l.i_size() + l.f_size() + l.b_size() + l.type_size() + l.shape_size() +
         l.tensor_size() + l.func_size();
}

absl::Status CheckAllowed(const OpDef::AttrDef& def, const AttrValue& value) {
  if (!def.has_allowed_values()) return absl::OkStatus();
  const AttrValue::ListValue& allowed = def.allowed_values().list();
  const auto type_allowed = [&](int t) {
    for (int a : allowed.type()) {
      if (a == t) return true;
    }
    return false;
  };
  const auto string_allowed = [&](const std::string& s) {
    for (const std::string& a : allowed.s()) {
      if (a == s) return true;
    }
    return false;
  };
  const auto allowed_types = [&] {
    DataTypeVector types;
    for (int t : allowed.type()) types.push_back(static_cast<DataType>(t));
    return DataTypeSliceString(types);
  };
  const auto allowed_strings = [&] {
    return absl::StrJoin(allowed.s(), ", ", [](std::string* out, const std::string& s) {
      absl::StrAppend(out, "\"", s, "\"");
    });
  };
  if (def.type() == "type" && !type_allowed(value.type())) {
    return absl::InvalidArgumentError(
        absl::StrCat("Value for attr '", def.name(), "' of ", DataTypeString(value.type()),
                     " is not in the list of allowed values: ", allowed_types()));
  }
  if (def.type() == "list(type)") {
    for (int t : value.list().type()) {
      if (!type_allowed(t)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Value for attr '", def.name(), "' of ", DataTypeString(static_cast<DataType>(t)),
            " is not in the list of allowed values: ", allowed_types()));
      }
    }
  }
  if (def.type() == "string" && !string_allowed(value.s())) {
    return absl::InvalidArgumentError(
        absl::StrCat("Value for attr '", def.name(), "' of \"", value.s(),
                     "\" is not in the list of allowed values: ", allowed_strings()));
  }
  if (def.type() == "list(string)") {
    for (const std::string& s : value.list().s()) {
      if (!string_allowed(s)) {
        return absl::InvalidArgumentError(
            absl::StrCat("Value for attr '", def.name(), "' of \"", s,
                         "\" is not in the list of allowed values: ", allowed_strings()));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckMinimum(const OpDef::AttrDef& def, const AttrValue& value) {
  if (!def.has_minimum()) return absl::OkStatus();
  if (def.type() == "int") {
    if (value.i() < def.minimum()) {
      return absl::InvalidArgumentError(absl::StrCat("Value for attr '", def.name(), "' of ",
                                                     value.i(), " must be at least minimum ",
                                                     def.minimum()));
    }
  } else if (ListLength(value) < def.minimum()) {
    return absl::InvalidArgumentError(absl::StrCat("Length for attr '", def.name(), "' of ",
                                                   ListLength(value), " must be at least minimum ",
                                                   def.minimum()));
  }
  return absl::OkStatus();
}

// Appends the types of one argument to *types.
absl::Status AddArgTypes(const NodeDef& node_def, const OpDef::ArgDef& arg, DataTypeVector* types) {
  const auto context = [&](const absl::Status& s) {
    return AddErrorContext(s, absl::StrCat("argument '", arg.name(), "'"));
  };
  DataTypeVector arg_types;
  if (!arg.number_attr().empty()) {
    int64_t n;
    TW_RETURN_IF_ERROR(context(GetNodeAttr(node_def, arg.number_attr(), &n)));
    if (n < 0 || n > kMaxArgListLength) {
      return absl::InvalidArgumentError(absl::StrCat("Attr '", arg.number_attr(), "' = ", n,
                                                     " sets the length of argument '", arg.name(),
                                                     "' outside [0, ", kMaxArgListLength, "]"));
    }
    DataType dtype = arg.type();
    if (!arg.type_attr().empty()) {
      TW_RETURN_IF_ERROR(context(GetNodeAttr(node_def, arg.type_attr(), &dtype)));
    }
    arg_types.assign(n, dtype);
  } else if (!arg.type_list_attr().empty()) {
    TW_RETURN_IF_ERROR(context(GetNodeAttr(node_def, arg.type_list_attr(), &arg_types)));
    if (static_cast<int64_t>(arg_types.size()) > kMaxArgListLength) {
      return absl::InvalidArgumentError(
          absl::StrCat("Attr '", arg.type_list_attr(), "' lists ", arg_types.size(),
                       " types, more than the maximum ", kMaxArgListLength));
    }
  } else if (!arg.type_attr().empty()) {
    DataType dtype;
    TW_RETURN_IF_ERROR(context(GetNodeAttr(node_def, arg.type_attr(), &dtype)));
    arg_types.push_back(dtype);
  } else {
    if (arg.type() == DT_INVALID) {
      return absl::InvalidArgumentError(absl::StrCat("argument '", arg.name(), "' has no type"));
    }
    arg_types.push_back(arg.type());
  }
  for (DataType dt : arg_types) {
    if (!IsValidDataType(dt) || IsRefType(dt)) {
      return absl::InvalidArgumentError(
          absl::StrCat("argument '", arg.name(), "' has invalid type ", DataTypeString(dt)));
    }
    types->push_back(arg.is_ref() ? MakeRefType(dt) : dt);
  }
  return absl::OkStatus();
}

absl::Status AddRanges(const NodeDef& node_def,
                       const google::protobuf::RepeatedPtrField<OpDef::ArgDef>& args,
                       NameRangeMap* ranges) {
  int start = 0;
  for (const OpDef::ArgDef& arg : args) {
    DataTypeVector types;
    TW_RETURN_IF_ERROR(AddArgTypes(node_def, arg, &types));
    const int stop = start + static_cast<int>(types.size());
    (*ranges)[arg.name()] = {start, stop};
    start = stop;
  }
  return absl::OkStatus();
}

}  // namespace

bool IsValidNodeName(absl::string_view name) {
  if (name.empty() || !IsNameChar(name[0], ".")) return false;
  for (char c : name.substr(1)) {
    if (!IsNameChar(c, "_>./-")) return false;
  }
  return true;
}

bool IsValidOpName(absl::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!IsNameChar(c, ">_")) return false;
  }
  return true;
}

bool IsValidAttrName(absl::string_view name) {
  if (name.empty()) return false;
  if (!absl::ascii_isalpha(static_cast<unsigned char>(name[0])) && name[0] != '_') {
    return false;
  }
  for (char c : name) {
    if (!IsNameChar(c, "_")) return false;
  }
  return true;
}

absl::StatusOr<TensorId> ParseTensorName(absl::string_view name) {
  TensorId id;
  absl::string_view rest = name;
  if (!rest.empty() && rest[0] == '^') {
    rest.remove_prefix(1);
    if (rest.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("Control input '", name, "' names no node"));
    }
    id.node = std::string(rest);
    id.index = kControlSlot;
    return id;
  }
  const size_t colon = rest.rfind(':');
  if (colon != absl::string_view::npos) {
    const absl::string_view digits = rest.substr(colon + 1);
    int32_t index;
    const bool all_digits =
        !digits.empty() && std::all_of(digits.begin(), digits.end(), [](char c) {
          return absl::ascii_isdigit(static_cast<unsigned char>(c));
        });
    if (!all_digits || !absl::SimpleAtoi(digits, &index)) {
      return absl::InvalidArgumentError(
          absl::StrCat("Input '", name, "' has a bad output index '", digits, "'"));
    }
    id.index = index;
    rest = rest.substr(0, colon);
  }
  if (rest.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("Input '", name, "' names no node"));
  }
  id.node = std::string(rest);
  return id;
}

std::string TensorIdString(absl::string_view node, int index) {
  if (index == kControlSlot) return absl::StrCat("^", node);
  if (index == 0) return std::string(node);
  return absl::StrCat(node, ":", index);
}

void AddDefaultsToNodeDef(const OpDef& op_def, NodeDef* node_def) {
  auto* attrs = node_def->mutable_attr();
  for (const auto& attr : op_def.attr()) {
    if (attr.has_default_value() && attrs->find(attr.name()) == attrs->end()) {
      (*attrs)[attr.name()] = attr.default_value();
    }
  }
}

absl::Status ValidateNodeDefAttrs(const NodeDef& node_def, const OpDef& op_def) {
  for (const auto& [name, value] : node_def.attr()) {
    if (name.empty()) {
      return absl::InvalidArgumentError("NodeDef has an attr with an empty name");
    }
    if (!IsValidAttrName(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("NodeDef has an attr with an invalid name '", name, "'"));
    }
    if (name[0] == '_') continue;  // internal attrs (_class, _output_shapes)
    if (FindAttrDef(op_def, name) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "NodeDef mentions attr '", name, "', which op ", op_def.name(), " does not have"));
    }
  }
  for (const auto& def : op_def.attr()) {
    auto it = node_def.attr().find(def.name());
    if (it == node_def.attr().end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("NodeDef missing attr '", def.name(), "' from op ", op_def.name()));
    }
    const absl::Status typed = AttrValueHasType(it->second, def.type());
    if (!typed.ok()) {
      return AddErrorContext(typed, absl::StrCat("attr '", def.name(), "'"));
    }
    TW_RETURN_IF_ERROR(CheckAllowed(def, it->second));
    TW_RETURN_IF_ERROR(CheckMinimum(def, it->second));
  }
  return absl::OkStatus();
}

absl::Status InOutTypesForNode(const NodeDef& node_def, const OpDef& op_def, DataTypeVector* inputs,
                               DataTypeVector* outputs) {
  inputs->clear();
  outputs->clear();
  for (const auto& arg : op_def.input_arg()) {
    TW_RETURN_IF_ERROR(AddArgTypes(node_def, arg, inputs));
  }
  for (const auto& arg : op_def.output_arg()) {
    TW_RETURN_IF_ERROR(AddArgTypes(node_def, arg, outputs));
  }
  return absl::OkStatus();
}

absl::Status NameRangesForNode(const NodeDef& node_def, const OpDef& op_def, NameRangeMap* inputs,
                               NameRangeMap* outputs) {
  if (inputs != nullptr) TW_RETURN_IF_ERROR(AddRanges(node_def, op_def.input_arg(), inputs));
  if (outputs != nullptr) TW_RETURN_IF_ERROR(AddRanges(node_def, op_def.output_arg(), outputs));
  return absl::OkStatus();
}

absl::Status GetNodeAttr(const NodeDef& node_def, absl::string_view name, int64_t* value) {
  TW_ASSIGN_OR_RETURN(const AttrValue* v, FindAttr(node_def, name, AttrValue::kI, "int"));
  *value = v->i();
  return absl::OkStatus();
}

absl::Status GetNodeAttr(const NodeDef& node_def, absl::string_view name, int32_t* value) {
  int64_t v;
  TW_RETURN_IF_ERROR(GetNodeAttr(node_def, name, &v));
  if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Attr '", name, "' = ", v, " does not fit in int32"));
  }
  *value = static_cast<int32_t>(v);
  return absl::OkStatus();
}

absl::Status GetNodeAttr(const NodeDef& node_def, absl::string_view name, float* value) {
  TW_ASSIGN_OR_RETURN(const AttrValue* v, FindAttr(node_def, name, AttrValue::kF, "float"));
  *value = v->f();
  return absl::OkStatus();
}

absl::Status GetNodeAttr(const NodeDef& node_def, absl::string_view name, bool* value) {
  TW_ASSIGN_OR_RETURN(const AttrValue* v, FindAttr(node_def, name, AttrValue::kB, "bool"));
  *value = v->b();
  return absl::OkStatus();
}

absl::Status GetNodeAttr(const NodeDef& node_def, absl::string_view name, std::string* value) {
  TW_ASSIGN_OR_RETURN(const AttrValue* v, FindAttr(node_def, name, AttrValue::kS, "string"));
  *value = v->s();
  return absl::OkStatus();
}

absl::Status GetNodeAttr(const NodeDef& node_def, absl::string_view name, DataType* value) {
  TW_ASSIGN_OR_RETURN(const AttrValue* v, FindAttr(node_def, name, AttrValue::kType, "type"));
  if (!IsValidDataType(v->type())) {
    return absl::InvalidArgumentError(
        absl::StrCat("Attr '", name, "' holds invalid DataType enum ", v->type()));
  }
  *value = v->type();
  return absl::OkStatus();
}

absl::Status GetNodeAttr(const NodeDef& node_def, absl::string_view name,
                         PartialTensorShape* value) {
  TW_ASSIGN_OR_RETURN(const AttrValue* v, FindAttr(node_def, name, AttrValue::kShape, "shape"));
  absl::StatusOr<PartialTensorShape> s = PartialTensorShape::FromProto(v->shape());
  if (!s.ok()) return AddErrorContext(s.status(), absl::StrCat("attr '", name, "'"));
  *value = *std::move(s);
  return absl::OkStatus();
}

absl::Status GetNodeAttr(const NodeDef& node_def, absl::string_view name,
                         const TensorProto** value) {
  TW_ASSIGN_OR_RETURN(const AttrValue* v, FindAttr(node_def, name, AttrValue::kTensor, "tensor"));
  *value = &v->tensor();
  return absl::OkStatus();
}

absl::Status GetNodeAttr(const NodeDef& node_def, absl::string_view name,
                         std::vector<int64_t>* value) {
  TW_ASSIGN_OR_RETURN(const AttrValue* v, FindAttr(node_def, name, AttrValue::kList, "list(int)"));
  value->assign(v->list().i().begin(), v->list().i().end());
  return absl::OkStatus();
}

absl::Status GetNodeAttr(const NodeDef& node_def, absl::string_view name,
                         std::vector<int32_t>* value) {
  std::vector<int64_t> v;
  TW_RETURN_IF_ERROR(GetNodeAttr(node_def, name, &v));
  value->clear();
  for (int64_t x : v) {
    if (x < std::numeric_limits<int32_t>::min() || x > std::numeric_limits<int32_t>::max()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Attr '", name, "' holds ", x, ", which does not fit in int32"));
    }
    value->push_back(static_cast<int32_t>(x));
  }
  return absl::OkStatus();
}

absl::Status GetNodeAttr(const NodeDef& node_def, absl::string_view name,
                         std::vector<float>* value) {
  TW_ASSIGN_OR_RETURN(const AttrValue* v,
                      FindAttr(node_def, name, AttrValue::kList, "list(float)"));
  value->assign(v->list().f().begin(), v->list().f().end());
  return absl::OkStatus();
}

absl::Status GetNodeAttr(const NodeDef& node_def, absl::string_view name,
                         std::vector<std::string>* value) {
  TW_ASSIGN_OR_RETURN(const AttrValue* v,
                      FindAttr(node_def, name, AttrValue::kList, "list(string)"));
  value->assign(v->list().s().begin(), v->list().s().end());
  return absl::OkStatus();
}

absl::Status GetNodeAttr(const NodeDef& node_def, absl::string_view name, DataTypeVector* value) {
  TW_ASSIGN_OR_RETURN(const AttrValue* v, FindAttr(node_def, name, AttrValue::kList, "list(type)"));
  value->clear();
  for (int t : v->list().type()) {
    if (!IsValidDataType(t)) {
      return absl::InvalidArgumentError(
          absl::StrCat("Attr '", name, "' holds invalid DataType enum ", t));
    }
    value->push_back(static_cast<DataType>(t));
  }
  return absl::OkStatus();
}

absl::Status GetNodeAttr(const NodeDef& node_def, absl::string_view name,
                         std::vector<PartialTensorShape>* value) {
  TW_ASSIGN_OR_RETURN(const AttrValue* v,
                      FindAttr(node_def, name, AttrValue::kList, "list(shape)"));
  value->clear();
  for (const auto& proto : v->list().shape()) {
    TW_ASSIGN_OR_RETURN(PartialTensorShape s, PartialTensorShape::FromProto(proto));
    value->push_back(std::move(s));
  }
  return absl::OkStatus();
}

absl::Status GetNodeAttr(const NodeDef& node_def, absl::string_view name,
                         const NameAttrList** value) {
  TW_ASSIGN_OR_RETURN(const AttrValue* v, FindAttr(node_def, name, AttrValue::kFunc, "func"));
  *value = &v->func();
  return absl::OkStatus();
}

std::string SummarizeNodeDef(const NodeDef& node_def) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : node_def.attr()) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  std::string attrs = absl::StrJoin(keys, ", ", [&](std::string* out, const std::string& k) {
    absl::StrAppend(out, k, "=", SummarizeAttrValue(node_def.attr().at(k)));
  });
  return absl::StrCat(node_def.name(), " = ", node_def.op(), "[", attrs, "](",
                      absl::StrJoin(node_def.input(), ", "), ")");
}

}  // namespace towerflow
