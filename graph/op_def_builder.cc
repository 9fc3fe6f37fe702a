#include "graph/op_def_builder.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/status_macros.h"
#include "core/types.h"
#include "framework/attr_value_util.h"
#include "framework/node_def_util.h"

namespace towerflow {
namespace {

// Position of the first top-level occurrence of `c` in `s` that `accept`
// likes (outside quotes and brackets), or npos.
template <typename Accept>
size_t FindTopLevel(absl::string_view s, char c, Accept accept) {
  int depth = 0;
  char quote = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    if (quote != 0) {
      if (ch == '\\') {
        ++i;
      } else if (ch == quote) {
        quote = 0;
      }
      continue;
    }
    if (ch == '\'' || ch == '"') {
      quote = ch;
    } else if (ch == '{' || ch == '(' || ch == '[') {
      ++depth;
    } else if (ch == '}' || ch == ')' || ch == ']') {
      --depth;
    } else if (ch == c && depth == 0 && accept(i)) {
      return i;
    }
  }
  return absl::string_view::npos;
}

// Splits "name: rest" into its parts.
absl::Status SplitNameAndRest(absl::string_view spec, std::string* name, std::string* rest) {
  const size_t colon = spec.find(':');
  if (colon == absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat("expected 'name: ...' in '", spec, "'"));
  }
  *name = std::string(absl::StripAsciiWhitespace(spec.substr(0, colon)));
  *rest = std::string(absl::StripAsciiWhitespace(spec.substr(colon + 1)));
  return absl::OkStatus();
}

// Parses "{a, b}" items.
std::vector<std::string> BraceItems(absl::string_view braced) {
  absl::string_view body = braced.substr(1, braced.size() - 2);
  std::vector<std::string> items;
  for (absl::string_view item : absl::StrSplit(body, ',')) {
    item = absl::StripAsciiWhitespace(item);
    if (!item.empty()) items.push_back(std::string(item));
  }
  return items;
}

// Fills allowed_values with a type set; `what` is a set name or "{...}".
absl::Status SetAllowedTypes(absl::string_view what, OpDef::AttrDef* attr) {
  // A named set expands to its members; "{a, b}" may mix types and sets.
  const auto named_set = [](absl::string_view name) -> const DataTypeVector* {
    if (name == "numbertype") return &NumberTypes();
    if (name == "realnumbertype") return &RealNumberTypes();
    if (name == "quantizedtype") return &QuantizedTypes();
    return nullptr;
  };
  DataTypeVector types;
  const std::vector<std::string> items =
      absl::StartsWith(what, "{") ? BraceItems(what) : std::vector<std::string>{std::string(what)};
  for (const std::string& item : items) {
    if (const DataTypeVector* set = named_set(item)) {
      types.insert(types.end(), set->begin(), set->end());
      continue;
    }
    DataType dt;
    if (!DataTypeFromString(item, &dt) || IsRefType(dt)) {
      return absl::InvalidArgumentError(absl::StrCat("unknown type '", item, "' in ", what));
    }
    types.push_back(dt);
  }
  auto* list = attr->mutable_allowed_values()->mutable_list();
  for (DataType dt : types) list->add_type(dt);
  return absl::OkStatus();
}

bool IsTypeSet(absl::string_view s) {
  return s == "numbertype" || s == "realnumbertype" || s == "quantizedtype" ||
         (absl::StartsWith(s, "{") && absl::EndsWith(s, "}"));
}

bool IsQuotedSet(absl::string_view braced) {
  std::vector<std::string> items = BraceItems(braced);
  return !items.empty() && (items[0][0] == '\'' || items[0][0] == '"');
}

