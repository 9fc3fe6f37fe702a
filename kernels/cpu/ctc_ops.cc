// CTCLoss, CTCGreedyDecoder and CTCBeamSearchDecoder (ops/ctc_ops.cc),
// TF's arithmetic
// (Graves's thesis, chapter 7, in log space):
// - per batch entry b, the softmax y of the logits at each step t below
//   sequence_length[b]; the label sequence l (labels at or above the blank,
//   num_classes - 1, end it: a real label after one is an error; repeats
//   collapsed first with preprocess_collapse_repeated) and l', l with a blank
//   before each label and one at the end;
// - forward variables alpha(u, t) (paths ending in l'[u] at t, y(t)
//   included) and backward variables beta(u, t) (the rest, y(t) excluded),
//   only over the u that can still reach the end; a label may stay on
//   itself only with ctc_merge_repeated (blanks always), and skip the blank
//   before it unless it repeats the label before (with ctc_merge_repeated);
// - loss = -log p, p = sum_u alpha(u, 0) beta(u, 0); gradient with respect to
//   the logits y(k, t) - sum_{l'[u] = k} alpha(u, t) beta(u, t) / p (y where
//   no path exists); a zero sequence_length gives 0 and zero gradients, as
//   do labels longer than the sequence with ignore_longer_outputs_than_inputs.
// Sums of probabilities use TF's log-sum-exp, in T.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/threadpool.h"

namespace towerflow {
namespace {

template <typename T>
constexpr T kLogZero = -std::numeric_limits<T>::infinity();

template <typename T>
T LogSumExp(T a, T b) {
  if (a == kLogZero<T>) return b;
  if (b == kLogZero<T>) return a;
  return a > b ? a + std::log1p(std::exp(b - a)) : b + std::log1p(std::exp(a - b));
}

// Checks shared by the three ops: inputs [max_time, batch, classes],
// lengths [batch], each at most max_time.
absl::Status CheckInputsAndLengths(const Tensor& inputs, const Tensor& lengths,
                                   absl::StatusCode length_code) {
  if (inputs.dims() != 3) return absl::InvalidArgumentError("inputs is not a 3-Tensor");
  if (lengths.dims() != 1) return absl::InvalidArgumentError("sequence_length is not a vector");
  const int64_t max_time = inputs.dim_size(0), batch = inputs.dim_size(1);
  if (lengths.dim_size(0) != batch) {
    return absl::Status(length_code,
                        absl::StrCat("len(sequence_length) != batch_size.  len(sequence_length):  ",
                                     lengths.dim_size(0), " batch_size: ", batch));
  }
  for (int64_t b = 0; b < batch; ++b) {
    if (lengths.data<int32_t>()[b] > max_time) {
      return absl::Status(length_code, absl::StrCat("sequence_length(", b, ") <= ", max_time));
    }
  }
  return absl::OkStatus();
}

// The decoders' inputs (0: logits, 1: sequence_length), checked with TF's
// FailedPrecondition for the lengths.
struct DecoderInputs {
  const Tensor& logits;
  const int32_t* lengths;
  int64_t batch, classes;
};
absl::StatusOr<DecoderInputs> ReadDecoderInputs(KernelContext* ctx) {
  const Tensor& inputs = ctx->input(0);
  const Tensor& lengths = ctx->input(1);
  TW_RETURN_IF_ERROR(CheckInputsAndLengths(inputs, lengths, absl::StatusCode::kFailedPrecondition));
  return DecoderInputs{inputs, lengths.data<int32_t>(), inputs.dim_size(1), inputs.dim_size(2)};
}

// Each batch entry's labels from the sparse labels, TF's checks: indices
// [N, 2] in order and within [batch, longest].
absl::StatusOr<std::vector<std::vector<int>>> GroupLabels(const Tensor& indices,
                                                          const Tensor& values, int64_t batch) {
  if (indices.dims() != 2) return absl::InvalidArgumentError("labels_indices is not a matrix");
  if (indices.dim_size(1) != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "labels_indices must have 2 columns (batch, position), got ", indices.dim_size(1)));
  }
  if (values.dims() != 1) return absl::InvalidArgumentError("labels_values is not a vector");
  const int64_t n = indices.dim_size(0);
  if (values.dim_size(0) != n) {
    return absl::InvalidArgumentError(absl::StrCat(
        "labels_indices and labels_values must contain the same number of rows, but saw shapes: ",
        indices.shape().DebugString(), " vs. ", values.shape().DebugString()));
  }
  const int64_t* at = indices.data<int64_t>();
  int64_t longest = 0;
  for (int64_t i = 0; i < n; ++i) {  // (a position of 2^63 - 1 is out of bounds anyway)
    longest = std::max(longest, at[2 * i + 1] + (at[2 * i + 1] < INT64_MAX ? 1 : 0));
  }
  std::vector<std::vector<int>> labels(batch);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t b = at[2 * i], pos = at[2 * i + 1];
    const std::string where =
        absl::StrCat("label SparseTensor is not valid: indices[", i, "] = [", b, ",", pos, "]");
    if (b < 0 || b >= batch || pos < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, " is out of bounds: need 0 <= index < [", batch, ",", longest, "]"));
    }
    if (i > 0 && (b < at[2 * i - 2] || (b == at[2 * i - 2] && pos <= at[2 * i - 1]))) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, b == at[2 * i - 2] && pos == at[2 * i - 1] ? " is repeated" : " is out of order",
          ". Many sparse ops require sorted indices.\n    Use `tf.sparse.reorder` to create a "
          "correctly ordered copy.\n\n"));
    }
    labels[b].push_back(values.data<int32_t>()[i]);
  }
  return labels;
}

