// Checkpoint ops as TensorFlow's savers write them into graphs (SaveV2,
// RestoreV2, the sharded-file helpers and the string ops that build file
// names), so real TF graphs import; and the file ops ReadFile, WriteFile
// and MatchingFiles.
#include "core/status_macros.h"
#include "graph/op_registry.h"
#include "ops/shape_fns.h"

namespace towerflow {
namespace {

// prefix is a scalar; tensor_names and shape_and_slices are vectors of the
// number of tensors.
absl::Status CheckSaveRestoreInputs(InferenceContext* c, int num_tensors) {
  PartialTensorShape prefix, names, slices;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 0, &prefix));
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &names));
  TW_RETURN_IF_ERROR(c->WithRank(c->input(2), 1, &slices));
  int64_t n;
  TW_RETURN_IF_ERROR(c->MergeDim(names.dim_size(0), slices.dim_size(0), &n));
  return c->MergeDim(n, num_tensors, &n);
}

TW_REGISTER_OP("SaveV2")
    .Input("prefix: string")
    .Input("tensor_names: string")
    .Input("shape_and_slices: string")
    .Input("tensors: dtypes")
    .Attr("dtypes: list(type) >= 1")
    .SetIsStateful()
    .Doc("Saves tensors in the V2 checkpoint format.")
    .SetShapeFn([](InferenceContext* c) { return CheckSaveRestoreInputs(c, c->num_inputs() - 3); });

TW_REGISTER_OP("RestoreV2")
    .Input("prefix: string")
    .Input("tensor_names: string")
    .Input("shape_and_slices: string")
    .Output("tensors: dtypes")
    .Attr("dtypes: list(type) >= 1")
    .SetIsStateful()
    .Doc("Restores tensors from a V2 checkpoint.")
    .SetShapeFn([](InferenceContext* c) { return CheckSaveRestoreInputs(c, c->num_outputs()); });

TW_REGISTER_OP("MergeV2Checkpoints")
    .Input("checkpoint_prefixes: string")
    .Input("destination_prefix: string")
    .Attr("delete_old_dirs: bool = true")
    .AttrAddedAfterTF1("allow_missing_files: bool = false")
    .SetIsStateful()
    .Doc("Merges sharded V2 checkpoints into one.")
    .SetShapeFn(shape_fns::UnknownShape);

TW_REGISTER_OP("ShardedFilename")
    .Input("basename: string")
    .Input("shard: int32")
    .Input("num_shards: int32")
    .Output("filename: string")
    .Doc("basename-<shard>-of-<num_shards>")
    .SetShapeFn(shape_fns::ScalarShape);

TW_REGISTER_OP("StaticRegexFullMatch")
    .Input("input: string")
    .Output("output: bool")
    .Attr("pattern: string")
    .Doc(
        "Whether each string matches the RE2 pattern as a whole (TF 2's save functions test "
        "for an s3:// prefix with it).")
    .SetShapeFn(shape_fns::UnchangedShape);

TW_REGISTER_OP("StringToHashBucketFast")
    .Input("input: string")
    .Output("output: int64")
    .Attr("num_buckets: int >= 1")
    .Doc("Each string's bucket: its FarmHash Fingerprint64 modulo num_buckets, as TF.")
    .SetShapeFn(shape_fns::UnchangedShape);

TW_REGISTER_OP("Fingerprint")
    .Input("data: T")
    .Input("method: string")
    .Output("fingerprint: uint8")
    .Attr("T: type")
    .Doc(
        "Each slice along dimension 0 hashed by FarmHash's Fingerprint64 (the 'farmhash64' "
        "method), as 8 little-endian bytes.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape data, method;
      TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(0), 1, &data));
      TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, &method));
      c->set_output(0, PartialTensorShape({data.unknown_rank() ? -1 : data.dim_size(0), 8}));
      return absl::OkStatus();
    });

TW_REGISTER_OP("StringToHashBucketStrong")
    .Input("input: string")
    .Output("output: int64")
    .Attr("num_buckets: int >= 1")
    .Attr("key: list(int)")
    .Doc("Each string's bucket: its SipHash-2-4 under key [2] modulo num_buckets, as TF.")
    .SetShapeFn(shape_fns::UnchangedShape);

TW_REGISTER_OP("StringToHashBucket")
    .Input("string_tensor: string")
    .Output("output: int64")
    .Attr("num_buckets: int >= 1")
    .Doc("Each string's bucket: TF's Hash64 (MurmurHash64A, its seed) modulo num_buckets.")
    .SetShapeFn(shape_fns::UnchangedShape);

TW_REGISTER_OP("StringJoin")
    .Input("inputs: N * string")
    .Output("output: string")
    .Attr("N: int >= 1")
    .Attr("separator: string = ''")
    .Doc("Joins strings elementwise.")
    .SetShapeFn(shape_fns::UnknownShape);

// The file ops (kernels/cpu/file_ops.cc).
absl::Status ScalarInputs(InferenceContext* c) {
  for (int i = 0; i < c->num_inputs(); ++i) {
    PartialTensorShape scalar;
    TW_RETURN_IF_ERROR(c->WithRank(c->input(i), 0, &scalar));
  }
  if (c->num_outputs() > 0) c->set_output(0, PartialTensorShape::Scalar());
  return absl::OkStatus();
}

TW_REGISTER_OP("ReadFile")
    .Input("filename: string")
    .Output("contents: string")
    .Doc("The bytes of the file.")
    .SetShapeFn(ScalarInputs);

TW_REGISTER_OP("WriteFile")
    .Input("filename: string")
    .Input("contents: string")
    .SetIsStateful()
    .Doc("Writes contents to the file (its directories made; replaced atomically).")
    .SetShapeFn(ScalarInputs);

TW_REGISTER_OP("MatchingFiles")
    .Input("pattern: string")
    .Output("filenames: string")
    .Doc("The files matching the glob pattern(s), sorted.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape pattern;
      TW_RETURN_IF_ERROR(c->WithRankAtMost(c->input(0), 1, &pattern));
      c->set_output(0, PartialTensorShape({-1}));
      return absl::OkStatus();
    });

}  // namespace
}  // namespace towerflow
