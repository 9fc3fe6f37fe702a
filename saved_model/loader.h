// Loading TensorFlow SavedModels (TF's cc/saved_model/loader.h).
//
//   TW_ASSIGN_OR_RETURN(SavedModelBundle bundle,
//                       LoadSavedModel(export_dir, {kSavedModelTagServe}));
//   TW_ASSIGN_OR_RETURN(TensorMap y, bundle.Run("serving_default", {{"x", x}}));
//
// LoadSavedModel reads `<dir>/saved_model.pb` (or `.pbtxt`), picks the
// MetaGraphDef whose tags are exactly `tags`, creates a Session on its graph,
// restores the variables by running the SaverDef's restore op with
// `<dir>/variables/variables` fed as the filename (a TF V2 checkpoint), and
// runs the init op (the `__saved_model_init_op` signature, else the
// `saved_model_main_op` or `legacy_init_op` collection) with every asset's
// tensor fed `<dir>/assets/<file>`. A SavedModel without variables restores
// nothing, as in TF.
//
// Errors: NotFound for a directory without a SavedModel or no MetaGraphDef
// with the tags (listing those there are); DataLoss naming saved_model.pb
// when it does not parse; Unimplemented naming the node and the op for a
// graph with ops Towerflow does not have — TF 2's function calls
// (StatefulPartitionedCall...) among them; the restore's errors (naming the
// checkpoint file) and the init op's.
//
// Thread safety: a bundle's Run may be called from many threads.
#ifndef TOWERFLOW_SAVED_MODEL_LOADER_H_
#define TOWERFLOW_SAVED_MODEL_LOADER_H_

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/tensor.h"
#include "proto/meta_graph.pb.h"
#include "proto/saved_model.pb.h"
#include "runtime/session.h"
#include "saved_model/signature_constants.h"

namespace towerflow {

// Signature input or output key -> tensor.
using SignatureTensors = std::map<std::string, Tensor>;

struct SavedModelBundle {
  std::string export_dir;
  MetaGraphDef meta_graph_def;
  std::unique_ptr<Session> session;

  // The signature `key`; NotFound listing the signatures there are.
  absl::StatusOr<const SignatureDef*> Signature(const std::string& key) const;

  // Runs signature `key`: feeds `inputs` by input key, fetches `outputs` by
  // output key (empty: every output). InvalidArgument for an input key the
  // signature does not have or one it has that is not given, naming them.
  absl::StatusOr<SignatureTensors> Run(const std::string& key, const SignatureTensors& inputs,
                                       const std::vector<std::string>& outputs = {}) const;
};

// The SavedModel proto of `export_dir`.
absl::StatusOr<SavedModel> ReadSavedModel(const std::string& export_dir);

// See the file comment. The options' default here allows soft placement, so a
// model exported on a GPU machine loads on a CPU-only one.
absl::StatusOr<SavedModelBundle> LoadSavedModel(const std::string& export_dir,
                                                const std::set<std::string>& tags,
                                                const SessionOptions& options);
absl::StatusOr<SavedModelBundle> LoadSavedModel(const std::string& export_dir,
                                                const std::set<std::string>& tags);

}  // namespace towerflow

#endif  // TOWERFLOW_SAVED_MODEL_LOADER_H_