struct CtcOptions {
  bool collapse = false, merge = true, ignore_longer = false;
};

// l for one batch entry (TF's PopulateLPrimes checks).
absl::StatusOr<std::vector<int>> TargetLabels(const std::vector<int>& label, int64_t b,
                                              int64_t classes, int64_t length,
                                              const CtcOptions& o) {
  if (label.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("Labels length is zero in batch ", b));
  }
  std::vector<int> l;
  bool finished = false;
  for (size_t i = 0; i < label.size(); ++i) {
    if (i > 0 && o.collapse && label[i] == label[i - 1]) continue;
    if (label[i] >= classes - 1) {
      finished = true;
    } else if (finished) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Saw a non-null label (index >= num_classes - 1) following a null label, batch: ", b,
          " num_classes: ", classes, " labels: ", absl::StrJoin(label, ","),
          " labels seen so far: ", absl::StrJoin(l, ",")));
    } else {
      l.push_back(label[i]);
    }
  }
  for (int x : l) {
    if (x < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("All labels must be nonnegative integers, batch: ", b,
                       " labels: ", absl::StrJoin(l, ",")));
    }
  }
  if (!o.ignore_longer && static_cast<int64_t>(label.size()) > length) {
    return absl::InvalidArgumentError(
        absl::StrCat("Not enough time for target transition sequence (required: ", label.size(),
                     ", available: ", length, ")", b,
                     "You can turn this error into a warning by using the flag "
                     "ignore_longer_outputs_than_inputs"));
  }
  return l;
}

