// saved_model.pb bytes -> ReadSavedModel -> LoadSavedModel (tag "serve")
// under the fuzz session options. The export directory holds the variables
// of TF Serving's half_plus_two (when ../shared/reference is here), so a
// model that restores a, b and c loads completely.
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "core/proto_io.h"
#include "core/status_macros.h"
#include "fuzz/fuzz_target.h"
#include "proto/saved_model.pb.h"
#include "saved_model/loader.h"

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
constexpr char kOwnSeed[] = R"pb(
  saved_model_schema_version: 1
  meta_graphs {
    meta_info_def { tags: "serve" }
    graph_def {
      node {
        name: "x"
        op: "Placeholder"
        attr {
          key: "dtype"
          value { type: DT_FLOAT }
        }
      }
      node {
        name: "a"
        op: "Const"
        attr {
          key: "dtype"
          value { type: DT_FLOAT }
        }
        attr {
          key: "value"
          value {
            tensor {
              dtype: DT_FLOAT
              tensor_shape {}
              float_val: 0.5
            }
          }
        }
      }
      node {
        name: "b"
        op: "Const"
        attr {
          key: "dtype"
          value { type: DT_FLOAT }
        }
        attr {
          key: "value"
          value {
            tensor {
              dtype: DT_FLOAT
              tensor_shape {}
              float_val: 2
            }
          }
        }
      }
      node {
        name: "ax"
        op: "Mul"
        input: "a"
        input: "x"
        attr {
          key: "T"
          value { type: DT_FLOAT }
        }
      }
      node {
        name: "y"
        op: "AddV2"
        input: "ax"
        input: "b"
        attr {
          key: "T"
          value { type: DT_FLOAT }
        }
      }
    }
    signature_def {
      key: "serving_default"
      value {
        inputs {
          key: "x"
          value { name: "x:0" dtype: DT_FLOAT }
        }
        outputs {
          key: "y"
          value { name: "y:0" dtype: DT_FLOAT }
        }
        method_name: "tensorflow/serving/predict"
      }
    }
  }
)pb";

std::vector<std::string> SavedModelSeeds() {
  std::vector<std::string> seeds = ReferenceFiles({
      "tf/saved_models/half_plus_two_cpu/00000123/saved_model.pb",
      "tf/saved_models/counter/00000123/saved_model.pb",
      "tf/saved_models/half_plus_two_tf2_cpu/00000123/saved_model.pb",
  });
  SavedModel own;
  if (ParseTextProto(kOwnSeed, &own).ok()) seeds.push_back(own.SerializeAsString());
  return seeds;
}

}  // namespace

TW_FUZZ_TARGET_WITH_MUTATOR(saved_model, RunSavedModel, SavedModelSeeds, MutateSavedModel)

}  // namespace fuzz
}  // namespace towerflow
