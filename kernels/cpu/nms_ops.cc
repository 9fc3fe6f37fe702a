// NonMaxSuppression V1-V5 and CombinedNonMaxSuppression (ops/image_ops.cc)
// with TF's greedy selection
// (non_max_suppression_op.cc): candidates above score_threshold in order of
// score (ties by index), each kept unless a kept box overlaps it by more
// than iou_threshold (IoU of the boxes' normalised corners, in float); V5's
// Soft-NMS decays a candidate's score by exp(-iou^2 / (2 sigma)) for each
// kept box instead, and requeues it while it stays above the threshold.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <queue>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"

namespace towerflow {
namespace {

// Intersection over union of boxes i and j ([y1, x1, y2, x2], any corners).
float Iou(const float* boxes, int64_t i, int64_t j) {
  const float* a = boxes + 4 * i;
  const float* b = boxes + 4 * j;
  const float ymin_a = std::min(a[0], a[2]), xmin_a = std::min(a[1], a[3]);
  const float ymax_a = std::max(a[0], a[2]), xmax_a = std::max(a[1], a[3]);
  const float ymin_b = std::min(b[0], b[2]), xmin_b = std::min(b[1], b[3]);
  const float ymax_b = std::max(b[0], b[2]), xmax_b = std::max(b[1], b[3]);
  const float area_a = (ymax_a - ymin_a) * (xmax_a - xmin_a);
  const float area_b = (ymax_b - ymin_b) * (xmax_b - xmin_b);
  if (area_a <= 0 || area_b <= 0) return 0.0f;
  const float inter = std::max(std::min(ymax_a, ymax_b) - std::max(ymin_a, ymin_b), 0.0f) *
                      std::max(std::min(xmax_a, xmax_b) - std::max(xmin_a, xmin_b), 0.0f);
  return inter / (area_a + area_b - inter);
}

struct Selection {
  std::vector<int32_t> indices;
  std::vector<float> scores;
  int64_t max_size = 0;
};

// The scores' checks (rank 1, one per box of `n`) and max_output_size's;
// the output size.
absl::StatusOr<int64_t> CheckScoresAndSize(const Tensor& scores, int64_t n, const Tensor& size_t_) {
  if (scores.dims() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("scores must be 1-D", scores.shape().DebugString(),
                     " (Shape must be rank 1 but is rank ", scores.dims(), ")"));
  }
  if (scores.shape().dim_size(0) != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("scores has incompatible shape (Dimensions must be equal, but are ", n,
                     " and ", scores.shape().dim_size(0), ")"));
  }
  if (n > std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError(absl::StrCat("NonMaxSuppression of ", n, " boxes"));
  }
  const int64_t max_size = *size_t_.data<int32_t>();
  if (max_size < 0) return absl::InvalidArgumentError("output size must be non-negative");
  return max_size;
}

// NonMaxSuppression's boxes [n, 4]: n.
absl::StatusOr<int64_t> CheckBoxes(const Tensor& boxes) {
  if (boxes.dims() != 2) {
    return absl::InvalidArgumentError(absl::StrCat("boxes must be 2-D", boxes.shape().DebugString(),
                                                   " (Shape must be rank 2 but is rank ",
                                                   boxes.dims(), ")"));
  }
  if (boxes.shape().dim_size(1) != 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        "boxes must have 4 columns (Dimension must be 4 but is ", boxes.shape().dim_size(1), ")"));
  }
  return boxes.shape().dim_size(0);
}