// Loss and gradient of one batch entry: y [steps, classes] probabilities
// in, grad [steps, classes] out (row t at grad + t * stride).
template <typename T>
T EntryLoss(const std::vector<int>& lp, int blank, bool merge, int64_t steps, int64_t classes,
            const std::vector<T>& y, T* grad, int64_t stride) {
  const int64_t u_count = static_cast<int64_t>(lp.size());
  const auto logy = [&](int64_t t, int k) { return std::log(y[t * classes + k]); };
  std::vector<T> alpha(u_count * steps, kLogZero<T>), beta(u_count * steps, kLogZero<T>);
  const auto A = [&](int64_t u, int64_t t) -> T& { return alpha[u * steps + t]; };
  const auto B = [&](int64_t u, int64_t t) -> T& { return beta[u * steps + t]; };
  // The u that can still finish by the end and be reached by t.
  const auto first_u = [&](int64_t t) { return std::max<int64_t>(0, u_count - 2 * (steps - t)); };
  const auto end_u = [&](int64_t t) { return std::min<int64_t>(u_count, 2 * (t + 1)); };
  A(0, 0) = logy(0, blank);
  if (u_count > 1) A(1, 0) = logy(0, lp[1]);
  for (int64_t t = 1; t < steps; ++t) {
    for (int64_t u = first_u(t); u < end_u(t); ++u) {
      T sum = kLogZero<T>;
      if (merge || lp[u] == blank) sum = A(u, t - 1);
      if (u > 0) sum = LogSumExp(sum, A(u - 1, t - 1));
      if (u > 1 && lp[u] != blank && !(merge && lp[u] == lp[u - 2])) {
        sum = LogSumExp(sum, A(u - 2, t - 1));
      }
      A(u, t) = logy(t, lp[u]) + sum;
    }
  }
  for (int64_t u = std::max<int64_t>(0, u_count - 2); u < u_count; ++u) B(u, steps - 1) = 0;
  for (int64_t t = steps - 2; t >= 0; --t) {
    for (int64_t u = first_u(t); u < end_u(t); ++u) {
      if (merge || lp[u] == blank) B(u, t) = LogSumExp(B(u, t), B(u, t + 1) + logy(t + 1, lp[u]));
      if (u + 1 < u_count) {
        B(u, t) = LogSumExp(B(u, t), B(u + 1, t + 1) + logy(t + 1, lp[u + 1]));
      }
      if (u + 2 < u_count && lp[u] != blank && !(merge && lp[u] == lp[u + 2])) {
        B(u, t) = LogSumExp(B(u, t), B(u + 2, t + 1) + logy(t + 1, lp[u + 2]));
      }
    }
  }
  T log_p = kLogZero<T>;
  for (int64_t u = 0; u < u_count; ++u) log_p = LogSumExp(log_p, A(u, 0) + B(u, 0));
  std::vector<T> through(classes);
  for (int64_t t = 0; t < steps; ++t) {
    T* g = grad + t * stride;
    if (log_p == kLogZero<T>) {  // no valid path: TF's gradient is y
      std::copy_n(y.data() + t * classes, classes, g);
      continue;
    }
    std::fill(through.begin(), through.end(), kLogZero<T>);
    for (int64_t u = 0; u < u_count; ++u) {
      through[lp[u]] = LogSumExp(through[lp[u]], A(u, t) + B(u, t));
    }
    for (int64_t k = 0; k < classes; ++k) {
      g[k] = y[t * classes + k] - std::exp(through[k] - log_p);
    }
  }
  return -log_p;
}

template <typename T>
class CtcLossOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("preprocess_collapse_repeated", &options_.collapse));
    TW_RETURN_IF_ERROR(c.GetAttr("ctc_merge_repeated", &options_.merge));
    return c.GetAttr("ignore_longer_outputs_than_inputs", &options_.ignore_longer);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& inputs = ctx->input(0);
    const Tensor& lengths = ctx->input(3);
    TW_RETURN_IF_ERROR(CheckInputsAndLengths(inputs, lengths, absl::StatusCode::kInvalidArgument));
    const int64_t max_time = inputs.dim_size(0), batch = inputs.dim_size(1);
    const int64_t classes = inputs.dim_size(2);
    if (classes <= 0 || classes > std::numeric_limits<int>::max()) {
      return absl::InvalidArgumentError(
          absl::StrCat("num_classes must be in [1, 2^31), got ", classes));
    }
    TW_ASSIGN_OR_RETURN(std::vector<std::vector<int>> labels,
                        GroupLabels(ctx->input(1), ctx->input(2), batch));
    const int32_t* len = lengths.data<int32_t>();
    std::vector<std::vector<int>> lps(batch);
    for (int64_t b = 0; b < batch; ++b) {
      if (len[b] < 0) return absl::InvalidArgumentError(absl::StrCat("seq_len(", b, ") < 0"));
      TW_ASSIGN_OR_RETURN(std::vector<int> l,
                          TargetLabels(labels[b], b, classes, len[b], options_));
      lps[b].push_back(static_cast<int>(classes - 1));
      for (int x : l) {
        lps[b].push_back(x);
        lps[b].push_back(static_cast<int>(classes - 1));
      }
    }
    TW_ASSIGN_OR_RETURN(Tensor * loss, ctx->allocate_output(0, TensorShape({batch})));
    TW_ASSIGN_OR_RETURN(Tensor * grad, ctx->allocate_output(1, inputs.shape()));
    std::fill_n(loss->data<T>(), batch, T(0));
    std::fill_n(grad->data<T>(), grad->NumElements(), T(0));
    const T* x = inputs.data<T>();
    ctx->intra_op_pool()->ParallelFor(
        batch, max_time * classes * 64, [&](int64_t begin, int64_t end) {
          for (int64_t b = begin; b < end; ++b) {
            const int64_t steps = len[b];
            if (steps == 0 ||
                (options_.ignore_longer && static_cast<int64_t>(labels[b].size()) > steps)) {
              continue;
            }
            std::vector<T> y(steps * classes);
            for (int64_t t = 0; t < steps; ++t) {
              const T* row = x + (t * batch + b) * classes;
              const T top = *std::max_element(row, row + classes);
              T sum = 0;
              for (int64_t k = 0; k < classes; ++k)
                sum += y[t * classes + k] = std::exp(row[k] - top);
              for (int64_t k = 0; k < classes; ++k) y[t * classes + k] /= sum;
            }
            loss->data<T>()[b] =
                EntryLoss<T>(lps[b], static_cast<int>(classes - 1), options_.merge, steps, classes,
                             y, grad->data<T>() + b * classes, batch * classes);
          }
        });
    return absl::OkStatus();
  }

 private:
  CtcOptions options_;
};

