// `towerflow saved_model`: TF's saved_model_cli.
//
//   towerflow saved_model show DIR [--tag_set serve] [--signature_def KEY]
//   towerflow saved_model run DIR --signature_def KEY --input x=JSON|@FILE ...
//                         [--input_examples KEY=JSON|@FILE ...] [--tag_set serve] [--json]
//
// `show` lists the tag sets, and for one tag set its signatures with their
// method and every input and output (key, dtype, shape, tensor). `run` loads
// the SavedModel (saved_model/loader.h), feeds the inputs by key (the dtype
// from the signature) and prints every output. --input_examples feeds an
// input serialized tf.Examples, as TF's saved_model_cli: a JSON list of
// objects, feature name -> list of values (integers become an int64_list,
// other numbers a float_list, strings a bytes_list), e.g.
//   --input_examples 'inputs=[{"x": [1.0]}, {"x": [5.0]}]'
// for the classify and regress signatures.
#ifndef TOWERFLOW_TOOLS_SAVED_MODEL_CLI_H_
#define TOWERFLOW_TOOLS_SAVED_MODEL_CLI_H_

#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/tensor.h"

namespace towerflow {
namespace tools {

struct SavedModelArgs {
  std::string verb;  // "show" or "run"
  std::string dir;
  std::set<std::string> tags;               // --tag_set a,b
  std::string signature;                    // --signature_def; required by "run"
  std::vector<std::string> inputs;          // --input KEY=JSON or KEY=@FILE
  std::vector<std::string> input_examples;  // --input_examples KEY=JSON or KEY=@FILE
  bool json = false;
};

// A string vector of serialized tf.Examples from --input_examples' JSON.
// InvalidArgument naming the example and feature for anything else than a
// list of objects of lists of numbers or strings, or a list mixing them.
absl::StatusOr<Tensor> ExamplesFromJson(const std::string& json);

// Runs the command; returns what it prints. InvalidArgument for "run"
// without a signature.
absl::StatusOr<std::string> SavedModelCommand(const SavedModelArgs& args);

}  // namespace tools
}  // namespace towerflow

#endif  // TOWERFLOW_TOOLS_SAVED_MODEL_CLI_H_
