// The tf.sets ops: SetSize, DenseToDenseSetOperation,
// DenseToSparseSetOperation and SparseToSparseSetOperation. A set is the
// values along the last dimension of one "group" (an index over all the
// other dimensions): a dense operand's row, or a SparseTensor operand's run
// of consecutive entries with the same leading indices (TF groups runs, so
// an unsorted operand let through by validate_indices=false gives TF's
// answer, a group met twice counting twice). A result is a SparseTensor
// whose groups hold their set's values in ascending order (strings by
// byte), empty groups left out, its last dimension the largest set; TF's
// checks and messages (set_kernels.cc), in TF's order.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "kernels/cpu/sparse_util.h"

namespace towerflow {
namespace {

enum class SetOp { kAMinusB, kBMinusA, kIntersection, kUnion };

// A SparseTensor operand, checked as TF's SparseTensorFromContext.
struct SparseOperand {
  const int64_t* indices = nullptr;
  int64_t nnz = 0;
  std::vector<int64_t> dims;  // the dense shape
  int64_t rank() const { return static_cast<int64_t>(dims.size()); }
  const int64_t* row(int64_t i) const { return indices + i * rank(); }
};

std::string ShapeString(absl::Span<const int64_t> dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

// TF builds the dense shape first, then notes a rank below 2 and goes on to
// SparseTensor::Create, whose own complaints come second to that note.
absl::StatusOr<SparseOperand> ReadSparse(const Tensor& indices, const Tensor& values,
                                         const Tensor& shape, bool validate) {
  if (shape.dims() != 1) return absl::InvalidArgumentError("Shape must be a 1D tensor.");
  SparseOperand s;
  s.dims.assign(shape.data<int64_t>(), shape.data<int64_t>() + shape.NumElements());
  int64_t elements = 1;
  for (int64_t d : s.dims) {
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Expected shape dimensions to be non-negative, got ", d));
    }
    const int64_t product = MultiplyWithoutOverflow(elements, d);
    if (product < 0) {
      return absl::InvalidArgumentError(absl::StrCat("Encountered overflow when multiplying ",
                                                     elements, " with ", d, ", result: -1"));
    }
    elements = product;
  }
  if (s.rank() < 2) return absl::InvalidArgumentError(absl::StrCat("Invalid rank ", s.rank(), "."));
  if (values.dims() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("vals must be a vec, but got: ", values.shape().DebugString()));
  }
  if (indices.dims() == 2 && indices.dim_size(0) != values.dim_size(0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "indices and values rows (indexing dimension) must match. (indices = ", indices.dim_size(0),
        ", values = ", values.dim_size(0), ")"));
  }
  if (indices.dims() != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("indices must be a matrix, but got: ", indices.shape().DebugString()));
  }
  if (indices.dim_size(1) != s.rank()) {
    return absl::InvalidArgumentError("Order length must be SparseTensor rank.");
  }
  if (validate) TW_RETURN_IF_ERROR(sparse::CheckIndicesValid(indices, s.dims));
  s.indices = indices.data<int64_t>();
  s.nnz = indices.dim_size(0);
  return s;
}

// The group shape of operands of these dims: all but the last, the same for
// both.
absl::StatusOr<std::vector<int64_t>> GroupShape(absl::Span<const int64_t> a,
                                                absl::Span<const int64_t> b) {
  for (absl::Span<const int64_t> dims : {a, b}) {
    if (dims.size() < 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("Shape ", ShapeString(dims), " has rank ", dims.size(), " < 2"));
    }
  }
  const absl::Span<const int64_t> ga = a.first(a.size() - 1), gb = b.first(b.size() - 1);
  if (ga != gb) {
    return absl::InvalidArgumentError(
        absl::StrCat("Mismatched shapes ", ShapeString(ga), " vs ", ShapeString(gb)));
  }
  return std::vector<int64_t>(ga.begin(), ga.end());
}