// The decoders' label sequences, one per batch entry, as a sparse tensor:
// indices [N, 2], values [N] and shape [batch, longest] into the outputs
// `first`, `first + stride` and `first + 2 * stride`.
absl::Status WriteSparse(KernelContext* ctx, int first, int stride,
                         const std::vector<std::vector<int64_t>>& sequences) {
  int64_t total = 0, longest = 0;
  for (const auto& s : sequences) {
    total += static_cast<int64_t>(s.size());
    longest = std::max<int64_t>(longest, static_cast<int64_t>(s.size()));
  }
  TW_ASSIGN_OR_RETURN(Tensor * indices, ctx->allocate_output(first, TensorShape({total, 2})));
  TW_ASSIGN_OR_RETURN(Tensor * values, ctx->allocate_output(first + stride, TensorShape({total})));
  TW_ASSIGN_OR_RETURN(Tensor * shape, ctx->allocate_output(first + 2 * stride, TensorShape({2})));
  int64_t i = 0;
  for (size_t b = 0; b < sequences.size(); ++b) {
    for (size_t k = 0; k < sequences[b].size(); ++k, ++i) {
      indices->data<int64_t>()[2 * i] = static_cast<int64_t>(b);
      indices->data<int64_t>()[2 * i + 1] = static_cast<int64_t>(k);
      values->data<int64_t>()[i] = sequences[b][k];
    }
  }
  shape->data<int64_t>()[0] = static_cast<int64_t>(sequences.size());
  shape->data<int64_t>()[1] = longest;
  return absl::OkStatus();
}

// CTCGreedyDecoder: each step's first most likely class; blanks dropped and,
// with merge_repeated, a class repeating the step before; log_probability
// -sum_t max_k inputs[t, b, k] (TF's).
template <typename T>
class CtcGreedyDecoderOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("merge_repeated", &merge_));
    return c.GetAttr("blank_index", &blank_index_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(const DecoderInputs in, ReadDecoderInputs(ctx));
    const int64_t batch = in.batch, classes = in.classes;
    if (in.logits.NumElements() == 0) {
      return absl::InvalidArgumentError("inputs must not be empty");
    }
    if (blank_index_ < -classes || blank_index_ >= classes) {
      return absl::InvalidArgumentError(absl::StrCat("blank_index expected to be between ",
                                                     -classes, " and ", classes - 1, " but was ",
                                                     blank_index_));
    }
    const int64_t blank = blank_index_ < 0 ? classes + blank_index_ : blank_index_;
    const T* x = in.logits.data<T>();
    std::vector<std::vector<int64_t>> decoded(batch);
    TW_ASSIGN_OR_RETURN(Tensor * log_prob, ctx->allocate_output(3, TensorShape({batch, 1})));
    for (int64_t b = 0; b < batch; ++b) {
      T sum = 0;
      int64_t previous = -1;
      for (int64_t t = 0; t < in.lengths[b]; ++t) {
        const T* row = x + (t * batch + b) * classes;
        const int64_t best = std::max_element(row, row + classes) - row;
        sum -= row[best];
        if (best != blank && !(merge_ && best == previous)) decoded[b].push_back(best);
        previous = best;
      }
      log_prob->data<T>()[b] = sum;
    }
    return WriteSparse(ctx, 0, 1, decoded);
  }

 private:
  bool merge_ = false;
  int64_t blank_index_ = -1;
};

