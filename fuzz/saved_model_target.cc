// saved_model.pb bytes -> ReadSavedModel -> LoadSavedModel (tag "serve")
// under the fuzz session options. The export directory holds the variables
// of TF Serving's half_plus_two (when ../shared/reference is here), so a
// model that restores a, b and c loads completely.
#include <filesystem>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "fuzz/fuzz_target.h"
#include "graph/scope.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/math_ops.h"
#include "proto/saved_model.pb.h"
#include "saved_model/loader.h"
#include "saved_model/signature_constants.h"

namespace towerflow {
namespace fuzz {
namespace {

absl::Status RunSavedModel(absl::string_view input) {
  const std::string dir = absl::StrCat(ScratchDir(), "/saved_model");
  static const bool made = [&] {
    std::error_code ignored;
    std::filesystem::create_directories(dir + "/variables", ignored);
    const std::string from = "tf/saved_models/half_plus_two_cpu/00000123/variables/";
    for (const char* file : {"variables.index", "variables.data-00000-of-00001"}) {
      std::vector<std::string> bytes = ReferenceFiles({from + file});
      if (!bytes.empty()) WriteFile(absl::StrCat(dir, "/variables/", file), bytes[0]).IgnoreError();
    }
    return true;
  }();
  (void)made;
  TW_RETURN_IF_ERROR(WriteFile(absl::StrCat(dir, "/saved_model.pb"), input));
  TW_RETURN_IF_ERROR(ReadSavedModel(dir).status());
  return LoadSavedModel(dir, {"serve"}, FuzzSessionOptions()).status();
}

std::optional<std::string> MutateSavedModel(const std::string& input, MutationContext& ctx) {
  return MutateProto(input, SavedModel::default_instance(), ProtoFormat::kBinary, ctx);
}

// A SavedModel of the project's own, so the target has a seed without
// ../shared: y = 0.5 * x + 2 in constants (no variables to restore), tagged
// "serve", with its serving signature.
std::string OwnSeed() {
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  ops::AddV2(root.WithOpName("y"), ops::Mul(root, x, 0.5f), 2.0f);
  SavedModel model;
  model.set_saved_model_schema_version(1);
  MetaGraphDef* meta = model.add_meta_graphs();
  meta->mutable_meta_info_def()->add_tags(kSavedModelTagServe);
  if (!root.ToGraphDef(meta->mutable_graph_def()).ok()) return "";
  SignatureDef& signature = (*meta->mutable_signature_def())[kDefaultServingSignatureDefKey];
  for (auto [map, name] :
       {std::pair{signature.mutable_inputs(), "x"}, std::pair{signature.mutable_outputs(), "y"}}) {
    TensorInfo& info = (*map)[name];
    info.set_name(absl::StrCat(name, ":0"));
    info.set_dtype(DT_FLOAT);
  }
  signature.set_method_name(kPredictMethodName);
  return model.SerializeAsString();
}

std::vector<std::string> SavedModelSeeds() {
  std::vector<std::string> seeds = ReferenceFiles({
      "tf/saved_models/half_plus_two_cpu/00000123/saved_model.pb",
      "tf/saved_models/counter/00000123/saved_model.pb",
      "tf/saved_models/half_plus_two_tf2_cpu/00000123/saved_model.pb",
  });
  seeds.push_back(OwnSeed());
  return seeds;
}

}  // namespace

TW_FUZZ_TARGET_WITH_MUTATOR(saved_model, RunSavedModel, SavedModelSeeds, MutateSavedModel)

}  // namespace fuzz
}  // namespace towerflow