// TF's greedy selection (Soft-NMS with sigma > 0) of up to max_size of the
// n candidates by score, `overlap(i, j)` the similarity of candidates i and
// j (boxes' IoU, or a given matrix's entry).
template <typename Overlap>
Selection Select(const float* s, int64_t n, int64_t max_size, float threshold,
                 float score_threshold, float sigma, const Overlap& overlap) {
  struct Candidate {
    int32_t index;
    float score;
    int32_t checked;  // the kept boxes already compared with it
  };
  const auto lower = [](const Candidate& a, const Candidate& b) {
    return (a.score == b.score && a.index > b.index) || a.score < b.score;
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(lower)> queue(lower);
  for (int32_t i = 0; i < n; ++i) {
    if (s[i] > score_threshold) queue.push({i, s[i], 0});
  }
  const bool soft = sigma > 0;
  const float scale = soft ? -0.5f / sigma : 0.0f;
  Selection out;
  while (static_cast<int64_t>(out.indices.size()) < max_size && !queue.empty()) {
    Candidate next = queue.top();
    queue.pop();
    const float original = next.score;
    bool suppressed = false;
    for (int32_t j = static_cast<int32_t>(out.indices.size()) - 1; j >= next.checked; --j) {
      const float iou = overlap(next.index, out.indices[j]);
      const float weight = std::exp(scale * iou * iou);
      next.score *= soft || iou <= threshold ? weight : 0.0f;
      if (!soft && iou > threshold) {
        suppressed = true;
        break;
      }
      if (next.score <= score_threshold) break;
    }
    next.checked = static_cast<int32_t>(out.indices.size());
    if (suppressed) continue;
    if (next.score == original) {
      out.indices.push_back(next.index);
      out.scores.push_back(next.score);
    } else if (next.score > score_threshold) {
      queue.push(next);
    }
  }
  out.max_size = max_size;
  return out;
}

// max_output_size: a scalar.
absl::Status CheckSizeScalar(const Tensor& size_t_) {
  if (size_t_.dims() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_output_size must be 0-D, got shape ", size_t_.shape().DebugString()));
  }
  return absl::OkStatus();
}

// NonMaxSuppression V1-V5: greedy selection by the boxes' IoU.
absl::StatusOr<Selection> SelectBoxes(const Tensor& boxes, const Tensor& scores,
                                      const Tensor& size_t_, float iou_threshold,
                                      float score_threshold, float sigma) {
  TW_RETURN_IF_ERROR(CheckSizeScalar(size_t_));
  if (!(iou_threshold >= 0 && iou_threshold <= 1)) {
    return absl::InvalidArgumentError("iou_threshold must be in [0, 1]");
  }
  TW_ASSIGN_OR_RETURN(const int64_t n, CheckBoxes(boxes));
  TW_ASSIGN_OR_RETURN(const int64_t max_size, CheckScoresAndSize(scores, n, size_t_));
  const float* b = boxes.data<float>();
  return Select(scores.data<float>(), n, max_size, iou_threshold, score_threshold, sigma,
                [b](int64_t i, int64_t j) { return Iou(b, i, j); });
}

absl::StatusOr<float> ScalarArg(const Tensor& t, const char* name) {
  if (t.dims() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " must be 0-D, got shape ", t.shape().DebugString()));
  }
  return *t.data<float>();
}

// version 1: iou_threshold an attr; 2: a tensor; 3: with score_threshold;
// 4: also padding and valid_outputs; 5: also Soft-NMS and the scores.
class NonMaxSuppressionOp : public OpKernel {
 public:
  explicit NonMaxSuppressionOp(int version) : version_(version) {}
  absl::Status Init(const KernelConstruction& c) override {
    if (version_ == 1) TW_RETURN_IF_ERROR(c.GetAttr("iou_threshold", &iou_threshold_));
    if (version_ >= 4) TW_RETURN_IF_ERROR(c.GetAttr("pad_to_max_output_size", &pad_));
    return absl::OkStatus();
  }
  absl::Status Compute(KernelContext* ctx) override {
    float iou = iou_threshold_;
    float score_threshold = std::numeric_limits<float>::lowest();
    float sigma = 0;
    if (version_ >= 2) {
      TW_ASSIGN_OR_RETURN(iou, ScalarArg(ctx->input(3), "iou_threshold"));
    }
    if (version_ >= 3) {
      TW_ASSIGN_OR_RETURN(score_threshold, ScalarArg(ctx->input(4), "score_threshold"));
    }
    if (version_ == 5) {
      TW_ASSIGN_OR_RETURN(sigma, ScalarArg(ctx->input(5), "soft_nms_sigma"));
      if (!(sigma >= 0)) return absl::InvalidArgumentError("soft_nms_sigma_val must be >= 0");
    }
    TW_ASSIGN_OR_RETURN(
        const Selection sel,
        SelectBoxes(ctx->input(0), ctx->input(1), ctx->input(2), iou, score_threshold, sigma));
    // Padded with zeros to max_output_size (allocated by the device, which
    // refuses sizes past its limits).
    const int64_t valid = static_cast<int64_t>(sel.indices.size());
    const int64_t k = pad_ ? sel.max_size : valid;
    TW_ASSIGN_OR_RETURN(Tensor * indices, ctx->allocate_output(0, TensorShape({k})));
    int32_t* i = indices->data<int32_t>();
    std::fill(std::copy(sel.indices.begin(), sel.indices.end(), i), i + k, 0);
    if (version_ == 5) {
      TW_ASSIGN_OR_RETURN(Tensor * scores, ctx->allocate_output(1, TensorShape({k})));
      float* s = scores->data<float>();
      std::fill(std::copy(sel.scores.begin(), sel.scores.end(), s), s + k, 0.0f);
    }
    if (version_ >= 4) {
      TW_ASSIGN_OR_RETURN(Tensor * count,
                          ctx->allocate_output(version_ == 5 ? 2 : 1, TensorShape()));
      *count->data<int32_t>() = static_cast<int32_t>(valid);
    }
    return absl::OkStatus();
  }