// CTCBeamSearchDecoder: TF's prefix beam search (util/ctc/ctc_beam_search.h
// with its default scorer), step by step on the logits' log softmax: each
// prefix keeps the log probability of ending
// in a blank and in its last label; the beam keeps the beam_width best
// prefixes by their total, a prefix that falls out is deactivated, and a
// prefix is extended by every non-blank class while it is still a
// candidate. The top_paths best prefixes are the result (repeats in a
// prefix merged with merge_repeated), their totals the log probabilities.
template <typename T>
class CtcBeam {
 public:
  struct Probability {
    T blank, label, total;
    void Reset() { blank = label = total = kLogZero<T>; }
  };
  struct Entry {
    Entry* parent = nullptr;
    int label = -1;
    Probability newp{kLogZero<T>, kLogZero<T>, kLogZero<T>};
    Probability oldp{kLogZero<T>, kLogZero<T>, kLogZero<T>};
    // One per non-blank class, made together on first use (never resized:
    // the beam points into it).
    std::vector<Entry> children;
    bool Active() const { return newp.total != kLogZero<T>; }
  };

  CtcBeam(int classes, int width) : classes_(classes), width_(width) {
    root_.newp.total = root_.newp.blank = 0;
    leaves_.push_back(&root_);
  }

  // One step: `x` the classes' logits (the blank last).
  void Step(const T* x) {
    // The log softmax: x less max + log(sum(exp(x - max))), TF's offset.
    const T max = *std::max_element(x, x + classes_);
    T sum = 0;
    for (int k = 0; k < classes_; ++k) sum += std::exp(x[k] - max);
    const T top = max + std::log(sum);
    const int blank = classes_ - 1;
    std::vector<Entry*> branches = Extract();
    for (Entry* b : branches) b->oldp = b->newp;
    for (Entry* b : branches) {
      if (b->parent != nullptr) {
        if (b->parent->Active()) {
          const T previous =
              b->label == b->parent->label ? b->parent->oldp.blank : b->parent->oldp.total;
          b->newp.label = LogSumExp(b->newp.label, previous);
        }
        b->newp.label += x[b->label] - top;
      }
      b->newp.blank = b->oldp.total + x[blank] - top;
      b->newp.total = LogSumExp(b->newp.blank, b->newp.label);
      leaves_.push_back(b);
    }
    for (Entry* b : branches) {
      if (!IsCandidate(b->oldp)) continue;
      for (int k = 0; k < blank; ++k) {
        Entry& c = Child(b, k);
        if (c.Active()) continue;
        c.newp.blank = kLogZero<T>;
        const T previous = c.label == b->label ? b->oldp.blank : b->oldp.total;
        c.newp.label = x[k] - top + previous;
        c.newp.total = c.newp.label;
        if (IsCandidate(c.newp)) {
          if (static_cast<int>(leaves_.size()) == width_) {
            const auto bottom = Bottom();
            (*bottom)->newp.Reset();  // out of the beam
            leaves_.erase(bottom);
          }
          leaves_.push_back(&c);
        } else {
          c.oldp.Reset();
          c.newp.Reset();
        }
      }
    }
  }

  // The best n prefixes (labels, merged with merge_repeated) and totals.
  absl::Status TopPaths(int n, bool merge_repeated, std::vector<std::vector<int64_t>>* paths,
                        std::vector<T>* totals) {
    if (n > width_) return absl::InvalidArgumentError("requested more paths than the beam width.");
    if (n > static_cast<int>(leaves_.size())) {
      return absl::InvalidArgumentError("Less leaves in the beam search than requested.");
    }
    const std::vector<Entry*> best = Extract();
    for (int i = 0; i < n; ++i) {
      std::vector<int64_t> labels;
      int previous = -1;
      for (const Entry* e = best[i]; e->parent != nullptr; e = e->parent) {
        if (!merge_repeated || e->label != previous) labels.push_back(e->label);
        previous = e->label;
      }
      std::reverse(labels.begin(), labels.end());
      paths->push_back(std::move(labels));
      totals->push_back(best[i]->newp.total);
    }
    return absl::OkStatus();
  }

