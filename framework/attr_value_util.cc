#include "framework/attr_value_util.h"

#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "core/status_macros.h"
#include "core/tensor_proto_util.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/text_format.h"

namespace towerflow {

void SetAttrValue(int64_t value, AttrValue* out) { out->set_i(value); }
void SetAttrValue(int32_t value, AttrValue* out) { out->set_i(value); }
void SetAttrValue(float value, AttrValue* out) { out->set_f(value); }
void SetAttrValue(double value, AttrValue* out) { out->set_f(static_cast<float>(value)); }
void SetAttrValue(bool value, AttrValue* out) { out->set_b(value); }
void SetAttrValue(absl::string_view value, AttrValue* out) { out->set_s(std::string(value)); }
void SetAttrValue(const std::string& value, AttrValue* out) { out->set_s(value); }
void SetAttrValue(const char* value, AttrValue* out) { out->set_s(value); }
void SetAttrValue(DataType value, AttrValue* out) { out->set_type(value); }
void SetAttrValue(const PartialTensorShape& value, AttrValue* out) {
  value.AsProto(out->mutable_shape());
}
void SetAttrValue(const TensorShape& value, AttrValue* out) { value.AsProto(out->mutable_shape()); }
void SetAttrValue(const TensorShapeProto& value, AttrValue* out) { *out->mutable_shape() = value; }
void SetAttrValue(const TensorProto& value, AttrValue* out) { *out->mutable_tensor() = value; }
void SetAttrValue(const NameAttrList& value, AttrValue* out) { *out->mutable_func() = value; }
void SetAttrValue(absl::Span<const int64_t> value, AttrValue* out) {
  auto* list = out->mutable_list();
  list->Clear();
  for (int64_t v : value) list->add_i(v);
}
void SetAttrValue(absl::Span<const int32_t> value, AttrValue* out) {
  auto* list = out->mutable_list();
  list->Clear();
  for (int32_t v : value) list->add_i(v);
}
void SetAttrValue(absl::Span<const float> value, AttrValue* out) {
  auto* list = out->mutable_list();
  list->Clear();
  for (float v : value) list->add_f(v);
}
void SetAttrValue(const std::vector<bool>& value, AttrValue* out) {
  auto* list = out->mutable_list();
  list->Clear();
  for (bool v : value) list->add_b(v);
}
void SetAttrValue(absl::Span<const std::string> value, AttrValue* out) {
  auto* list = out->mutable_list();
  list->Clear();
  for (const std::string& v : value) list->add_s(v);
}
void SetAttrValue(absl::Span<const DataType> value, AttrValue* out) {
  auto* list = out->mutable_list();
  list->Clear();
  for (DataType v : value) list->add_type(v);
}
void SetAttrValue(absl::Span<const PartialTensorShape> value, AttrValue* out) {
  auto* list = out->mutable_list();
  list->Clear();
  for (const PartialTensorShape& v : value) v.AsProto(list->add_shape());
}
void SetAttrValue(absl::Span<const TensorProto> value, AttrValue* out) {
  auto* list = out->mutable_list();
  list->Clear();
  for (const TensorProto& v : value) *list->add_tensor() = v;
}
void SetAttrValue(absl::Span<const NameAttrList> value, AttrValue* out) {
  auto* list = out->mutable_list();
  list->Clear();
  for (const NameAttrList& v : value) *list->add_func() = v;
}
void SetAttrValue(const std::vector<int64_t>& value, AttrValue* out) {
  SetAttrValue(absl::MakeConstSpan(value), out);
}
void SetAttrValue(const std::vector<int32_t>& value, AttrValue* out) {
  SetAttrValue(absl::MakeConstSpan(value), out);
}
void SetAttrValue(const std::vector<float>& value, AttrValue* out) {
  SetAttrValue(absl::MakeConstSpan(value), out);
}
void SetAttrValue(const std::vector<std::string>& value, AttrValue* out) {
  SetAttrValue(absl::MakeConstSpan(value), out);
}
void SetAttrValue(const DataTypeVector& value, AttrValue* out) {
  SetAttrValue(absl::MakeConstSpan(value), out);
}
void SetAttrValue(const std::vector<DataType>& value, AttrValue* out) {
  SetAttrValue(absl::MakeConstSpan(value), out);
}
void SetAttrValue(const std::vector<PartialTensorShape>& value, AttrValue* out) {
  SetAttrValue(absl::MakeConstSpan(value), out);
}

namespace {

// The kinds a list holds, as "int", "float", ...; several when mixed.
std::vector<std::string> ListKinds(const AttrValue::ListValue& list) {
  std::vector<std::string> kinds;
  if (list.s_size() > 0) kinds.push_back("string");
  if (list.i_size() > 0) kinds.push_back("int");
  if (list.f_size() > 0) kinds.push_back("float");
  if (list.b_size() > 0) kinds.push_back("bool");
  if (list.type_size() > 0) kinds.push_back("type");
  if (list.shape_size() > 0) kinds.push_back("shape");
  if (list.tensor_size() > 0) kinds.push_back("tensor");
  if (list.func_size() > 0) kinds.push_back("func");
  return kinds;
}

absl::Status CheckTypeValue(int value) {
  if (!IsValidDataType(value)) {
    return absl::InvalidArgumentError(absl::StrCat("invalid DataType enum value ", value));
  }
  if (IsRefType(static_cast<DataType>(value))) {
    return absl::InvalidArgumentError(absl::StrCat("ref type ",
                                                   DataTypeString(static_cast<DataType>(value)),
                                                   " in an attr; attrs hold base types"));
  }
  return absl::OkStatus();
}

absl::Status CheckShapeValue(const TensorShapeProto& shape) {
  return PartialTensorShape::FromProto(shape).status();
}

absl::Status CheckFuncValue(const NameAttrList& func) {
  if (func.name().empty()) {
    return absl::InvalidArgumentError("function attr with an empty name");
  }
  for (const auto& [key, value] : func.attr()) {
    if (key.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("function '", func.name(), "' has an attr with an empty name"));
    }
    if (value.value_case() == AttrValue::kPlaceholder) continue;
    TW_RETURN_IF_ERROR(AttrValueHasType(value, AttrValueTypeString(value)));
  }
  return absl::OkStatus();
}

// Checks the contents of a scalar (non-list) value of kind `kind`.
absl::Status CheckScalar(const AttrValue& v, absl::string_view kind) {
  if (kind == "type") return CheckTypeValue(v.type());
  if (kind == "shape") return CheckShapeValue(v.shape());
  if (kind == "tensor") return ValidateTensorProto(v.tensor());
  if (kind == "func") return CheckFuncValue(v.func());
  return absl::OkStatus();
}

absl::Status CheckListContents(const AttrValue::ListValue& list, absl::string_view kind) {
  if (kind == "type") {
    for (int t : list.type()) TW_RETURN_IF_ERROR(CheckTypeValue(t));
  } else if (kind == "shape") {
    for (const auto& s : list.shape()) TW_RETURN_IF_ERROR(CheckShapeValue(s));
  } else if (kind == "tensor") {
    for (const auto& t : list.tensor()) TW_RETURN_IF_ERROR(ValidateTensorProto(t));
  } else if (kind == "func") {
    for (const auto& f : list.func()) TW_RETURN_IF_ERROR(CheckFuncValue(f));
  }
  return absl::OkStatus();
}

bool IsScalarKind(absl::string_view kind) {
  return kind == "string" || kind == "int" || kind == "float" || kind == "bool" || kind == "type" ||
         kind == "shape" || kind == "tensor" || kind == "func";
}

// Splits "a, 'b,c', {x: 1}" at top-level commas.
std::vector<std::string> SplitTopLevel(absl::string_view text) {
  std::vector<std::string> parts;
  std::string current;
  int depth = 0;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote != 0) {
      current.push_back(c);
      if (c == '\\' && i + 1 < text.size()) {
        current.push_back(text[++i]);
      } else if (c == quote) {
        quote = 0;
      }
      continue;
    }
    if (c == '\'' || c == '"') quote = c;
    if (c == '{' || c == '[' || c == '(') ++depth;
    if (c == '}' || c == ']' || c == ')') --depth;
    if (c == ',' && depth == 0) {
      parts.push_back(std::string(absl::StripAsciiWhitespace(current)));
      current.clear();
      continue;
    }
    current.push_back(c);
  }
  const std::string last(absl::StripAsciiWhitespace(current));
  if (!last.empty() || !parts.empty()) parts.push_back(last);
  return parts;
}

