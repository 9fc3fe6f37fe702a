// op_gen: writes the C++ builder classes of one op family.
//
//   op_gen FAMILY HEADER_OUT SOURCE_OUT
//
// For every registered op of FAMILY (the schema file's stem, e.g. "nn_ops")
// whose name does not start with '_', it writes a class in namespace ops:
// the constructor takes the scope, the inputs (Input, or InputList for list
// arguments) and the attrs that have no default and cannot be inferred from
// the inputs; attrs with defaults are set through an Attrs struct
// (ops::MatMul::TransposeB(true)). Type attrs (T, N, type lists) are inferred
// by OpBuilder. Run by the genrules in ops/BUILD; never edit its output.
#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "framework/attr_value_util.h"
#include "graph/op_registry.h"

namespace towerflow {
namespace {

// Ops written by hand in ops/const_op.h.
const std::set<std::string>& HandWritten() {
  static const auto* const kOps = new std::set<std::string>{"Const"};
  return *kOps;
}

std::string Identifier(const std::string& name) {
  static const auto* const kReserved = new std::set<std::string>{
      "and",       "auto",     "bool",     "break",    "case",   "char",      "class",
      "const",     "continue", "default",  "delete",   "do",     "double",    "else",
      "enum",      "explicit", "export",   "extern",   "false",  "float",     "for",
      "friend",    "goto",     "if",       "inline",   "int",    "long",      "mutable",
      "namespace", "new",      "not",      "operator", "or",     "private",   "protected",
      "public",    "register", "return",   "short",    "signed", "sizeof",    "static",
      "struct",    "switch",   "template", "this",     "throw",  "true",      "try",
      "typedef",   "typename", "union",    "unsigned", "using",  "virtual",   "void",
      "volatile",  "while",    "xor",      "scope",    "attrs",  "operation", "node",
      "builder"};
  return kReserved->count(name) > 0 ? name + "_" : name;
}

// transpose_a -> TransposeA
std::string CamelCase(const std::string& name) {
  std::string out;
  for (absl::string_view part : absl::StrSplit(name, '_')) {
    if (part.empty()) continue;
    out += absl::AsciiStrToUpper(part.substr(0, 1));
    out += std::string(part.substr(1));
  }
  return out;
}

struct CppType {
  std::string param;    // constructor / setter parameter type
  std::string storage;  // member type inside Attrs
};

CppType CppTypeFor(const std::string& attr_type) {
  if (attr_type == "int") return {"int64_t", "int64_t"};
  if (attr_type == "float") return {"float", "float"};
  if (attr_type == "bool") return {"bool", "bool"};
  if (attr_type == "string") return {"absl::string_view", "std::string"};
  if (attr_type == "type") return {"::towerflow::DataType", "::towerflow::DataType"};
  if (attr_type == "shape") {
    return {"const ::towerflow::PartialTensorShape&", "::towerflow::PartialTensorShape"};
  }
  if (attr_type == "tensor") {
    return {"const ::towerflow::TensorProto&", "::towerflow::TensorProto"};
  }
  if (attr_type == "func") {
    return {"const ::towerflow::NameAttrList&", "::towerflow::NameAttrList"};
  }
  static const std::pair<const char*, const char*> kLists[] = {
      {"list(int)", "std::vector<int64_t>"},
      {"list(float)", "std::vector<float>"},
      {"list(bool)", "std::vector<bool>"},
      {"list(string)", "std::vector<std::string>"},
      {"list(type)", "std::vector<::towerflow::DataType>"},
      {"list(shape)", "std::vector<::towerflow::PartialTensorShape>"},
      {"list(tensor)", "std::vector<::towerflow::TensorProto>"},
      {"list(func)", "std::vector<::towerflow::NameAttrList>"},
  };
  for (const auto& [type, cpp] : kLists) {
    if (attr_type == type) return {absl::StrCat("const ", cpp, "&"), cpp};
  }
  return {"", ""};
}

// A comment-safe one-line form of text.
std::string CommentLine(const std::string& text) {
  return absl::StrReplaceAll(text, {{"\n", " "}, {"*/", "* /"}});
}

std::string ArgTypeString(const OpDef::ArgDef& arg) {
  std::string t;
  if (!arg.type_list_attr().empty()) {
    t = arg.type_list_attr();
  } else if (!arg.type_attr().empty()) {
    t = arg.type_attr();
  } else {
    t = DataTypeString(arg.type());
  }
  if (!arg.number_attr().empty()) t = absl::StrCat(arg.number_attr(), " * ", t);
  if (arg.is_ref()) t = absl::StrCat("Ref(", t, ")");
  return t;
}

bool IsListArg(const OpDef::ArgDef& arg) {
  return !arg.number_attr().empty() || !arg.type_list_attr().empty();
}

struct OpCode {
  std::string header;
  std::string source;
};

OpCode GenerateOp(const OpDef& op) {
  const std::string cls = op.name();
  std::set<std::string> inferred;
  for (const auto& arg : op.input_arg()) {
    for (const std::string& a : {arg.type_attr(), arg.number_attr(), arg.type_list_attr()}) {
      if (!a.empty()) inferred.insert(a);
    }
  }
  std::vector<const OpDef::AttrDef*> required, optional;
  for (const auto& attr : op.attr()) {
    if (inferred.count(attr.name()) > 0) continue;
    (attr.has_default_value() ? optional : required).push_back(&attr);
  }

  // Constructor parameters.
  std::vector<std::string> params = {"const ::towerflow::Scope& scope"};
  for (const auto& arg : op.input_arg()) {
    params.push_back(
        absl::StrCat(IsListArg(arg) ? "::towerflow::InputList " : "::towerflow::Input ",
                     Identifier(arg.name())));
  }
  for (const auto* attr : required) {
    params.push_back(absl::StrCat(CppTypeFor(attr->type()).param, " ", Identifier(attr->name())));
  }

  std::string h;
  absl::StrAppend(&h, "// ", CommentLine(op.summary().empty() ? op.name() : op.summary()),
                  "\n//\n");
  for (const auto& arg : op.input_arg()) {
    absl::StrAppend(&h, "// Input ", arg.name(), ": ", ArgTypeString(arg), "\n");
  }
  for (const auto& arg : op.output_arg()) {
    absl::StrAppend(&h, "// Output ", arg.name(), ": ", ArgTypeString(arg), "\n");
  }
  for (const auto& attr : op.attr()) {
    absl::StrAppend(&h, "// Attr ", attr.name(), ": ", attr.type());
    if (attr.has_default_value()) {
      absl::StrAppend(&h, " = ", CommentLine(SummarizeAttrValue(attr.default_value())));
    }
    if (inferred.count(attr.name()) > 0) absl::StrAppend(&h, " (inferred from the inputs)");
    absl::StrAppend(&h, "\n");
  }
  absl::StrAppend(&h, "class ", cls, " {\n public:\n");
  if (!optional.empty()) {
    absl::StrAppend(&h, "  // Optional attrs; those left unset keep the op's defaults.\n");
    absl::StrAppend(&h, "  struct Attrs {\n");
    for (const auto* attr : optional) {
      const CppType t = CppTypeFor(attr->type());
      absl::StrAppend(&h, "    Attrs ", CamelCase(attr->name()), "(", t.param,
                      " x) const {\n      Attrs r = *this;\n      r.", attr->name(),
                      "_ = ", t.storage, "(x);\n      return r;\n    }\n");
    }
    for (const auto* attr : optional) {
      absl::StrAppend(&h, "    std::optional<", CppTypeFor(attr->type()).storage, "> ",
                      attr->name(), "_;\n");
    }
    absl::StrAppend(&h, "  };\n");
  }
  const std::string attrs_param =
      optional.empty() ? "" : absl::StrCat(", const ", cls, "::Attrs& attrs");
  absl::StrAppend(&h, "  ", cls, "(", absl::StrJoin(params, ", "), ");\n");
  if (!optional.empty()) {
    absl::StrAppend(&h, "  ", cls, "(", absl::StrJoin(params, ", "), ", const Attrs& attrs);\n");
    for (const auto* attr : optional) {
      const CppType t = CppTypeFor(attr->type());
      absl::StrAppend(&h, "  static Attrs ", CamelCase(attr->name()), "(", t.param,
                      " x) { return Attrs().", CamelCase(attr->name()), "(x); }\n");
    }
  }
  const int num_outputs = op.output_arg_size();
  if (num_outputs == 0) {
    absl::StrAppend(&h, "  operator ::towerflow::Operation() const { return operation; }\n");
  } else if (num_outputs == 1 && !IsListArg(op.output_arg(0))) {
    const std::string out = Identifier(op.output_arg(0).name());
    absl::StrAppend(&h, "  operator ::towerflow::Output() const { return ", out, "; }\n");
    absl::StrAppend(&h, "  operator ::towerflow::Input() const { return ", out, "; }\n");
  } else if (num_outputs == 1) {
    const std::string out = Identifier(op.output_arg(0).name());
    absl::StrAppend(&h, "  ::towerflow::Output operator[](size_t i) const { return ", out,
                    "[i]; }\n");
  }
  absl::StrAppend(&h, "  ::towerflow::Node* node() const { return operation.node(); }\n\n");
  absl::StrAppend(&h, "  ::towerflow::Operation operation;\n");
  for (const auto& arg : op.output_arg()) {
    absl::StrAppend(&h, "  ", IsListArg(arg) ? "::towerflow::OutputList " : "::towerflow::Output ",
                    Identifier(arg.name()), ";\n");
  }
  absl::StrAppend(&h, "};\n\n");

  // Definitions.
  std::vector<std::string> call_args;
  for (const auto& arg : op.input_arg()) call_args.push_back(Identifier(arg.name()));
  for (const auto* attr : required) call_args.push_back(Identifier(attr->name()));
  std::string s;
  if (!optional.empty()) {
    absl::StrAppend(&s, cls, "::", cls, "(", absl::StrJoin(params, ", "), ")\n    : ", cls,
                    "(scope", call_args.empty() ? "" : ", ", absl::StrJoin(call_args, ", "),
                    ", Attrs()) {}\n\n");
  }
  absl::StrAppend(&s, cls, "::", cls, "(", absl::StrJoin(params, ", "), attrs_param, ") {\n");
  absl::StrAppend(&s, "  ::towerflow::OpBuilder builder(scope, \"", op.name(), "\");\n");
  for (const auto& arg : op.input_arg()) {
    absl::StrAppend(&s, "  builder.Input(", Identifier(arg.name()), ");\n");
  }
  for (const auto* attr : required) {
    absl::StrAppend(&s, "  builder.Attr(\"", attr->name(), "\", ", Identifier(attr->name()),
                    ");\n");
  }
  for (const auto* attr : optional) {
    absl::StrAppend(&s, "  if (attrs.", attr->name(), "_.has_value()) builder.Attr(\"",
                    attr->name(), "\", *attrs.", attr->name(), "_);\n");
  }
  absl::StrAppend(&s, "  ::towerflow::Node* node = builder.Finalize();\n");
  absl::StrAppend(&s, "  if (node == nullptr) return;\n");
  absl::StrAppend(&s, "  operation = ::towerflow::Operation(node);\n");
  bool list_seen = false;
  for (int i = 0; i < num_outputs; ++i) {
    const auto& arg = op.output_arg(i);
    const std::string out = Identifier(arg.name());
    if (IsListArg(arg)) {
      list_seen = true;
      absl::StrAppend(&s, "  ", out, " = ::towerflow::OpBuilder::Outputs(node, \"", arg.name(),
                      "\");\n");
    } else if (!list_seen) {
      absl::StrAppend(&s, "  ", out, " = ::towerflow::Output(node, ", i, ");\n");
    } else {
      absl::StrAppend(&s, "  ", out, " = ::towerflow::OpBuilder::Outputs(node, \"", arg.name(),
                      "\").at(0);\n");
    }
  }
  absl::StrAppend(&s, "}\n\n");
  return {h, s};
}

int Run(const std::string& family, const std::string& header_path, const std::string& source_path) {
  const std::vector<std::string> errors = OpRegistry::Global()->registration_errors();
  if (!errors.empty()) {
    std::fprintf(stderr, "op_gen: op registrations failed:\n%s\n",
                 absl::StrJoin(errors, "\n").c_str());
    return 1;
  }
  const std::string guard =
      absl::StrCat("TOWERFLOW_OPS_GEN_", absl::AsciiStrToUpper(family), "_H_");
  std::string header = absl::StrCat(
      "// Generated by //ops:op_gen from the schemas in ops/", family,
      ".cc. Do not edit.\n#ifndef ", guard, "\n#define ", guard,
      "\n\n#include <cstdint>\n#include <optional>\n#include <string>\n#include <vector>\n\n"
      "#include \"absl/strings/string_view.h\"\n#include \"core/tensor_shape.h\"\n"
      "#include \"core/types.h\"\n#include \"graph/output.h\"\n#include \"graph/scope.h\"\n"
      "#include \"proto/attr_value.pb.h\"\n#include \"proto/tensor.pb.h\"\n\n"
      "namespace towerflow {\nnamespace ops {\n\n");
  std::string source = absl::StrCat(
      "// Generated by //ops:op_gen from the schemas in ops/", family,
      ".cc. Do not edit.\n#include \"ops/gen/", family,
      ".h\"\n\n#include \"graph/op_builder.h\"\n\nnamespace towerflow {\nnamespace ops {\n\n");
  int count = 0;
  for (const std::string& name : OpRegistry::Global()->ListOps()) {
    const OpRegistrationData* reg = OpRegistry::Global()->Find(name);
    if (reg->family != family || absl::StartsWith(name, "_") || HandWritten().count(name) > 0) {
      continue;
    }
    const OpCode code = GenerateOp(reg->op_def);
    header += code.header;
    source += code.source;
    ++count;
  }
  absl::StrAppend(&header, "}  // namespace ops\n}  // namespace towerflow\n\n#endif  // ", guard,
                  "\n");
  absl::StrAppend(&source, "}  // namespace ops\n}  // namespace towerflow\n");
  if (count == 0) {
    std::fprintf(stderr, "op_gen: no ops in family '%s'\n", family.c_str());
    return 1;
  }
  std::ofstream(header_path) << header;
  std::ofstream(source_path) << source;
  return 0;
}

}  // namespace
}  // namespace towerflow

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: op_gen FAMILY HEADER_OUT SOURCE_OUT\n");
    return 2;
  }
  return towerflow::Run(argv[1], argv[2], argv[3]);
}