 private:
  // The leaves, best total first (the beam emptied, as TF's TopN::Extract).
  std::vector<Entry*> Extract() {
    std::vector<Entry*> out = std::move(leaves_);
    leaves_.clear();
    std::stable_sort(out.begin(), out.end(),
                     [](const Entry* a, const Entry* b) { return a->newp.total > b->newp.total; });
    return out;
  }
  typename std::vector<Entry*>::iterator Bottom() {
    return std::min_element(leaves_.begin(), leaves_.end(), [](const Entry* a, const Entry* b) {
      return a->newp.total < b->newp.total;
    });
  }
  bool IsCandidate(const Probability& p) {
    return p.total > kLogZero<T> &&
           (static_cast<int>(leaves_.size()) < width_ || p.total > (*Bottom())->newp.total);
  }
  Entry& Child(Entry* b, int k) {
    if (b->children.empty()) {
      b->children.resize(classes_ - 1);
      for (int i = 0; i < classes_ - 1; ++i) {
        b->children[i].parent = b;
        b->children[i].label = i;
      }
    }
    return b->children[k];
  }

  int classes_, width_;
  Entry root_;
  std::vector<Entry*> leaves_;
};

template <typename T>
class CtcBeamSearchDecoderOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("beam_width", &beam_width_));
    TW_RETURN_IF_ERROR(c.GetAttr("top_paths", &top_paths_));
    TW_RETURN_IF_ERROR(c.GetAttr("merge_repeated", &merge_));
    if (beam_width_ < 1 || beam_width_ > (1 << 20) || top_paths_ < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("beam_width must be in [1, 2^20] and top_paths at least 1, got ",
                       beam_width_, " and ", top_paths_));
    }
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    TW_ASSIGN_OR_RETURN(const DecoderInputs in, ReadDecoderInputs(ctx));
    const int64_t batch = in.batch, classes = in.classes;
    // Each prefix in the beam makes num_classes - 1 children per step.
    if (classes < 1 || beam_width_ * classes > (int64_t{1} << 24)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "beam_width * num_classes must be in [1, 2^24], got ", beam_width_, " * ", classes));
    }
    const int paths_n = static_cast<int>(top_paths_);
    std::vector<std::vector<std::vector<int64_t>>> paths(paths_n,
                                                         std::vector<std::vector<int64_t>>(batch));
    TW_ASSIGN_OR_RETURN(Tensor * log_prob,
                        ctx->allocate_output(3 * paths_n, TensorShape({batch, paths_n})));
    for (int64_t b = 0; b < batch; ++b) {
      CtcBeam<T> beam(static_cast<int>(classes), static_cast<int>(beam_width_));
      for (int64_t t = 0; t < in.lengths[b]; ++t) {
        beam.Step(in.logits.data<T>() + (t * batch + b) * classes);
      }
      std::vector<std::vector<int64_t>> best;
      std::vector<T> totals;
      TW_RETURN_IF_ERROR(beam.TopPaths(paths_n, merge_, &best, &totals));
      for (int p = 0; p < paths_n; ++p) {
        paths[p][b] = std::move(best[p]);
        log_prob->data<T>()[b * paths_n + p] = totals[p];
      }
    }
    for (int p = 0; p < paths_n; ++p) TW_RETURN_IF_ERROR(WriteSparse(ctx, p, paths_n, paths[p]));
    return absl::OkStatus();
  }

 private:
  int64_t beam_width_ = 1, top_paths_ = 1;
  bool merge_ = true;
};

TW_REGISTER_KERNELS(ctc_ops) {
  const auto cpu = [](const char* op) { return KernelDefBuilder(op).Device(kDeviceCpu); };
  RegisterTypedKernels<CtcLossOp, float, double>(cpu("CTCLoss"), "T");
  RegisterTypedKernels<CtcGreedyDecoderOp, float, double>(cpu("CTCGreedyDecoder"), "T");
  RegisterTypedKernels<CtcBeamSearchDecoderOp, float, double>(cpu("CTCBeamSearchDecoder"), "T");
}

}  // namespace
}  // namespace towerflow