absl::Status ParseScalar(absl::string_view kind, absl::string_view text, AttrValue* out) {
  const auto bad = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot parse '", text, "' as a value of type ", kind));
  };
  if (kind == "int") {
    int64_t v;
    if (!absl::SimpleAtoi(text, &v)) return bad();
    out->set_i(v);
  } else if (kind == "float") {
    // TF's safe_strtof's words too (tfdbg's `lower_bound: float = -inf`),
    // before a C-style "f" suffix is dropped.
    absl::string_view t = text;
    double v;
    if (t == "inf" || t == "+inf") {
      v = std::numeric_limits<double>::infinity();
    } else if (t == "-inf") {
      v = -std::numeric_limits<double>::infinity();
    } else if (t == "nan") {
      v = std::numeric_limits<double>::quiet_NaN();
    } else if (absl::ConsumeSuffix(&t, "f"), !absl::SimpleAtod(t, &v)) {
      return bad();
    }
    out->set_f(static_cast<float>(v));
  } else if (kind == "bool") {
    if (text == "true") {
      out->set_b(true);
    } else if (text == "false") {
      out->set_b(false);
    } else {
      return bad();
    }
  } else if (kind == "string") {
    if (text.size() < 2 || (text.front() != '\'' && text.front() != '"') ||
        text.back() != text.front()) {
      return bad();
    }
    std::string unescaped;
    if (!absl::CUnescape(text.substr(1, text.size() - 2), &unescaped)) return bad();
    out->set_s(unescaped);
  } else if (kind == "type") {
    DataType dt;
    if (!DataTypeFromString(text, &dt)) return bad();
    out->set_type(dt);
  } else if (kind == "shape") {
    if (absl::StartsWith(text, "[")) {
      if (!absl::EndsWith(text, "]")) return bad();
      std::vector<int64_t> dims;
      for (const std::string& part : SplitTopLevel(text.substr(1, text.size() - 2))) {
        int64_t d;
        if (part == "?") {
          d = -1;
        } else if (!absl::SimpleAtoi(part, &d)) {
          return bad();
        }
        dims.push_back(d);
      }
      PartialTensorShape(dims).AsProto(out->mutable_shape());
    } else {
      absl::string_view body = text;
      if (!absl::ConsumePrefix(&body, "{") || !absl::ConsumeSuffix(&body, "}")) {
        return bad();
      }
      if (!google::protobuf::TextFormat::ParseFromString(std::string(body), out->mutable_shape())) {
        return bad();
      }
    }
  } else if (kind == "tensor") {
    absl::string_view body = text;
    if (!absl::ConsumePrefix(&body, "{") || !absl::ConsumeSuffix(&body, "}")) {
      return bad();
    }
    if (!google::protobuf::TextFormat::ParseFromString(std::string(body), out->mutable_tensor())) {
      return bad();
    }
  } else if (kind == "func") {
    absl::string_view body = text;
    if (absl::ConsumePrefix(&body, "{") && absl::ConsumeSuffix(&body, "}")) {
      if (!google::protobuf::TextFormat::ParseFromString(std::string(body), out->mutable_func())) {
        return bad();
      }
    } else {
      out->mutable_func()->set_name(std::string(text));
    }
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown attr type '", kind, "'"));
  }
  return CheckScalar(*out, kind);
}

