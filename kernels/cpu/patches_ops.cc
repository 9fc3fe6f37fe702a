// ExtractImagePatches and ExtractVolumePatches (ops/image_ops.cc): output
// pixel (b, o...) holds the window of input [b, spatial..., D] at (o * s -
// pad_before) in each spatial dimension, its k taps `rates` apart (volumes:
// 1 apart), each tap's D elements in a row and zeros where a tap falls in
// the padding (SAME puts the smaller half of it before, as TF). An image is
// a volume of one plane. The elements are moved as bytes (any dtype of
// their width), one tap's depth at a time.
#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "framework/kernel_context.h"
#include "framework/kernel_registry.h"
#include "framework/threadpool.h"
#include "kernels/kernel_util.h"

namespace towerflow {
namespace {

class ExtractPatchesOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    volume_ = c.def().op() == "ExtractVolumePatches";
    const size_t rank = volume_ ? 5 : 4;
    std::vector<std::pair<const char*, std::vector<int64_t>*>> attrs = {{"ksizes", &ksizes_},
                                                                        {"strides", &strides_}};
    if (!volume_) attrs.push_back({"rates", &rates_});
    for (const auto& [name, v] : attrs) {
      TW_RETURN_IF_ERROR(c.GetAttr(name, v));
      if (v->size() != rank) {
        return absl::InvalidArgumentError(absl::StrCat(name, " must have ", rank, " entries"));
      }
      if (v->front() != 1 || v->back() != 1) {
        return absl::UnimplementedError(absl::StrCat("Only support ", name, " across space."));
      }
      for (size_t i = 1; i + 1 < rank; ++i) {
        if ((*v)[i] < 1) return absl::OutOfRangeError(absl::StrCat(name, " is out of range."));
      }
    }
    // Volumes and images alike: [1, planes, rows, cols, 1].
    if (volume_) rates_.assign(5, 1);
    if (!volume_) {
      for (std::vector<int64_t>* v : {&ksizes_, &strides_, &rates_}) v->insert(v->begin() + 1, 1);
    }
    std::string padding;
    TW_RETURN_IF_ERROR(c.GetAttr("padding", &padding));
    same_ = padding == "SAME";
    return absl::OkStatus();
  }

  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const int rank = volume_ ? 5 : 4;
    if (in.dims() != rank) {
      return absl::InvalidArgumentError(
          absl::StrCat("input must be ", rank, "-dimensional", in.shape().DebugString()));
    }
    const int64_t batch = in.dim_size(0), depth = in.dim_size(rank - 1);
    // Planes, rows, cols (an image's one plane first).
    std::array<int64_t, 3> size, out, pad;
    for (int i = 0; i < 3; ++i) {
      size[i] = volume_ ? in.dim_size(1 + i) : i == 0 ? 1 : in.dim_size(i);
      const int64_t window = (ksizes_[1 + i] - 1) * rates_[1 + i] + 1, stride = strides_[1 + i];
      if (same_) {
        out[i] = (size[i] + stride - 1) / stride;
        pad[i] = std::max<int64_t>((out[i] - 1) * stride + window - size[i], 0) / 2;
      } else {
        out[i] = std::max<int64_t>(0, (size[i] - window + stride) / stride);
        pad[i] = 0;
      }
    }
    const int64_t taps = ksizes_[1] * ksizes_[2] * ksizes_[3];
    TensorShape shape;
    TW_RETURN_IF_ERROR(shape.AddDim(batch));
    for (int i = volume_ ? 0 : 1; i < 3; ++i) TW_RETURN_IF_ERROR(shape.AddDim(out[i]));
    TW_RETURN_IF_ERROR(shape.AddDim(taps * depth));
    TW_ASSIGN_OR_RETURN(const size_t elem, PlainElementSize(ctx->op(), in.dtype()));
    TW_ASSIGN_OR_RETURN(Tensor * patches, ctx->allocate_output(0, shape));
    if (patches->NumElements() == 0) return absl::OkStatus();
    const char* src = static_cast<const char*>(in.raw_data());
    char* dst = static_cast<char*>(patches->raw_data());
    const size_t row = elem * depth;
    // One task per output row (batch, plane, row).
    ctx->intra_op_pool()->ParallelFor(
        batch * out[0] * out[1], out[2] * taps * depth, [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            const int64_t b = r / (out[0] * out[1]), op = r / out[1] % out[0], orow = r % out[1];
            char* o = dst + r * out[2] * taps * row;
            for (int64_t oc = 0; oc < out[2]; ++oc) {
              for (int64_t kp = 0; kp < ksizes_[1]; ++kp) {
                const int64_t p = op * strides_[1] + kp * rates_[1] - pad[0];
                for (int64_t kr = 0; kr < ksizes_[2]; ++kr) {
                  const int64_t y = orow * strides_[2] + kr * rates_[2] - pad[1];
                  for (int64_t kc = 0; kc < ksizes_[3]; ++kc, o += row) {
                    const int64_t x = oc * strides_[3] + kc * rates_[3] - pad[2];
                    if (p < 0 || p >= size[0] || y < 0 || y >= size[1] || x < 0 || x >= size[2]) {
                      std::memset(o, 0, row);
                    } else {
                      std::memcpy(o, src + (((b * size[0] + p) * size[1] + y) * size[2] + x) * row,
                                  row);
                    }
                  }
                }
              }
            }
          }
        });
    return absl::OkStatus();
  }

 private:
  bool volume_ = false;
  // [1, planes, rows, cols, 1]: an image's with a plane of 1 inserted.
  std::vector<int64_t> ksizes_, strides_, rates_;
  bool same_ = false;
};

TW_REGISTER_KERNELS(patches_ops) {
  RegisterKernel(KernelDefBuilder("ExtractImagePatches").Device(kDeviceCpu),
                 MakeFactory<ExtractPatchesOp>());
  RegisterKernel(KernelDefBuilder("ExtractVolumePatches").Device(kDeviceCpu),
                 MakeFactory<ExtractPatchesOp>());
}

}  // namespace
}  // namespace towerflow