 private:
  const int version_;
  float iou_threshold_ = 0.5f;
  bool pad_ = false;
};

// NonMaxSuppressionWithOverlaps (tf.image.non_max_suppression_overlaps):
// the greedy selection with the candidates' similarities given as a matrix
// overlaps [n, n] instead of their boxes' IoU.
class NonMaxSuppressionWithOverlapsOp : public OpKernel {
 public:
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& overlaps = ctx->input(0);
    TW_RETURN_IF_ERROR(CheckSizeScalar(ctx->input(2)));
    if (overlaps.dims() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("overlaps must be 2-D", overlaps.shape().DebugString()));
    }
    const int64_t n = overlaps.dim_size(0);
    if (overlaps.dim_size(1) != n) {
      return absl::InvalidArgumentError(
          absl::StrCat("overlaps must be square", overlaps.shape().DebugString()));
    }
    TW_ASSIGN_OR_RETURN(const int64_t max_size,
                        CheckScoresAndSize(ctx->input(1), n, ctx->input(2)));
    TW_ASSIGN_OR_RETURN(const float threshold, ScalarArg(ctx->input(3), "overlap_threshold"));
    TW_ASSIGN_OR_RETURN(const float score_threshold, ScalarArg(ctx->input(4), "score_threshold"));
    const float* o = overlaps.data<float>();
    const Selection sel =
        Select(ctx->input(1).data<float>(), n, max_size, threshold, score_threshold, 0.0f,
               [o, n](int64_t i, int64_t j) { return o[i * n + j]; });
    const int64_t k = static_cast<int64_t>(sel.indices.size());
    TW_ASSIGN_OR_RETURN(Tensor * indices, ctx->allocate_output(0, TensorShape({k})));
    std::copy(sel.indices.begin(), sel.indices.end(), indices->data<int32_t>());
    return absl::OkStatus();
  }
};