// Moves the scalar in `v` (of kind `kind`) into `list`.
void AppendToList(absl::string_view kind, const AttrValue& v, AttrValue::ListValue* list) {
  if (kind == "int") list->add_i(v.i());
  if (kind == "float") list->add_f(v.f());
  if (kind == "bool") list->add_b(v.b());
  if (kind == "string") list->add_s(v.s());
  if (kind == "type") list->add_type(v.type());
  if (kind == "shape") *list->add_shape() = v.shape();
  if (kind == "tensor") *list->add_tensor() = v.tensor();
  if (kind == "func") *list->add_func() = v.func();
}

std::string SummarizeTensor(const TensorProto& t) {
  absl::StatusOr<TensorShape> shape = TensorShape::FromProto(t.tensor_shape());
  std::string out = absl::StrCat(DataTypeString(t.dtype()), " ",
                                 shape.ok() ? shape->DebugString() : std::string("<bad shape>"));
  if (!ValidateTensorProto(t).ok()) return absl::StrCat(out, " <invalid>");
  constexpr int64_t kMaxShown = 6;
  if (shape->num_elements() > kMaxShown) return out;
  if (t.dtype() == DT_STRING) {
    absl::StatusOr<std::vector<std::string>> s = TensorProtoAsStrings(t);
    if (s.ok()) {
      absl::StrAppend(&out, " {",
                      absl::StrJoin(*s, ", ",
                                    [](std::string* o, const std::string& x) {
                                      absl::StrAppend(o, "\"", absl::CEscape(x), "\"");
                                    }),
                      "}");
    }
    return out;
  }
  absl::StatusOr<std::vector<double>> v = TensorProtoAsDoubles(t);
  if (v.ok()) absl::StrAppend(&out, " {", absl::StrJoin(*v, ", "), "}");
  return out;
}

}  // namespace

