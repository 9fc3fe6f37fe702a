#include "core/tensor_shape.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace towerflow {
namespace {

// Validates dims; `min_dim` is 0 for known shapes and -1 for partial ones.
// On success stores the element count of the known dims (unknown dims are
// skipped) in *num_elements.
absl::Status ValidateDims(absl::Span<const int64_t> dims, int64_t min_dim, int64_t* num_elements) {
  if (dims.size() > static_cast<size_t>(kMaxTensorRank)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Shape has rank ", dims.size(), ", more than the maximum rank ", kMaxTensorRank));
  }
  int64_t n = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < min_dim) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Dimension ", i, " of the shape is ", dims[i],
          min_dim == 0 ? "; dims must be >= 0" : "; dims must be >= -1 (-1 is unknown)"));
    }
    if (dims[i] < 0) continue;
    n = MultiplyWithoutOverflow(n, dims[i]);
    if (n < 0) {
      return absl::InvalidArgumentError(absl::StrCat("Shape [", absl::StrJoin(dims, ","),
                                                     "] has more elements than fit in int64"));
    }
  }
  *num_elements = n;
  return absl::OkStatus();
}

std::string DimString(int64_t d) { return d < 0 ? "?" : absl::StrCat(d); }

}  // namespace

int64_t MultiplyWithoutOverflow(int64_t a, int64_t b) {
  if (a < 0 || b < 0) return -1;
  if (a == 0 || b == 0) return 0;
  const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  const uint64_t product = ua * ub;
  // Cheap check first: both below 2^32 cannot overflow 2^63.
  if (((ua | ub) >> 32) != 0 && product / ub != ua) return -1;
  if (product > static_cast<uint64_t>(INT64_MAX)) return -1;
  return static_cast<int64_t>(product);
}

// ---------------------------------------------------------------- TensorShape

TensorShape::TensorShape(std::initializer_list<int64_t> dims)
    : TensorShape(absl::MakeConstSpan(dims.begin(), dims.size())) {}

TensorShape::TensorShape(absl::Span<const int64_t> dims) : dims_(dims.begin(), dims.end()) {
  if (!ValidateDims(dims_, 0, &num_elements_).ok()) num_elements_ = -1;
}

absl::StatusOr<TensorShape> TensorShape::FromDims(absl::Span<const int64_t> dims) {
  int64_t n;
  absl::Status s = ValidateDims(dims, 0, &n);
  if (!s.ok()) return s;
  return TensorShape(dims);
}

absl::StatusOr<TensorShape> TensorShape::FromProto(const TensorShapeProto& proto) {
  if (proto.unknown_rank()) {
    return absl::InvalidArgumentError("Expected a fully defined shape, got one of unknown rank");
  }
  if (proto.dim_size() > kMaxTensorRank) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Shape has rank ", proto.dim_size(), ", more than the maximum rank ", kMaxTensorRank));
  }
  Dims dims;
  for (const auto& d : proto.dim()) dims.push_back(d.size());
  return FromDims(dims);
}

absl::Status TensorShape::status() const {
  int64_t n;
  return ValidateDims(dims_, 0, &n);
}

absl::Status TensorShape::AddDim(int64_t size) {
  if (!IsValid()) return status();
  if (size < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Cannot add dimension of size ", size, "; dims must be >= 0"));
  }
  if (dims() >= kMaxTensorRank) {
    return absl::InvalidArgumentError(
        absl::StrCat("Cannot add a dimension past the maximum rank ", kMaxTensorRank));
  }
  const int64_t n = MultiplyWithoutOverflow(num_elements_, size);
  if (n < 0) {
    return absl::InvalidArgumentError(absl::StrCat("Adding dimension ", size, " to ", DebugString(),
                                                   " overflows the element count"));
  }
  dims_.push_back(size);
  num_elements_ = n;
  return absl::OkStatus();
}

void TensorShape::RemoveDim(int d) {
  dims_.erase(dims_.begin() + d);
  int64_t n = 1;
  for (int64_t size : dims_) n *= size;  // a sub-product of a valid count
  num_elements_ = n;
}

void TensorShape::AsProto(TensorShapeProto* proto) const {
  proto->Clear();
  for (int64_t d : dims_) proto->add_dim()->set_size(d);
}

TensorShapeProto TensorShape::AsProto() const {
  TensorShapeProto proto;
  AsProto(&proto);
  return proto;
}

std::string TensorShape::DebugString() const {
  return absl::StrCat("[", absl::StrJoin(dims_, ","), "]");
}

// --------------------------------------------------------- PartialTensorShape

PartialTensorShape::PartialTensorShape(std::initializer_list<int64_t> dims)
    : PartialTensorShape(absl::MakeConstSpan(dims.begin(), dims.size())) {}

PartialTensorShape::PartialTensorShape(absl::Span<const int64_t> dims)
    : dims_(dims.begin(), dims.end()), unknown_rank_(false) {
  int64_t n;
  valid_ = ValidateDims(dims_, -1, &n).ok();
}

