#include "kernels/cpu/dnnl_conv.h"

#include <string>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace towerflow {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

dnnl::engine& Engine() {
  static dnnl::engine* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

// Copies between oneDNN's chosen layout and ours (no-op when equal).
void Reorder(dnnl::stream& s, dnnl::memory& from, dnnl::memory& to) {
  dnnl::reorder(from, to).execute(s, from, to);
}

// The forward pass with a bias and an activation, for inference: oneDNN
// adds both while the output is still in registers.
bool FusedForward(dnnl::engine& eng, const memory::desc& src_md, const memory::desc& wei_hwio,
                  const memory::desc& dst_md, const memory::dims& strides,
                  const memory::dims& dilates, const memory::dims& pad_l, const memory::dims& pad_r,
                  int64_t out_channels, const float* x, const float* filter, float* out,
                  const ConvPostOps& post) {
  const auto f32 = memory::data_type::f32;
  const memory::desc wei_any(wei_hwio.dims(), f32, Tag::any);
  const memory::desc bias_md({out_channels}, f32, Tag::a);
  dnnl::post_ops ops;
  if (post.activation == FusedActivation::kRelu) {
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
  } else if (post.activation == FusedActivation::kRelu6) {
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_clip, 0.0f, 6.0f);
  }
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  const auto prop = dnnl::prop_kind::forward_inference;
  const auto algo = dnnl::algorithm::convolution_direct;
  const dnnl::convolution_forward::primitive_desc pd =
      post.bias != nullptr
          ? dnnl::convolution_forward::primitive_desc(
                dnnl::convolution_forward::desc(prop, algo, src_md, wei_any, bias_md, dst_md,
                                                strides, dilates, pad_l, pad_r),
                attr, eng)
          : dnnl::convolution_forward::primitive_desc(
                dnnl::convolution_forward::desc(prop, algo, src_md, wei_any, dst_md, strides,
                                                dilates, pad_l, pad_r),
                attr, eng);
  dnnl::stream s(eng);
  const auto mem = [&](const memory::desc& md, const float* p) {
    return memory(md, eng, const_cast<float*>(p));
  };
  memory weights = mem(wei_hwio, filter);
  memory wei_mem = weights;
  if (pd.weights_desc() != wei_hwio) {
    wei_mem = memory(pd.weights_desc(), eng);
    Reorder(s, weights, wei_mem);
  }
  std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, mem(src_md, x)},
                                          {DNNL_ARG_WEIGHTS, wei_mem},
                                          {DNNL_ARG_DST, mem(dst_md, out)}};
  if (post.bias != nullptr) args.insert({DNNL_ARG_BIAS, mem(bias_md, post.bias)});
  dnnl::convolution_forward(pd).execute(s, args);
  s.wait();
  return true;
}

}  // namespace

std::atomic<bool>& UseDnnlConvolutions() {
  static std::atomic<bool> use{true};
  return use;
}

