#include "tools/saved_model_cli.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/file_io.h"
#include "core/status_macros.h"
#include "nlohmann/json.hpp"
#include "proto/example.pb.h"
#include "saved_model/loader.h"
#include "tools/run.h"

namespace towerflow {
namespace tools {
namespace {

using Args = SavedModelArgs;
using Json = nlohmann::json;

}  // namespace

absl::StatusOr<Tensor> ExamplesFromJson(const std::string& text) {
  const Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_array()) {
    return absl::InvalidArgumentError(
        "examples must be a JSON list of objects, e.g. [{\"x\": [1.0]}]");
  }
  Tensor out(DT_STRING, TensorShape({static_cast<int64_t>(j.size())}));
  for (size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_object()) {
      return absl::InvalidArgumentError(absl::StrCat("example ", i, " is not a JSON object"));
    }
    Example example;
    auto& features = *example.mutable_features()->mutable_feature();
    for (const auto& [name, values] : j[i].items()) {
      const std::string where = absl::StrCat("example ", i, ", feature '", name, "'");
      if (!values.is_array()) {
        return absl::InvalidArgumentError(absl::StrCat(where, " is not a list of values"));
      }
      if (values.empty()) return absl::InvalidArgumentError(absl::StrCat(where, " is empty"));
      // The list's kind is its first value's, as TF's saved_model_cli.
      const bool ints = values[0].is_number_integer(), floats = values[0].is_number_float(),
                 strings = values[0].is_string();
      Feature& feature = features[name];
      for (const Json& v : values) {
        if (ints && v.is_number_integer()) {
          if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t{INT64_MAX}) {
            return absl::InvalidArgumentError(
                absl::StrCat(where, ": ", v.dump(), " does not fit an int64"));
          }
          feature.mutable_int64_list()->add_value(v.get<int64_t>());
        } else if (floats && v.is_number()) {
          feature.mutable_float_list()->add_value(v.get<float>());
        } else if (strings && v.is_string()) {
          feature.mutable_bytes_list()->add_value(v.get<std::string>());
        } else {
          return absl::InvalidArgumentError(
              absl::StrCat(where, " holds ", v.dump(),
                           "; a feature is a list of integers, of numbers or of strings"));
        }
      }
    }
    out.data<std::string>()[i] = example.SerializeAsString();
  }
  return out;
}