bool IsValidAttrType(absl::string_view type) {
  absl::string_view elem = type;
  if (absl::ConsumePrefix(&elem, "list(") && !absl::ConsumeSuffix(&elem, ")")) {
    return false;
  }
  return IsScalarKind(elem);
}

std::string AttrValueTypeString(const AttrValue& value) {
  switch (value.value_case()) {
    case AttrValue::kS:
      return "string";
    case AttrValue::kI:
      return "int";
    case AttrValue::kF:
      return "float";
    case AttrValue::kB:
      return "bool";
    case AttrValue::kType:
      return "type";
    case AttrValue::kShape:
      return "shape";
    case AttrValue::kTensor:
      return "tensor";
    case AttrValue::kFunc:
      return "func";
    case AttrValue::kPlaceholder:
      return "placeholder";
    case AttrValue::kList: {
      const std::vector<std::string> kinds = ListKinds(value.list());
      if (kinds.empty()) return "list(?)";
      if (kinds.size() > 1) {
        return absl::StrCat("list(", absl::StrJoin(kinds, "|"), ")");
      }
      return absl::StrCat("list(", kinds[0], ")");
    }
    case AttrValue::VALUE_NOT_SET:
      break;
  }
  return "";
}

absl::Status AttrValueHasType(const AttrValue& value, absl::string_view type) {
  const std::string actual = AttrValueTypeString(value);
  if (actual.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the AttrValue has no value set where '", type, "' is expected"));
  }
  if (actual == "placeholder") {
    return absl::InvalidArgumentError(
        absl::StrCat("the AttrValue is a function placeholder ('", value.placeholder(),
                     "'), which is only valid inside a function body"));
  }
  absl::string_view elem = type;
  const bool want_list = absl::ConsumePrefix(&elem, "list(") && absl::ConsumeSuffix(&elem, ")");
  if (!IsScalarKind(elem)) {
    return absl::InvalidArgumentError(absl::StrCat("unknown attr type '", type, "'"));
  }
  if (want_list) {
    if (value.value_case() != AttrValue::kList) {
      return absl::InvalidArgumentError(absl::StrCat("the AttrValue has a value of type '", actual,
                                                     "' where '", type, "' is expected"));
    }
    const std::vector<std::string> kinds = ListKinds(value.list());
    if (kinds.size() > 1) {
      return absl::InvalidArgumentError(absl::StrCat("the AttrValue list mixes values of types ",
                                                     absl::StrJoin(kinds, " and "), " where '",
                                                     type, "' is expected"));
    }
    if (kinds.size() == 1 && kinds[0] != elem) {
      return absl::InvalidArgumentError(absl::StrCat("the AttrValue has a value of type '", actual,
                                                     "' where '", type, "' is expected"));
    }
    return CheckListContents(value.list(), elem);
  }
  if (actual != elem) {
    return absl::InvalidArgumentError(absl::StrCat("the AttrValue has a value of type '", actual,
                                                   "' where '", type, "' is expected"));
  }
  return CheckScalar(value, elem);
}

