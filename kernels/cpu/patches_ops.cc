// ExtractImagePatches (ops/image_ops.cc): output pixel (b, oy, ox) holds
// the window of images [b, H, W, D] at (oy * s_r - pad_top, ox * s_c -
// pad_left), its k_r x k_c taps `rates` apart, each tap's D elements in a
// row and zeros where a tap falls in the padding. The elements are moved
// as bytes (any dtype of their width), one tap's depth at a time.
#include <algorithm>
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

class ExtractImagePatchesOp : public OpKernel {
 public:
  absl::Status Init(const KernelConstruction& c) override {
    for (const auto& [name, v] :
         {std::pair{"ksizes", &ksizes_}, {"strides", &strides_}, {"rates", &rates_}}) {
      TW_RETURN_IF_ERROR(c.GetAttr(name, v));
      if (v->size() != 4) {
        return absl::InvalidArgumentError(absl::StrCat(name, " must have 4 entries"));
      }
      if ((*v)[0] != 1 || (*v)[3] != 1) {
        return absl::UnimplementedError(absl::StrCat("Only support ", name, " across space."));
      }
      if ((*v)[1] < 1 || (*v)[2] < 1) {
        return absl::OutOfRangeError(absl::StrCat(name, " is out of range."));
      }
    }
    std::string padding;
    TW_RETURN_IF_ERROR(c.GetAttr("padding", &padding));
    same_ = padding == "SAME";
    return absl::OkStatus();
  }

  absl::Status Compute(KernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    if (in.dims() != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("input must be 4-dimensional", in.shape().DebugString()));
    }
    const int64_t batch = in.shape().dim_size(0), depth = in.shape().dim_size(3);
    int64_t size[2], out[2], pad[2];
    for (int i = 0; i < 2; ++i) {
      size[i] = in.shape().dim_size(1 + i);
      const int64_t window = (ksizes_[1 + i] - 1) * rates_[1 + i] + 1, stride = strides_[1 + i];
      if (same_) {
        out[i] = (size[i] + stride - 1) / stride;
        pad[i] = std::max<int64_t>((out[i] - 1) * stride + window - size[i], 0) / 2;
      } else {
        out[i] = std::max<int64_t>(0, (size[i] - window + stride) / stride);
        pad[i] = 0;
      }
    }
    const int64_t kr = ksizes_[1], kc = ksizes_[2];
    TensorShape shape;
    for (int64_t d : {batch, out[0], out[1], kr * kc * depth}) TW_RETURN_IF_ERROR(shape.AddDim(d));
    TW_ASSIGN_OR_RETURN(const size_t elem, PlainElementSize("ExtractImagePatches", in.dtype()));
    TW_ASSIGN_OR_RETURN(Tensor * patches, ctx->allocate_output(0, shape));
    if (patches->NumElements() == 0) return absl::OkStatus();
    const char* src = static_cast<const char*>(in.raw_data());
    char* dst = static_cast<char*>(patches->raw_data());
    const size_t row = elem * depth;
    ctx->intra_op_pool()->ParallelFor(
        batch * out[0], out[1] * kr * kc * depth, [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            const int64_t b = r / out[0], oy = r % out[0];
            char* o = dst + r * out[1] * kr * kc * row;
            for (int64_t ox = 0; ox < out[1]; ++ox) {
              for (int64_t i = 0; i < kr; ++i) {
                const int64_t y = oy * strides_[1] + i * rates_[1] - pad[0];
                for (int64_t j = 0; j < kc; ++j, o += row) {
                  const int64_t x = ox * strides_[2] + j * rates_[2] - pad[1];
                  if (y < 0 || y >= size[0] || x < 0 || x >= size[1]) {
                    std::memset(o, 0, row);
                  } else {
                    std::memcpy(o, src + ((b * size[0] + y) * size[1] + x) * row, row);
                  }
                }
              }
            }
          }
        });
    return absl::OkStatus();
  }

 private:
  std::vector<int64_t> ksizes_, strides_, rates_;
  bool same_ = false;
};

TW_REGISTER_KERNELS(patches_ops) {
  RegisterKernel(KernelDefBuilder("ExtractImagePatches").Device(kDeviceCpu),
                 MakeFactory<ExtractImagePatchesOp>());
}

}  // namespace
}  // namespace towerflow