namespace {

std::string TagsString(const google::protobuf::RepeatedPtrField<std::string>& tags) {
  std::vector<std::string> sorted(tags.begin(), tags.end());
  std::sort(sorted.begin(), sorted.end());
  return absl::StrJoin(sorted, ",");
}

std::string ShapeString(const TensorShapeProto& shape) {
  if (shape.unknown_rank()) return "unknown rank";
  std::vector<std::string> dims;
  for (const auto& d : shape.dim()) dims.push_back(d.size() < 0 ? "-1" : absl::StrCat(d.size()));
  return absl::StrCat("(", absl::StrJoin(dims, ", "), ")");
}

void AppendTensors(const char* what, const google::protobuf::Map<std::string, TensorInfo>& infos,
                   std::string* out) {
  absl::StrAppend(out, "  The given SavedModel SignatureDef contains the following ", what, ":\n");
  std::map<std::string, const TensorInfo*> sorted;
  for (const auto& [key, info] : infos) sorted[key] = &info;
  for (const auto& [key, info] : sorted) {
    absl::StrAppend(out, "    ", what == std::string("input(s)") ? "inputs" : "outputs", "['", key,
                    "'] tensor_info:\n", "        dtype: ", DataTypeString(info->dtype()), "\n",
                    "        shape: ", ShapeString(info->tensor_shape()), "\n",
                    "        name: ", info->name(), "\n");
  }
}

absl::StatusOr<std::string> Show(const Args& a) {
  TW_ASSIGN_OR_RETURN(SavedModel model, ReadSavedModel(a.dir));
  std::string out;
  if (a.tags.empty()) {
    absl::StrAppend(&out, "The given SavedModel contains the following tag-sets:\n");
    for (const MetaGraphDef& meta : model.meta_graphs()) {
      absl::StrAppend(&out, "'", TagsString(meta.meta_info_def().tags()), "'\n");
    }
    return out;
  }
  for (const MetaGraphDef& meta : model.meta_graphs()) {
    const auto& t = meta.meta_info_def().tags();
    if (std::set<std::string>(t.begin(), t.end()) != a.tags) continue;
    std::map<std::string, const SignatureDef*> sigs;
    for (const auto& [key, sig] : meta.signature_def()) {
      if (key != "__saved_model_init_op") sigs[key] = &sig;
    }
    if (a.signature.empty()) {
      absl::StrAppend(&out,
                      "The given SavedModel MetaGraphDef contains SignatureDefs with the "
                      "following keys:\n");
      for (const auto& [key, sig] : sigs)
        absl::StrAppend(&out, "SignatureDef key: \"", key, "\"\n");
      return out;
    }
    auto it = sigs.find(a.signature);
    if (it == sigs.end()) {
      return absl::NotFoundError(
          absl::StrCat("No signature '", a.signature, "' for tag-set '", TagsString(t), "'"));
    }
    AppendTensors("input(s)", it->second->inputs(), &out);
    AppendTensors("output(s)", it->second->outputs(), &out);
    absl::StrAppend(&out, "  Method name is: ", it->second->method_name(), "\n");
    return out;
  }
  return absl::NotFoundError(
      absl::StrCat("No MetaGraphDef with tag-set '", absl::StrJoin(a.tags, ","), "' in ", a.dir));
}

absl::StatusOr<std::string> Run(const Args& a) {
  TW_ASSIGN_OR_RETURN(
      SavedModelBundle bundle,
      LoadSavedModel(a.dir, a.tags.empty() ? std::set<std::string>{kSavedModelTagServe} : a.tags));
  TW_ASSIGN_OR_RETURN(const SignatureDef* sig, bundle.Signature(a.signature));
  SignatureTensors inputs;
  // Each "KEY=VALUE" of `flag` through `parse`, for an input of the signature.
  const auto feed =
      [&](const char* flag, const std::vector<std::string>& values,
          const std::function<absl::StatusOr<Tensor>(const std::string& value, DataType dtype)>&
              parse) -> absl::Status {
    for (const std::string& input : values) {
      const size_t eq = input.find('=');
      if (eq == std::string::npos || eq == 0) {
        return absl::InvalidArgumentError(absl::StrCat(flag, " '", input, "' is not KEY=JSON"));
      }
      const std::string key = input.substr(0, eq);
      auto info = sig->inputs().find(key);
      if (info == sig->inputs().end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("Signature '", a.signature, "' has no input '", key, "'"));
      }
      absl::StatusOr<Tensor> t = parse(input.substr(eq + 1), info->second.dtype());
      if (!t.ok()) {
        return absl::Status(t.status().code(),
                            absl::StrCat(flag, " ", key, ": ", t.status().message()));
      }
      inputs.emplace(key, *std::move(t));
    }
    return absl::OkStatus();
  };
  const MemoryLimits limits = MemoryLimits::Default();
  TW_RETURN_IF_ERROR(feed("--input", a.inputs, [&](const std::string& value, DataType dtype) {
    return TensorFromJsonOrFile(value, dtype, limits);
  }));
  TW_RETURN_IF_ERROR(feed("--input_examples", a.input_examples,
                          [](const std::string& value, DataType) -> absl::StatusOr<Tensor> {
                            if (value.empty() || value[0] != '@') return ExamplesFromJson(value);
                            const std::string file = value.substr(1);
                            TW_ASSIGN_OR_RETURN(const std::string json, ReadFileToString(file));
                            absl::StatusOr<Tensor> t = ExamplesFromJson(json);
                            if (!t.ok()) return AddErrorContext(t.status(), file);
                            return t;
                          }));
  TW_ASSIGN_OR_RETURN(SignatureTensors outputs, bundle.Run(a.signature, inputs));
  std::string out;
  if (a.json) {
    std::vector<std::string> parts;
    for (const auto& [key, t] : outputs)
      parts.push_back(absl::StrCat("\"", key, "\":", TensorToJson(t)));
    return absl::StrCat("{", absl::StrJoin(parts, ","), "}\n");
  }
  for (const auto& [key, t] : outputs) {
    absl::StrAppend(&out, "Result for output key ", key, ": ", DataTypeString(t.dtype()), " ",
                    t.shape().DebugString(), " ", t.SummarizeValue(1000), "\n");
  }
  return out;
}

}  // namespace

absl::StatusOr<std::string> SavedModelCommand(const SavedModelArgs& args) {
  if (args.verb == "run" && args.signature.empty()) {
    return absl::InvalidArgumentError("saved_model run needs --signature_def");
  }
  return args.verb == "show" ? Show(args) : Run(args);
}

}  // namespace tools
}  // namespace towerflow