absl::Status ParseAttrValue(absl::string_view type, absl::string_view text, AttrValue* out) {
  out->Clear();
  text = absl::StripAsciiWhitespace(text);
  absl::string_view elem = type;
  if (absl::ConsumePrefix(&elem, "list(") && absl::ConsumeSuffix(&elem, ")")) {
    if (!absl::StartsWith(text, "[") || !absl::EndsWith(text, "]")) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot parse '", text, "' as a value of type ", type, "; lists are written [a, b]"));
    }
    AttrValue::ListValue* list = out->mutable_list();
    for (const std::string& part : SplitTopLevel(text.substr(1, text.size() - 2))) {
      AttrValue item;
      TW_RETURN_IF_ERROR(ParseScalar(elem, part, &item));
      AppendToList(elem, item, list);
    }
    return absl::OkStatus();
  }
  return ParseScalar(type, text, out);
}

std::string SummarizeAttrValue(const AttrValue& value) {
  switch (value.value_case()) {
    case AttrValue::kS:
      return absl::StrCat("\"", absl::CEscape(value.s()), "\"");
    case AttrValue::kI:
      return absl::StrCat(value.i());
    case AttrValue::kF:
      return absl::StrCat(value.f());
    case AttrValue::kB:
      return value.b() ? "true" : "false";
    case AttrValue::kType:
      return DataTypeString(value.type());
    case AttrValue::kShape: {
      absl::StatusOr<PartialTensorShape> s = PartialTensorShape::FromProto(value.shape());
      return s.ok() ? s->DebugString() : "<bad shape>";
    }
    case AttrValue::kTensor:
      return SummarizeTensor(value.tensor());
    case AttrValue::kFunc:
      return absl::StrCat(value.func().name(), "[...]");
    case AttrValue::kPlaceholder:
      return absl::StrCat("$", value.placeholder());
    case AttrValue::kList: {
      const AttrValue::ListValue& l = value.list();
      std::vector<std::string> items;
      for (const auto& s : l.s()) items.push_back(absl::StrCat("\"", absl::CEscape(s), "\""));
      for (int64_t i : l.i()) items.push_back(absl::StrCat(i));
      for (float f : l.f()) items.push_back(absl::StrCat(f));
      for (bool b : l.b()) items.push_back(b ? "true" : "false");
      for (int t : l.type()) items.push_back(DataTypeString(static_cast<DataType>(t)));
      for (const auto& s : l.shape()) {
        AttrValue one;
        *one.mutable_shape() = s;
        items.push_back(SummarizeAttrValue(one));
      }
      for (const auto& t : l.tensor()) items.push_back(SummarizeTensor(t));
      for (const auto& f : l.func()) items.push_back(absl::StrCat(f.name(), "[...]"));
      return absl::StrCat("[", absl::StrJoin(items, ", "), "]");
    }
    case AttrValue::VALUE_NOT_SET:
      break;
  }
  return "<unset>";
}

bool AreAttrValuesEqual(const AttrValue& a, const AttrValue& b) {
  const auto serialize = [](const AttrValue& v) {
    std::string bytes;
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    v.SerializeToCodedStream(&coded);
    coded.Trim();
    return bytes;
  };
  return serialize(a) == serialize(b);
}

}  // namespace towerflow