absl::StatusOr<bool> DnnlConv2D(ConvPass pass, const Window2D& w, int64_t out_channels,
                                const float* x, const float* filter, const float* dy, float* out,
                                int64_t groups, const ConvPostOps& post) {
  if (groups < 1 || w.channels % groups != 0 || out_channels % groups != 0) return false;
  try {
    dnnl::engine& eng = Engine();
    const memory::dims src_dims = {w.batch, w.channels, w.in_h, w.in_w};
    const int64_t in_g = w.channels / groups, out_g = out_channels / groups;
    // Grouped weights are (g, o, i, h, w); ours are [KH,KW,C/G,G,OC/G].
    const memory::dims wei_dims = groups == 1 ? memory::dims{out_channels, w.channels, w.k_h, w.k_w}
                                              : memory::dims{groups, out_g, in_g, w.k_h, w.k_w};
    const memory::dims dst_dims = {w.batch, out_channels, w.out_h, w.out_w};
    const memory::dims strides = {w.stride_h, w.stride_w};
    const memory::dims dilates = {w.dilation_h - 1, w.dilation_w - 1};
    const memory::dims pad_l = {w.pad_top, w.pad_left}, pad_r = {w.pad_bottom, w.pad_right};
    const auto f32 = memory::data_type::f32;
    const memory::desc src_md(src_dims, f32, Tag::nhwc), dst_md(dst_dims, f32, Tag::nhwc);
    const memory::desc wei_any(wei_dims, f32, Tag::any);
    const memory::desc wei_hwio =
        groups == 1
            ? memory::desc(wei_dims, f32, Tag::hwio)
            : memory::desc(wei_dims, f32,
                           memory::dims{out_g, 1, groups * out_g, w.k_w * in_g * groups * out_g,
                                        in_g * groups * out_g});

    if (pass == ConvPass::kForward &&
        (post.bias != nullptr || post.activation != FusedActivation::kNone)) {
      return FusedForward(eng, src_md, wei_hwio, dst_md, strides, dilates, pad_l, pad_r,
                          out_channels, x, filter, out, post);
    }
    const dnnl::convolution_forward::desc fwd_d(dnnl::prop_kind::forward_training,
                                                dnnl::algorithm::convolution_direct, src_md,
                                                wei_any, dst_md, strides, dilates, pad_l, pad_r);
    const dnnl::convolution_forward::primitive_desc fwd_pd(fwd_d, eng);
    dnnl::stream s(eng);
    // Our buffers; oneDNN only writes `out`.
    const auto mem = [&](const memory::desc& md, const float* p) {
      return memory(md, eng, const_cast<float*>(p));
    };

    if (pass == ConvPass::kForward) {
      memory weights = mem(wei_hwio, filter);
      memory wei_mem = weights;
      if (fwd_pd.weights_desc() != wei_hwio) {
        wei_mem = memory(fwd_pd.weights_desc(), eng);
        Reorder(s, weights, wei_mem);
      }
      dnnl::convolution_forward(fwd_pd).execute(s, {{DNNL_ARG_SRC, mem(src_md, x)},
                                                    {DNNL_ARG_WEIGHTS, wei_mem},
                                                    {DNNL_ARG_DST, mem(dst_md, out)}});
    } else if (pass == ConvPass::kBackwardInput) {
      const dnnl::convolution_backward_data::desc d(dnnl::algorithm::convolution_direct, src_md,
                                                    wei_any, dst_md, strides, dilates, pad_l,
                                                    pad_r);
      const dnnl::convolution_backward_data::primitive_desc pd(d, eng, fwd_pd);
      memory weights = mem(wei_hwio, filter);
      memory wei_mem = weights;
      if (pd.weights_desc() != wei_hwio) {
        wei_mem = memory(pd.weights_desc(), eng);
        Reorder(s, weights, wei_mem);
      }
      dnnl::convolution_backward_data(pd).execute(s, {{DNNL_ARG_DIFF_DST, mem(dst_md, dy)},
                                                      {DNNL_ARG_WEIGHTS, wei_mem},
                                                      {DNNL_ARG_DIFF_SRC, mem(src_md, out)}});
    } else {
      const dnnl::convolution_backward_weights::desc d(dnnl::algorithm::convolution_direct, src_md,
                                                       wei_any, dst_md, strides, dilates, pad_l,
                                                       pad_r);
      const dnnl::convolution_backward_weights::primitive_desc pd(d, eng, fwd_pd);
      memory result = mem(wei_hwio, out);
      memory diff = result;
      if (pd.diff_weights_desc() != wei_hwio) diff = memory(pd.diff_weights_desc(), eng);
      dnnl::convolution_backward_weights(pd).execute(s, {{DNNL_ARG_SRC, mem(src_md, x)},
                                                         {DNNL_ARG_DIFF_DST, mem(dst_md, dy)},
                                                         {DNNL_ARG_DIFF_WEIGHTS, diff}});
      if (pd.diff_weights_desc() != wei_hwio) Reorder(s, diff, result);
    }
    s.wait();
    return true;
  } catch (const dnnl::error& e) {
    // Shapes we accept but oneDNN does not (no kernel, or parameters past
    // its int limits such as a 2^31 - 1 stride) go to the im2col path.
    if (e.status == dnnl_unimplemented || e.status == dnnl_invalid_arguments) return false;
    return absl::InternalError(absl::StrCat("oneDNN convolution failed: ", e.what()));
  }
}

}  // namespace towerflow