absl::Status ParseAttrSpec(absl::string_view spec, OpDef::AttrDef* attr) {
  std::string name, rest;
  TW_RETURN_IF_ERROR(SplitNameAndRest(spec, &name, &rest));
  if (!IsValidAttrName(name) || name[0] == '_') {
    return absl::InvalidArgumentError(absl::StrCat("bad attr name '", name, "'"));
  }
  attr->set_name(name);
  absl::string_view r = rest;
  // "= default" (an '=' that is not part of ">=").
  const size_t eq = FindTopLevel(r, '=', [&](size_t i) { return i == 0 || r[i - 1] != '>'; });
  std::string default_text;
  if (eq != absl::string_view::npos) {
    default_text = std::string(absl::StripAsciiWhitespace(r.substr(eq + 1)));
    r = absl::StripAsciiWhitespace(r.substr(0, eq));
  }
  // ">= minimum".
  const size_t ge = r.find(">=");
  if (ge != absl::string_view::npos) {
    int64_t minimum;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(r.substr(ge + 2)), &minimum)) {
      return absl::InvalidArgumentError(absl::StrCat("bad minimum in '", spec, "'"));
    }
    attr->set_has_minimum(true);
    attr->set_minimum(minimum);
    r = absl::StripAsciiWhitespace(r.substr(0, ge));
  }
  // The type, possibly with allowed values.
  absl::string_view inner = r;
  const bool is_list = absl::ConsumePrefix(&inner, "list(") && absl::ConsumeSuffix(&inner, ")");
  if (IsTypeSet(inner)) {
    const bool strings = absl::StartsWith(inner, "{") && IsQuotedSet(inner);
    if (strings) {
      auto* list = attr->mutable_allowed_values()->mutable_list();
      for (const std::string& item : BraceItems(inner)) {
        AttrValue v;
        TW_RETURN_IF_ERROR(ParseAttrValue("string", item, &v));
        list->add_s(v.s());
      }
      attr->set_type(is_list ? "list(string)" : "string");
    } else {
      TW_RETURN_IF_ERROR(SetAllowedTypes(inner, attr));
      attr->set_type(is_list ? "list(type)" : "type");
    }
  } else {
    attr->set_type(std::string(r));
    if (!IsValidAttrType(attr->type())) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown attr type '", r, "' in '", spec, "'"));
    }
  }
  if (attr->has_minimum() && attr->type() != "int" && !absl::StartsWith(attr->type(), "list(")) {
    return absl::InvalidArgumentError(
        absl::StrCat("a minimum needs an int or list attr, in '", spec, "'"));
  }
  if (!default_text.empty()) {
    AttrValue* def = attr->mutable_default_value();
    const absl::Status parsed = ParseAttrValue(attr->type(), default_text, def);
    if (!parsed.ok()) {
      return AddErrorContext(parsed, absl::StrCat("default of '", spec, "'"));
    }
  }
  return absl::OkStatus();
}

const OpDef::AttrDef* FindAttr(const OpDef& op_def, absl::string_view name) {
  for (const auto& a : op_def.attr()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

absl::Status ParseArgSpec(absl::string_view spec, const OpDef& op_def, OpDef::ArgDef* arg) {
  std::string name, rest;
  TW_RETURN_IF_ERROR(SplitNameAndRest(spec, &name, &rest));
  const bool name_ok = !name.empty() && absl::ascii_islower(static_cast<unsigned char>(name[0])) &&
                       std::all_of(name.begin(), name.end(), [](char c) {
                         return absl::ascii_islower(static_cast<unsigned char>(c)) ||
                                absl::ascii_isdigit(static_cast<unsigned char>(c)) || c == '_';
                       });
  if (!name_ok) {
    return absl::InvalidArgumentError(absl::StrCat("bad argument name '", name, "'"));
  }
  arg->set_name(name);
  absl::string_view r = rest;
  if (absl::ConsumePrefix(&r, "Ref(")) {
    if (!absl::ConsumeSuffix(&r, ")")) {
      return absl::InvalidArgumentError(absl::StrCat("unbalanced Ref( in '", spec, "'"));
    }
    arg->set_is_ref(true);
    r = absl::StripAsciiWhitespace(r);
  }
  const size_t star = r.find('*');
  if (star != absl::string_view::npos) {
    const std::string number(absl::StripAsciiWhitespace(r.substr(0, star)));
    const OpDef::AttrDef* n = FindAttr(op_def, number);
    if (n == nullptr || n->type() != "int") {
      return absl::InvalidArgumentError(
          absl::StrCat("'", number, "' in '", spec, "' must name an int attr"));
    }
    arg->set_number_attr(number);
    r = absl::StripAsciiWhitespace(r.substr(star + 1));
  }
  const std::string type_name(r);
  if (const OpDef::AttrDef* a = FindAttr(op_def, type_name)) {
    if (a->type() == "type") {
      arg->set_type_attr(type_name);
    } else if (a->type() == "list(type)" && arg->number_attr().empty()) {
      arg->set_type_list_attr(type_name);
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("attr '", type_name, "' used by '", spec, "' has type ", a->type()));
    }
    return absl::OkStatus();
  }
  DataType dt;
  if (!DataTypeFromString(type_name, &dt) || IsRefType(dt)) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", type_name, "' in '", spec, "' is neither a type nor a type attr"));
  }
  arg->set_type(dt);
  return absl::OkStatus();
}

std::string FamilyFromFile(absl::string_view file) {
  const size_t slash = file.rfind('/');
  if (slash != absl::string_view::npos) file.remove_prefix(slash + 1);
  const size_t dot = file.find('.');
  if (dot != absl::string_view::npos) file = file.substr(0, dot);
  return std::string(file);
}

}  // namespace