// Runs of consecutive entries of a SparseTensor operand sharing their
// leading (group) indices.
class GroupRuns {
 public:
  explicit GroupRuns(const SparseOperand& s) : s_(s) { FindEnd(); }
  bool done() const { return begin_ >= s_.nnz; }
  int64_t begin() const { return begin_; }
  // One past the current run's last entry.
  int64_t end() const { return end_; }
  absl::Span<const int64_t> key() const {
    return {s_.row(begin_), static_cast<size_t>(s_.rank() - 1)};
  }
  void Next() {
    begin_ = end_;
    FindEnd();
  }

  // TF's CheckGroup of the current run: no dimension is 0 and every index is
  // below its dimension; `i` counts within the run. TF's messages, but
  // InvalidArgument where TF says Internal: it is the input that is wrong.
  absl::Status Check() const {
    for (int64_t d = 0; d < s_.rank(); ++d) {
      if (s_.dims[d] <= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("Invalid dim_size[", d, "] = ", s_.dims[d], "."));
      }
      for (int64_t i = begin_; i < end_; ++i) {
        if (s_.row(i)[d] >= s_.dims[d]) {
          return absl::InvalidArgumentError(absl::StrCat("indices[", i - begin_, ", ", d,
                                                         "] expected < ", s_.dims[d], ", got ",
                                                         s_.row(i)[d], "."));
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  void FindEnd() {
    end_ = begin_ + 1;
    const int64_t group_rank = s_.rank() - 1;
    while (end_ < s_.nnz && std::equal(s_.row(end_), s_.row(end_) + group_rank, s_.row(begin_)))
      ++end_;
  }

  const SparseOperand& s_;
  int64_t begin_ = 0, end_ = 0;
};

// The distinct values of a group, ascending, in `out`.
template <typename T>
void SortedSet(const T* first, const T* last, std::vector<T>* out) {
  out->assign(first, last);
  std::sort(out->begin(), out->end());
  out->erase(std::unique(out->begin(), out->end()), out->end());
}

template <typename T>
class SetSizeOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    return c.GetAttr("validate_indices", &validate_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& values = ctx->input(1);
    TW_ASSIGN_OR_RETURN(SparseOperand s,
                        ReadSparse(ctx->input(0), values, ctx->input(2), validate_));
    const std::vector<int64_t> group(s.dims.begin(), s.dims.end() - 1);
    TW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape(group)));
    int32_t* size = out->data<int32_t>();
    std::fill_n(size, out->NumElements(), 0);
    const T* v = values.data<T>();
    std::vector<T> set;
    for (GroupRuns run(s); !run.done(); run.Next()) {
      TW_RETURN_IF_ERROR(run.Check());
      // Only negative leading indices get past Check unvalidated; TF would
      // write outside its output there.
      int64_t flat = 0;
      for (size_t d = 0; d < group.size(); ++d) {
        if (run.key()[d] < 0) {
          return absl::InvalidArgumentError(absl::StrCat(
              "Index out of range, ", ShapeString(run.key()), " vs ", ShapeString(group)));
        }
        flat = flat * group[d] + run.key()[d];
      }
      SortedSet(v + run.begin(), v + run.end(), &set);
      size[flat] = static_cast<int32_t>(set.size());
    }
    return absl::OkStatus();
  }

 private:
  bool validate_ = true;
};

enum class Inputs { kDenseDense, kDenseSparse, kSparseSparse };