PartialTensorShape::PartialTensorShape(const TensorShape& shape)
    : dims_(shape.dim_sizes().begin(), shape.dim_sizes().end()),
      unknown_rank_(false),
      valid_(shape.IsValid()) {}

PartialTensorShape PartialTensorShape::UnknownDims(int rank) {
  PartialTensorShape s;
  s.unknown_rank_ = false;
  s.dims_.assign(rank < 0 ? 0 : rank, -1);
  s.valid_ = rank <= kMaxTensorRank;
  return s;
}

absl::StatusOr<PartialTensorShape> PartialTensorShape::FromDims(absl::Span<const int64_t> dims) {
  int64_t n;
  absl::Status s = ValidateDims(dims, -1, &n);
  if (!s.ok()) return s;
  return PartialTensorShape(dims);
}

absl::StatusOr<PartialTensorShape> PartialTensorShape::FromProto(const TensorShapeProto& proto) {
  if (proto.unknown_rank()) {
    if (proto.dim_size() > 0) {
      return absl::InvalidArgumentError(
          "TensorShapeProto has unknown_rank set and also lists dims");
    }
    return PartialTensorShape();
  }
  if (proto.dim_size() > kMaxTensorRank) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Shape has rank ", proto.dim_size(), ", more than the maximum rank ", kMaxTensorRank));
  }
  Dims dims;
  for (const auto& d : proto.dim()) dims.push_back(d.size());
  return FromDims(dims);
}

absl::Status PartialTensorShape::status() const {
  if (unknown_rank_) return absl::OkStatus();
  int64_t n;
  return ValidateDims(dims_, -1, &n);
}

bool PartialTensorShape::IsFullyDefined() const {
  if (unknown_rank_) return false;
  for (int64_t d : dims_) {
    if (d < 0) return false;
  }
  return true;
}

int64_t PartialTensorShape::num_elements() const {
  if (!valid_ || !IsFullyDefined()) return -1;
  int64_t n = 1;
  for (int64_t d : dims_) n = MultiplyWithoutOverflow(n, d);
  return n;
}

bool PartialTensorShape::IsCompatibleWith(const PartialTensorShape& other) const {
  if (unknown_rank_ || other.unknown_rank_) return true;
  if (dims_.size() != other.dims_.size()) return false;
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (dims_[i] >= 0 && other.dims_[i] >= 0 && dims_[i] != other.dims_[i]) {
      return false;
    }
  }
  return true;
}

absl::StatusOr<PartialTensorShape> PartialTensorShape::MergeWith(
    const PartialTensorShape& other) const {
  if (unknown_rank_) return other;
  if (other.unknown_rank_) return *this;
  if (dims_.size() != other.dims_.size()) {
    return absl::InvalidArgumentError(absl::StrCat("Shapes ", DebugString(), " and ",
                                                   other.DebugString(), " have different ranks (",
                                                   dims_.size(), " vs ", other.dims_.size(), ")"));
  }
  PartialTensorShape result = *this;
  for (size_t i = 0; i < dims_.size(); ++i) {
    const int64_t a = dims_[i], b = other.dims_[i];
    if (a >= 0 && b >= 0 && a != b) {
      return absl::InvalidArgumentError(
          absl::StrCat("Shapes ", DebugString(), " and ", other.DebugString(),
                       " are incompatible: dimension ", i, " is ", a, " vs ", b));
    }
    result.dims_[i] = a >= 0 ? a : b;
  }
  return result;
}

PartialTensorShape PartialTensorShape::Concatenate(const PartialTensorShape& other) const {
  if (unknown_rank_ || other.unknown_rank_) return PartialTensorShape();
  PartialTensorShape result = *this;
  result.dims_.insert(result.dims_.end(), other.dims_.begin(), other.dims_.end());
  result.valid_ = valid_ && other.valid_ && result.dims_.size() <= kMaxTensorRank;
  return result;
}

PartialTensorShape PartialTensorShape::Concatenate(int64_t dim) const {
  return Concatenate(PartialTensorShape({dim}));
}

absl::StatusOr<TensorShape> PartialTensorShape::AsTensorShape() const {
  if (!IsFullyDefined()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Shape ", DebugString(), " is not fully defined"));
  }
  return TensorShape::FromDims(dims_);
}

void PartialTensorShape::AsProto(TensorShapeProto* proto) const {
  proto->Clear();
  if (unknown_rank_) {
    proto->set_unknown_rank(true);
    return;
  }
  for (int64_t d : dims_) proto->add_dim()->set_size(d);
}

TensorShapeProto PartialTensorShape::AsProto() const {
  TensorShapeProto proto;
  AsProto(&proto);
  return proto;
}

std::string PartialTensorShape::DebugString() const {
  if (unknown_rank_) return "<unknown>";
  return absl::StrCat(
      "[",
      absl::StrJoin(dims_, ",", [](std::string* out, int64_t d) { out->append(DimString(d)); }),
      "]");
}

bool PartialTensorShape::IsIdenticalTo(const PartialTensorShape& other) const {
  return unknown_rank_ == other.unknown_rank_ && dims_ == other.dims_;
}

}  // namespace towerflow
