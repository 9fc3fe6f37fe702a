#include "graph/shape_inference.h"

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "core/tensor_proto_util.h"

namespace towerflow {

InferenceContext::InferenceContext(const NodeDef& node_def, const OpDef& op_def,
                                   int graph_def_version, std::vector<InputInfo> inputs,
                                   DataTypeVector input_types, DataTypeVector output_types,
                                   NameRangeMap input_ranges)
    : node_def_(node_def),
      op_def_(op_def),
      graph_def_version_(graph_def_version),
      inputs_(std::move(inputs)),
      input_types_(std::move(input_types)),
      output_types_(std::move(output_types)),
      input_ranges_(std::move(input_ranges)),
      outputs_(output_types_.size()) {}

namespace {

absl::Status LookUpRange(const NameRangeMap& ranges, absl::string_view arg, const char* what,
                         const std::string& op, int* start, int* stop) {
  auto it = ranges.find(arg);
  if (it == ranges.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Op ", op, " has no ", what, " named '", arg, "'"));
  }
  *start = it->second.first;
  *stop = it->second.second;
  return absl::OkStatus();
}

}  // namespace

absl::Status InferenceContext::input_range(absl::string_view arg, int* start, int* stop) const {
  return LookUpRange(input_ranges_, arg, "input", op_def_.name(), start, stop);
}

absl::StatusOr<PartialTensorShape> InferenceContext::MakeShapeFromShapeTensor(int i) const {
  const InputInfo& in = inputs_[i];
  if (in.tensor != nullptr) {
    absl::StatusOr<TensorShape> t = TensorProtoShape(*in.tensor);
    TW_RETURN_IF_ERROR(t.status());
    if (t->dims() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("Input ", i, " must be a 1-D shape tensor, got shape ", t->DebugString()));
    }
    if (t->dim_size(0) > kMaxTensorRank) {
      return absl::InvalidArgumentError(absl::StrCat("Shape tensor of length ", t->dim_size(0),
                                                     " describes a rank above the maximum ",
                                                     kMaxTensorRank));
    }
    TW_ASSIGN_OR_RETURN(std::vector<int64_t> dims, TensorProtoAsInt64s(*in.tensor));
    for (int64_t d : dims) {
      if (d < -1) {
        return absl::InvalidArgumentError(
            absl::StrCat("Input ", i, " holds dimension ", d,
                         "; shape dimensions must be >= -1 (-1 is unknown)"));
      }
    }
    return PartialTensorShape::FromDims(dims);
  }
  if (in.tensor_as_shape.has_value()) return *in.tensor_as_shape;
  PartialTensorShape vec;
  TW_RETURN_IF_ERROR(WithRank(in.shape, 1, &vec));
  if (vec.unknown_rank() || vec.dim_size(0) < 0) return PartialTensorShape();
  if (vec.dim_size(0) > kMaxTensorRank) {
    return absl::InvalidArgumentError(absl::StrCat("Shape tensor of length ", vec.dim_size(0),
                                                   " describes a rank above the maximum ",
                                                   kMaxTensorRank));
  }
  return PartialTensorShape::UnknownDims(static_cast<int>(vec.dim_size(0)));
}

absl::StatusOr<std::optional<int64_t>> InferenceContext::ConstantScalarInput(int i) const {
  const TensorProto* t = inputs_[i].tensor;
  if (t == nullptr) return std::optional<int64_t>();
  TW_ASSIGN_OR_RETURN(TensorShape shape, TensorProtoShape(*t));
  if (shape.dims() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Input ", i, " must be a scalar, got shape ", shape.DebugString()));
  }
  TW_ASSIGN_OR_RETURN(std::vector<int64_t> v, TensorProtoAsInt64s(*t));
  return std::optional<int64_t>(v[0]);
}

absl::StatusOr<std::optional<std::vector<int64_t>>> InferenceContext::ConstantIntInput(
    int i) const {
  const TensorProto* t = inputs_[i].tensor;
  if (t == nullptr) return std::optional<std::vector<int64_t>>();
  TW_ASSIGN_OR_RETURN(std::vector<int64_t> v, TensorProtoAsInt64s(*t));
  return std::optional<std::vector<int64_t>>(std::move(v));
}

absl::Status InferenceContext::WithRank(const PartialTensorShape& s, int rank,
                                        PartialTensorShape* out) const {
  if (s.unknown_rank()) {
    *out = PartialTensorShape::UnknownDims(rank);
    return absl::OkStatus();
  }
  if (s.dims() != rank) {
    return absl::InvalidArgumentError(absl::StrCat("Shape must be rank ", rank, " but is rank ",
                                                   s.dims(), " (", s.DebugString(), ")"));
  }
  *out = s;
  return absl::OkStatus();
}

absl::Status InferenceContext::WithRankAtLeast(const PartialTensorShape& s, int rank,
                                               PartialTensorShape* out) const {
  if (!s.unknown_rank() && s.dims() < rank) {
    return absl::InvalidArgumentError(absl::StrCat("Shape must be at least rank ", rank,
                                                   " but is rank ", s.dims(), " (", s.DebugString(),
                                                   ")"));
  }
  *out = s;
  return absl::OkStatus();
}

absl::Status InferenceContext::WithRankAtMost(const PartialTensorShape& s, int rank,
                                              PartialTensorShape* out) const {
  if (!s.unknown_rank() && s.dims() > rank) {
    return absl::InvalidArgumentError(absl::StrCat("Shape must be at most rank ", rank,
                                                   " but is rank ", s.dims(), " (", s.DebugString(),
                                                   ")"));
  }
  *out = s;
  return absl::OkStatus();
}

absl::Status InferenceContext::Merge(const PartialTensorShape& a, const PartialTensorShape& b,
                                     PartialTensorShape* out) const {
  TW_ASSIGN_OR_RETURN(*out, a.MergeWith(b));
  return absl::OkStatus();
}

absl::Status InferenceContext::MergeDim(int64_t a, int64_t b, int64_t* out) const {
  if (a >= 0 && b >= 0 && a != b) {
    return absl::InvalidArgumentError(
        absl::StrCat("Dimensions must be equal, but are ", a, " and ", b));
  }
  *out = a >= 0 ? a : b;
  return absl::OkStatus();
}

}  // namespace towerflow