// The set operations, on dense or SparseTensor operands.
template <typename T, Inputs kInputs>
class SetOperationOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    std::string name;
    TW_RETURN_IF_ERROR(c.GetAttr("set_operation", &name));
    TW_RETURN_IF_ERROR(c.GetAttr("validate_indices", &validate_));
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char ch) { return std::tolower(ch); });
    if (name == "a-b") {
      op_ = SetOp::kAMinusB;
    } else if (name == "b-a") {
      op_ = SetOp::kBMinusA;
    } else if (name == "intersection") {
      op_ = SetOp::kIntersection;
    } else if (name == "union") {
      op_ = SetOp::kUnion;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("Invalid set_operation ", name, "."));
    }
    return absl::OkStatus();
  }

  absl::Status Compute(KernelContext* ctx) override {
    Result r;
    std::vector<T> a, b;
    std::vector<int64_t> group;
    if constexpr (kInputs == Inputs::kSparseSparse) {
      TW_ASSIGN_OR_RETURN(SparseOperand s1,
                          ReadSparse(ctx->input(0), ctx->input(1), ctx->input(2), validate_));
      TW_ASSIGN_OR_RETURN(SparseOperand s2,
                          ReadSparse(ctx->input(3), ctx->input(4), ctx->input(5), validate_));
      TW_ASSIGN_OR_RETURN(group, GroupShape(s1.dims, s2.dims));
      const T* v1 = ctx->input(1).data<T>();
      const T* v2 = ctx->input(4).data<T>();
      GroupRuns g1(s1), g2(s2);
      // Both operands' runs merged by key, as TF walks them.
      while (!g1.done() || !g2.done()) {
        const int order = g1.done()   ? 1
                          : g2.done() ? -1
                                      : sparse::CompareRows(g1.key().data(), g2.key().data(),
                                                            static_cast<int64_t>(group.size()));
        a.clear();
        b.clear();
        absl::Span<const int64_t> key;
        const int64_t a_end = g1.done() ? 0 : g1.end(), b_end = g2.done() ? 0 : g2.end();
        if (order <= 0) {
          TW_RETURN_IF_ERROR(g1.Check());
          SortedSet(v1 + g1.begin(), v1 + a_end, &a);
          key = g1.key();
        }
        if (order >= 0) {
          TW_RETURN_IF_ERROR(g2.Check());
          SortedSet(v2 + g2.begin(), v2 + b_end, &b);
          key = g2.key();
        }
        Apply(a, b, key, &r);
        if (order <= 0) g1.Next();
        if (order >= 0) g2.Next();
      }
      return Output(ctx, group, r);
    }
    const Tensor& set1 = ctx->input(0);
    const int64_t row1 = set1.dims() > 0 ? set1.dim_size(set1.dims() - 1) : 0;
    const T* v1 = set1.data<T>();
    if constexpr (kInputs == Inputs::kDenseDense) {
      const Tensor& set2 = ctx->input(1);
      TW_ASSIGN_OR_RETURN(group, GroupShape(set1.shape().dim_sizes(), set2.shape().dim_sizes()));
      const int64_t row2 = set2.dim_size(set2.dims() - 1);
      const T* v2 = set2.data<T>();
      TW_RETURN_IF_ERROR(ForEachGroup(group, [&](int64_t g, absl::Span<const int64_t> key) {
        SortedSet(v1 + g * row1, v1 + (g + 1) * row1, &a);
        SortedSet(v2 + g * row2, v2 + (g + 1) * row2, &b);
        Apply(a, b, key, &r);
        return absl::OkStatus();
      }));
      return Output(ctx, group, r);
    }
    TW_ASSIGN_OR_RETURN(SparseOperand s2,
                        ReadSparse(ctx->input(1), ctx->input(2), ctx->input(3), validate_));
    TW_ASSIGN_OR_RETURN(group, GroupShape(set1.shape().dim_sizes(), s2.dims));
    const T* v2 = ctx->input(2).data<T>();
    GroupRuns g2(s2);
    // Each dense group takes the sparse run at hand if its key is the
    // group's: runs out of order are passed over, as TF's.
    TW_RETURN_IF_ERROR(ForEachGroup(group, [&](int64_t g, absl::Span<const int64_t> key) {
      SortedSet(v1 + g * row1, v1 + (g + 1) * row1, &a);
      b.clear();
      if (!g2.done() && g2.key() == key) {
        TW_RETURN_IF_ERROR(g2.Check());
        SortedSet(v2 + g2.begin(), v2 + g2.end(), &b);
        g2.Next();
      }
      Apply(a, b, key, &r);
      return absl::OkStatus();
    }));
    return Output(ctx, group, r);
  }

 private:
  // Groups with a non-empty result, in the order found: their keys (rank-1
  // indices each), their sets' sizes and, back to back, their values.
  struct Result {
    std::vector<int64_t> keys;
    std::vector<int64_t> sizes;
    std::vector<T> values;
  };

  void Apply(const std::vector<T>& a, const std::vector<T>& b, absl::Span<const int64_t> key,
             Result* r) const {
    const size_t before = r->values.size();
    auto out = std::back_inserter(r->values);
    switch (op_) {
      case SetOp::kAMinusB:
        std::set_difference(a.begin(), a.end(), b.begin(), b.end(), out);
        break;
      case SetOp::kBMinusA:
        std::set_difference(b.begin(), b.end(), a.begin(), a.end(), out);
        break;
      case SetOp::kIntersection:
        std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), out);
        break;
      case SetOp::kUnion:
        std::set_union(a.begin(), a.end(), b.begin(), b.end(), out);
        break;
    }
    if (r->values.size() == before) return;
    r->keys.insert(r->keys.end(), key.begin(), key.end());
    r->sizes.push_back(static_cast<int64_t>(r->values.size() - before));
  }

  // Calls f(flat index, key) for every group of `group` in row-major order.
  template <typename F>
  static absl::Status ForEachGroup(absl::Span<const int64_t> group, F&& f) {
    int64_t count = 1;
    for (int64_t d : group) count *= d;  // the operands' shapes bound it
    std::vector<int64_t> key(group.size(), 0);
    for (int64_t g = 0; g < count; ++g) {
      TW_RETURN_IF_ERROR(f(g, key));
      for (int64_t d = static_cast<int64_t>(group.size()) - 1; d >= 0 && ++key[d] == group[d]; --d)
        key[d] = 0;
    }
    return absl::OkStatus();
  }

  static absl::Status Output(KernelContext* ctx, absl::Span<const int64_t> group, const Result& r) {
    const int64_t n = static_cast<int64_t>(r.values.size());
    const int64_t rank = static_cast<int64_t>(group.size()) + 1;
    std::vector<int64_t> dims(group.begin(), group.end());
    dims.push_back(r.sizes.empty() ? 0 : *std::max_element(r.sizes.begin(), r.sizes.end()));
    TW_RETURN_IF_ERROR(TensorShape::FromDims(dims).status());
    TW_ASSIGN_OR_RETURN(Tensor * indices, ctx->allocate_output(0, TensorShape({n, rank})));
    TW_ASSIGN_OR_RETURN(Tensor * values, ctx->allocate_output(1, TensorShape({n})));
    TW_ASSIGN_OR_RETURN(Tensor * shape, ctx->allocate_output(2, TensorShape({rank})));
    int64_t* idx = indices->data<int64_t>();
    for (size_t g = 0, i = 0; g < r.sizes.size(); ++g) {
      for (int64_t k = 0; k < r.sizes[g]; ++k, ++i) {
        std::copy_n(r.keys.begin() + g * (rank - 1), rank - 1, idx + i * rank);
        idx[i * rank + rank - 1] = k;
      }
    }
    std::copy(r.values.begin(), r.values.end(), values->data<T>());
    std::copy(dims.begin(), dims.end(), shape->data<int64_t>());
    return absl::OkStatus();
  }

  SetOp op_ = SetOp::kUnion;
  bool validate_ = true;
};

template <typename T>
using DenseToDenseOp = SetOperationOp<T, Inputs::kDenseDense>;
template <typename T>
using DenseToSparseOp = SetOperationOp<T, Inputs::kDenseSparse>;
template <typename T>
using SparseToSparseOp = SetOperationOp<T, Inputs::kSparseSparse>;

// TF's types for all four.
template <template <typename> class K>
void RegisterSetKernels(const char* op) {
  RegisterTypedKernels<K, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, std::string>(
      KernelDefBuilder(op).Device(kDeviceCpu), "T");
}

TW_REGISTER_KERNELS(set_ops) {
  RegisterSetKernels<SetSizeOp>("SetSize");
  RegisterSetKernels<DenseToDenseOp>("DenseToDenseSetOperation");
  RegisterSetKernels<DenseToSparseOp>("DenseToSparseSetOperation");
  RegisterSetKernels<SparseToSparseOp>("SparseToSparseSetOperation");
}

}  // namespace
}  // namespace towerflow
