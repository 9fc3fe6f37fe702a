// Tensor shapes: TensorShape (fully known) and PartialTensorShape (dims or the
// whole rank may be unknown).
//
// Both follow TensorFlow's rules: rank at most 254 (kMaxTensorRank), dims
// non-negative, element count within int64. Shapes read from untrusted data
// go through the StatusOr factories (FromDims, FromProto), which refuse bad
// dims. The initializer-list constructors are for literals in C++ code; they
// never abort either: a bad literal leaves the shape invalid, `status()` says
// why, and the consumers (GetVariable, op attrs, Tensor) report that status.
//
//   TensorShape s({5, 5, 3, 64});          // s.num_elements() == 4800
//   PartialTensorShape p({-1, 784});       // p.DebugString() == "[?,784]"
//   absl::StatusOr<TensorShape> t = TensorShape::FromProto(proto);
//
// Value types; thread-compatible.
#ifndef TOWERFLOW_CORE_TENSOR_SHAPE_H_
#define TOWERFLOW_CORE_TENSOR_SHAPE_H_

#include <cstdint>
#include <initializer_list>
#include <string>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "proto/tensor_shape.pb.h"

namespace towerflow {

inline constexpr int kMaxTensorRank = 254;

// Returns a * b, or -1 when a or b is negative or the product overflows int64.
int64_t MultiplyWithoutOverflow(int64_t a, int64_t b);

class TensorShape {
 public:
  using Dims = absl::InlinedVector<int64_t, 4>;

  // A scalar (rank 0, one element).
  TensorShape() = default;
  // See the file comment: a bad literal makes an invalid shape.
  TensorShape(std::initializer_list<int64_t> dims);
  explicit TensorShape(absl::Span<const int64_t> dims);

  // InvalidArgument naming the bad dim, the rank, or the overflow.
  static absl::StatusOr<TensorShape> FromDims(absl::Span<const int64_t> dims);
  // Also InvalidArgument for unknown rank or unknown (-1) dims.
  static absl::StatusOr<TensorShape> FromProto(const TensorShapeProto& proto);

  // OK, or InvalidArgument saying why a literal was refused.
  absl::Status status() const;
  bool IsValid() const { return num_elements_ >= 0; }

  int dims() const { return static_cast<int>(dims_.size()); }
  // REQUIRES: 0 <= d < dims().
  int64_t dim_size(int d) const { return dims_[d]; }
  absl::Span<const int64_t> dim_sizes() const { return dims_; }
  // -1 for an invalid shape.
  int64_t num_elements() const { return num_elements_; }

  // Appends a dim; on a negative size, rank overflow or element overflow the
  // shape is unchanged and InvalidArgument is returned.
  absl::Status AddDim(int64_t size);
  // Removes dim d. REQUIRES: 0 <= d < dims() and IsValid().
  void RemoveDim(int d);

  void AsProto(TensorShapeProto* proto) const;
  TensorShapeProto AsProto() const;
  // "[5,5,3,64]", "[]" for a scalar.
  std::string DebugString() const;

  bool operator==(const TensorShape& other) const { return dims_ == other.dims_; }
  bool operator!=(const TensorShape& other) const { return !(*this == other); }

 private:
  Dims dims_;
  int64_t num_elements_ = 1;  // -1 when invalid
};

class PartialTensorShape {
 public:
  using Dims = absl::InlinedVector<int64_t, 4>;

  // Unknown rank. Note that `{}` means this constructor too, as in
  // TensorFlow's C++ API: write Scalar() for a rank-0 shape.
  PartialTensorShape() = default;
  // Literal dims; -1 is an unknown dim. See the file comment for bad values.
  PartialTensorShape(std::initializer_list<int64_t> dims);
  explicit PartialTensorShape(absl::Span<const int64_t> dims);
  // NOLINTNEXTLINE(google-explicit-constructor): a known shape is a partial one.
  PartialTensorShape(const TensorShape& shape);

  static PartialTensorShape Unknown() { return PartialTensorShape(); }
  static PartialTensorShape Scalar() { return PartialTensorShape({}); }
  // A shape of known rank whose dims are all unknown.
  static PartialTensorShape UnknownDims(int rank);
  // Dims must be >= -1; rank at most kMaxTensorRank.
  static absl::StatusOr<PartialTensorShape> FromDims(absl::Span<const int64_t> dims);
  static absl::StatusOr<PartialTensorShape> FromProto(const TensorShapeProto& proto);

  absl::Status status() const;
  bool IsValid() const { return valid_; }

  bool unknown_rank() const { return unknown_rank_; }
  // -1 when the rank is unknown.
  int dims() const { return unknown_rank_ ? -1 : static_cast<int>(dims_.size()); }
  // -1 for an unknown dim. REQUIRES: 0 <= d < dims().
  int64_t dim_size(int d) const { return dims_[d]; }
  absl::Span<const int64_t> dim_sizes() const { return dims_; }
  bool IsFullyDefined() const;
  // -1 unless fully defined (and valid).
  int64_t num_elements() const;

  // True when some fully defined shape matches both.
  bool IsCompatibleWith(const PartialTensorShape& other) const;
  // The most specific shape compatible with both, or InvalidArgument naming
  // both shapes when they disagree.
  absl::StatusOr<PartialTensorShape> MergeWith(const PartialTensorShape& other) const;
  // This shape followed by `other`'s dims (unknown if either rank is).
  PartialTensorShape Concatenate(const PartialTensorShape& other) const;
  PartialTensorShape Concatenate(int64_t dim) const;
  // The fully defined shape, or InvalidArgument when something is unknown.
  absl::StatusOr<TensorShape> AsTensorShape() const;

  void AsProto(TensorShapeProto* proto) const;
  TensorShapeProto AsProto() const;
  // "[?,784]", "[]" for a scalar, "<unknown>" for unknown rank.
  std::string DebugString() const;

  // Same rank-knownness and identical dims (unknown equals unknown).
  bool IsIdenticalTo(const PartialTensorShape& other) const;
  bool operator==(const PartialTensorShape& other) const { return IsIdenticalTo(other); }
  bool operator!=(const PartialTensorShape& other) const { return !IsIdenticalTo(other); }

 private:
  Dims dims_;
  bool unknown_rank_ = true;
  bool valid_ = true;
};

}  // namespace towerflow

#endif  // TOWERFLOW_CORE_TENSOR_SHAPE_H_
