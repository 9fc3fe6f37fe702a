// What the tf.Example and tf.SequenceExample parsers share
// (parsing_ops.cc, sequence_example_ops.cc): a feature parses to one of
// three layouts, as TF's fast parser lays them out: dense ([batch] + shape,
// a missing feature taking its default; a variable-length one, shape [?,
// ...], padded to the longest), sparse (indices, values, dense shape) or
// ragged (values and row splits). A SequenceExample's context parses as an
// Example's features; its feature lists add a step dimension: dense [batch,
// steps] + shape zero-padded with the lengths, sparse with [example, step,
// position] indices, ragged with outer (steps) and inner (values) splits.
// Messages are TF's.
#ifndef TOWERFLOW_KERNELS_CPU_EXAMPLE_PARSING_H_
#define TOWERFLOW_KERNELS_CPU_EXAMPLE_PARSING_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "framework/kernel_context.h"
#include "proto/example.pb.h"

namespace towerflow {
namespace example_parsing {

using FeatureMap = google::protobuf::Map<std::string, Feature>;
using FeatureListMap = google::protobuf::Map<std::string, FeatureList>;

// What TF's messages name: the example's name, the key and an index (the
// example's in a batch of Examples, the step's in a feature list).
enum class Form { kBatch, kSingle, kContext, kFeatureList };

// The features of one kind of input (an Example's, a SequenceExample's
// context or its feature lists) that a node asks for.
struct FeatureConfig {
  std::vector<std::string> sparse_keys, dense_keys, ragged_keys;
  DataTypeVector sparse_types, dense_types, ragged_value_types, ragged_split_types;
  // A dense shape whose first dimension is -1 is variable-length (Examples
  // only).
  std::vector<PartialTensorShape> dense_shapes;
  std::vector<const Tensor*> dense_defaults;  // Example features and contexts
  // Feature lists: dense ones that may be missing (as no steps).
  absl::flat_hash_set<std::string> missing_assumed_empty;
};

// Where a config's outputs go: the first output of each list, or -1 when
// the op has none (ParseSingleSequenceExample's lengths).
struct Slots {
  int sparse = 0;  // indices; values and shapes follow, num_sparse apart
  int dense = 0;
  int dense_lengths = -1;
  int ragged = -1;  // values; splits follow, num_ragged apart (outer, then inner)
};

// A node's dense shapes, checked as TF checks them: fully defined but for a
// first dimension of -1 where `variable_ok` (Examples).
absl::Status CheckDenseShapes(const std::vector<PartialTensorShape>& shapes, bool variable_ok);

// The defaults' dtypes and sizes against the dense shapes: a
// variable-length feature's default is its one padding element.
absl::Status CheckDefaults(const FeatureConfig& config);

// An Example's features, or a SequenceExample's context, of every example
// (`maps[b]` holds example b's; null for none) into the outputs at `slots`;
// `batched` false for a scalar input (no batch dimension). `form` is
// kBatch, kSingle (ParseSingleExample's messages) or kContext.
absl::Status ParseFeatureMaps(KernelContext* ctx, const std::vector<const FeatureMap*>& maps,
                              const std::vector<std::string>& names, bool batched, Form form,
                              const FeatureConfig& config, const Slots& slots);

// A SequenceExample's feature lists of every example (`maps[b]` null for
// none) into the outputs at `slots`.
absl::Status ParseFeatureLists(KernelContext* ctx, const std::vector<const FeatureListMap*>& maps,
                               const std::vector<std::string>& names, bool batched,
                               const FeatureConfig& config, const Slots& slots);

// A string vector input of `n` keys (the V2 ops' key inputs).
absl::Status KeyVector(const Tensor& t, int64_t n, const char* what,
                       std::vector<std::string>* keys);

// `n` string scalar inputs from `first` (TF 1's key inputs).
absl::Status KeyScalars(const KernelContext& ctx, int first, int64_t n, const char* what,
                        std::vector<std::string>* keys);

// Each example's name for messages: from `names` (the batch's, or empty),
// else "<unknown>".
absl::StatusOr<std::vector<std::string>> ExampleNames(const Tensor& names, int64_t batch,
                                                      const char* what);

// A `Tdense`-like list of `n` defaults from input `first`.
std::vector<const Tensor*> Defaults(const KernelContext& ctx, int first, size_t n);

}  // namespace example_parsing
}  // namespace towerflow

#endif  // TOWERFLOW_KERNELS_CPU_EXAMPLE_PARSING_H_