OpDefBuilder::OpDefBuilder(std::string op_name, std::string file)
    : op_name_(std::move(op_name)), family_(FamilyFromFile(file)) {}

OpDefBuilder& OpDefBuilder::Attr(std::string spec) {
  attrs_.push_back(std::move(spec));
  return *this;
}
OpDefBuilder& OpDefBuilder::AttrAddedAfterTF1(std::string spec) {
  late_attrs_.push_back(spec);
  attrs_.push_back(std::move(spec));
  return *this;
}
OpDefBuilder& OpDefBuilder::Input(std::string spec) {
  inputs_.push_back(std::move(spec));
  return *this;
}
OpDefBuilder& OpDefBuilder::Output(std::string spec) {
  outputs_.push_back(std::move(spec));
  return *this;
}
OpDefBuilder& OpDefBuilder::SetIsStateful() {
  flags_.set_is_stateful(true);
  return *this;
}
OpDefBuilder& OpDefBuilder::SetIsCommutative() {
  flags_.set_is_commutative(true);
  return *this;
}
OpDefBuilder& OpDefBuilder::SetIsAggregate() {
  flags_.set_is_aggregate(true);
  return *this;
}
OpDefBuilder& OpDefBuilder::SetAllowsUninitializedInput() {
  flags_.set_allows_uninitialized_input(true);
  return *this;
}
OpDefBuilder& OpDefBuilder::Deprecated(int version, std::string explanation) {
  flags_.mutable_deprecation()->set_version(version);
  flags_.mutable_deprecation()->set_explanation(std::move(explanation));
  return *this;
}
OpDefBuilder& OpDefBuilder::Doc(std::string summary) {
  flags_.set_summary(std::move(summary));
  return *this;
}
OpDefBuilder& OpDefBuilder::SetShapeFn(ShapeFn fn) {
  shape_fn_ = std::move(fn);
  return *this;
}

absl::StatusOr<OpRegistrationData> OpDefBuilder::Finalize() const {
  const auto fail = [&](const absl::Status& s) {
    return AddErrorContext(s, absl::StrCat("Op '", op_name_, "'"));
  };
  if (!IsValidOpName(op_name_)) {
    return fail(absl::InvalidArgumentError("invalid op name"));
  }
  OpRegistrationData data;
  data.family = family_;
  OpDef& op_def = data.op_def;
  op_def = flags_;
  op_def.set_name(op_name_);
  for (const std::string& spec : attrs_) {
    OpDef::AttrDef attr;
    TW_RETURN_IF_ERROR(fail(ParseAttrSpec(spec, &attr)));
    if (FindAttr(op_def, attr.name()) != nullptr) {
      return fail(absl::InvalidArgumentError(absl::StrCat("duplicate attr '", attr.name(), "'")));
    }
    *op_def.add_attr() = std::move(attr);
  }
  for (const std::string& spec : late_attrs_) {
    OpDef::AttrDef attr;
    TW_RETURN_IF_ERROR(fail(ParseAttrSpec(spec, &attr)));
    if (!attr.has_default_value()) {
      return fail(absl::InvalidArgumentError(
          absl::StrCat("attr '", attr.name(), "' added after TF 1.x needs a default")));
    }
    data.added_after_tf1.insert(attr.name());
  }
  const auto add_args = [&](const std::vector<std::string>& specs, bool input) -> absl::Status {
    for (const std::string& spec : specs) {
      OpDef::ArgDef arg;
      TW_RETURN_IF_ERROR(ParseArgSpec(spec, op_def, &arg));
      const auto& existing = input ? op_def.input_arg() : op_def.output_arg();
      for (const auto& other : existing) {
        if (other.name() == arg.name()) {
          return absl::InvalidArgumentError(absl::StrCat("duplicate argument '", arg.name(), "'"));
        }
      }
      *(input ? op_def.add_input_arg() : op_def.add_output_arg()) = std::move(arg);
    }
    return absl::OkStatus();
  };
  TW_RETURN_IF_ERROR(fail(add_args(inputs_, true)));
  TW_RETURN_IF_ERROR(fail(add_args(outputs_, false)));
  // Defaults must satisfy their own constraints.
  for (const auto& attr : op_def.attr()) {
    if (!attr.has_default_value()) continue;
    NodeDef probe;
    probe.set_op(op_name_);
    OpDef single;
    *single.add_attr() = attr;
    (*probe.mutable_attr())[attr.name()] = attr.default_value();
    TW_RETURN_IF_ERROR(fail(AddErrorContext(ValidateNodeDefAttrs(probe, single), "default value")));
  }
  if (!shape_fn_) {
    return fail(absl::InvalidArgumentError("no shape function (SetShapeFn)"));
  }
  data.shape_fn = shape_fn_;
  return data;
}

}  // namespace towerflow