// CombinedNonMaxSuppression (tf.image.combined_non_max_suppression), as
// TF's kernel: per image and class, greedy NMS of the boxes scoring above
// score_threshold (at most max_output_size_per_class); then per image the
// classes' picks sorted by score (std::sort, as TF, so ties fall as TF's)
// and the first max_total_size kept, boxes clipped to [0, 1] unless
// clip_boxes is false. Outputs are padded with zeros to max_total_size, or
// with pad_per_class to min(max_total_size, per-class max * classes).
class CombinedNonMaxSuppressionOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    TW_RETURN_IF_ERROR(c.GetAttr("pad_per_class", &pad_per_class_));
    return c.GetAttr("clip_boxes", &clip_boxes_);
  }
  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& boxes = ctx->input(0);
    const Tensor& scores = ctx->input(1);
    if (boxes.dims() != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("boxes must be 4-D", boxes.shape().DebugString()));
    }
    if (scores.dims() != 3) {
      return absl::InvalidArgumentError(
          absl::StrCat("scores must be 3-D", scores.shape().DebugString()));
    }
    if (boxes.dim_size(0) != scores.dim_size(0)) {
      return absl::InvalidArgumentError("boxes and scores must have same batch size");
    }
    const auto int_scalar = [&](int i, const char* name) -> absl::StatusOr<int64_t> {
      const Tensor& t = ctx->input(i);
      if (t.dims() != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(name, " must be 0-D, got shape ", t.shape().DebugString()));
      }
      return *t.data<int32_t>();
    };
    TW_ASSIGN_OR_RETURN(const int64_t per_class_max, int_scalar(2, "max_size_per_class"));
    if (per_class_max <= 0) {
      return absl::InvalidArgumentError("max_size_per_class must be positive");
    }
    TW_ASSIGN_OR_RETURN(const int64_t total_max, int_scalar(3, "max_total_size"));
    if (total_max <= 0) return absl::InvalidArgumentError("max_total_size must be > 0");
    TW_ASSIGN_OR_RETURN(const float iou, ScalarArg(ctx->input(4), "iou_threshold"));
    TW_ASSIGN_OR_RETURN(const float score_threshold, ScalarArg(ctx->input(5), "score_threshold"));
    if (!(iou >= 0 && iou <= 1)) {
      return absl::InvalidArgumentError("iou_threshold must be in [0, 1]");
    }
    const int64_t batch = boxes.dim_size(0), num_boxes = boxes.dim_size(1), q = boxes.dim_size(2),
                  classes = scores.dim_size(2);
    if (q != 1 && q != classes) {
      return absl::InvalidArgumentError("third dimension of boxes must be either 1 or num classes");
    }
    if (boxes.dim_size(3) != 4) return absl::InvalidArgumentError("boxes must have 4 columns");
    if (scores.dim_size(1) != num_boxes) {
      return absl::InvalidArgumentError("scores has incompatible shape");
    }
    const int64_t per_batch =
        pad_per_class_ ? std::min(total_max, per_class_max * classes) : total_max;
    TW_ASSIGN_OR_RETURN(Tensor * out_boxes,
                        ctx->allocate_output(0, TensorShape({batch, per_batch, 4})));
    TW_ASSIGN_OR_RETURN(Tensor * out_scores,
                        ctx->allocate_output(1, TensorShape({batch, per_batch})));
    TW_ASSIGN_OR_RETURN(Tensor * out_classes,
                        ctx->allocate_output(2, TensorShape({batch, per_batch})));
    TW_ASSIGN_OR_RETURN(Tensor * valid, ctx->allocate_output(3, TensorShape({batch})));
    const int64_t size_per_class = std::min(per_class_max, num_boxes);
    // Per image: each class's picks in slots [class * size_per_class, ...).
    std::vector<std::vector<Pick>> picks(
        batch, std::vector<Pick>(size_per_class * classes, Pick{-1, -1.0f, -1, {0, 0, 0, 0}}));
    const float* box_data = boxes.data<float>();
    const float* score_data = scores.data<float>();
    ctx->intra_op_pool()->ParallelFor(batch * classes, num_boxes * 40, [&](int64_t a, int64_t b) {
      for (int64_t k = a; k < b; ++k) {
        const int64_t image = k / classes, cls = k % classes;
        NmsOneClass(box_data + image * num_boxes * q * 4, score_data + image * num_boxes * classes,
                    num_boxes, q, classes, cls, size_per_class, score_threshold, iou,
                    &picks[image]);
      }
    });
    for (int64_t image = 0; image < batch; ++image) {
      std::vector<Pick>& p = picks[image];
      std::sort(p.begin(), p.end(), [](const Pick& x, const Pick& y) { return x.score > y.score; });
      const int64_t found =
          std::count_if(p.begin(), p.end(), [](const Pick& x) { return x.box > -1; });
      const int64_t kept = std::min(found, pad_per_class_ ? per_batch : total_max);
      valid->data<int32_t>()[image] = static_cast<int32_t>(kept);
      float* ob = out_boxes->data<float>() + image * per_batch * 4;
      float* os = out_scores->data<float>() + image * per_batch;
      float* oc = out_classes->data<float>() + image * per_batch;
      std::fill(ob, ob + per_batch * 4, 0.0f);
      std::fill(os, os + per_batch, 0.0f);
      std::fill(oc, oc + per_batch, 0.0f);
      for (int64_t j = 0; j < kept && j < static_cast<int64_t>(p.size()); ++j) {
        for (int c = 0; c < 4; ++c) {
          ob[j * 4 + c] =
              clip_boxes_ ? std::max(std::min(p[j].coords[c], 1.0f), 0.0f) : p[j].coords[c];
        }
        os[j] = p[j].score;
        oc[j] = static_cast<float>(p[j].cls);
      }
    }
    return absl::OkStatus();
  }

 private:
  struct Pick {
    int64_t box;
    float score;
    int64_t cls;
    float coords[4];
  };

  // Greedy NMS of class `cls` of one image into its slots of `picks`.
  static void NmsOneClass(const float* boxes, const float* scores, int64_t num_boxes, int64_t q,
                          int64_t classes, int64_t cls, int64_t size_per_class,
                          float score_threshold, float iou, std::vector<Pick>* picks) {
    struct Candidate {
      int64_t box;
      float score;
    };
    const auto lower = [](const Candidate& x, const Candidate& y) { return x.score < y.score; };
    std::priority_queue<Candidate, std::vector<Candidate>, decltype(lower)> queue(lower);
    for (int64_t i = 0; i < num_boxes; ++i) {
      const float s = scores[i * classes + cls];
      if (s > score_threshold) queue.push(Candidate{i, s});
    }
    const int64_t column = q > 1 ? cls : 0;  // the class's box of each anchor
    std::vector<int64_t> selected;
    while (static_cast<int64_t>(selected.size()) < size_per_class && !queue.empty()) {
      const Candidate next = queue.top();
      queue.pop();
      const int64_t at = next.box * q + column;
      bool keep = true;
      for (int64_t j = static_cast<int64_t>(selected.size()) - 1; j >= 0; --j) {
        if (Iou(boxes, at, selected[j] * q + column) > iou) {
          keep = false;
          break;
        }
      }
      if (!keep) continue;
      const float* b = boxes + at * 4;
      (*picks)[selected.size() + size_per_class * cls] =
          Pick{next.box, next.score, cls, {b[0], b[1], b[2], b[3]}};
      selected.push_back(next.box);
    }
  }

  bool pad_per_class_ = false, clip_boxes_ = true;
};

TW_REGISTER_KERNELS(nms_ops) {
  const auto cpu = [](const char* op) {
    return KernelDefBuilder(op).Device(kDeviceCpu).TypeConstraint<float>("T");
  };
  RegisterKernel(KernelDefBuilder("NonMaxSuppression").Device(kDeviceCpu),
                 [] { return std::make_unique<NonMaxSuppressionOp>(1); });
  RegisterKernel(KernelDefBuilder(cpu("NonMaxSuppressionV2")).TypeConstraint<float>("T_threshold"),
                 [] { return std::make_unique<NonMaxSuppressionOp>(2); });
  RegisterKernel(KernelDefBuilder(cpu("NonMaxSuppressionV3")).TypeConstraint<float>("T_threshold"),
                 [] { return std::make_unique<NonMaxSuppressionOp>(3); });
  RegisterKernel(KernelDefBuilder(cpu("NonMaxSuppressionV4")).TypeConstraint<float>("T_threshold"),
                 [] { return std::make_unique<NonMaxSuppressionOp>(4); });
  RegisterKernel(cpu("NonMaxSuppressionV5"),
                 [] { return std::make_unique<NonMaxSuppressionOp>(5); });
  RegisterKernel(KernelDefBuilder("NonMaxSuppressionWithOverlaps").Device(kDeviceCpu),
                 MakeFactory<NonMaxSuppressionWithOverlapsOp>());
  RegisterKernel(KernelDefBuilder("CombinedNonMaxSuppression").Device(kDeviceCpu),
                 MakeFactory<CombinedNonMaxSuppressionOp>());
}

}  // namespace
}  // namespace towerflow
