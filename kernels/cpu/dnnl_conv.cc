#include "kernels/cpu/dnnl_conv.h"

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
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

std::atomic<int64_t>& WinogradPasses() {
  static std::atomic<int64_t> passes{0};
  return passes;
}

// Note [Winograd convolutions] in the header.
bool WinogradApplies(const Window2D& w, int64_t out_channels, int64_t groups) {
  return UseWinogradConvolutions().load() && groups == 1 && w.k_h == 3 && w.k_w == 3 &&
         w.stride_h == 1 && w.stride_w == 1 && w.dilation_h == 1 && w.dilation_w == 1 &&
         w.channels >= 32 && out_channels >= 32 && w.channels % 16 == 0 && out_channels % 16 == 0;
}

// The operands of one primitive: our buffers as they are where the
// primitive takes our layout, else temporaries in its layout (reordered in
// for inputs; Finish reorders outputs back). Temporaries come from `temp`
// when given, else from oneDNN.
class Operands {
 public:
  Operands(dnnl::engine& eng, dnnl::stream& s, const DnnlTemp* temp)
      : eng_(eng), s_(s), temp_(temp) {}

  // `p`, in our layout `ours`, as an input in the primitive's `want`.
  absl::StatusOr<memory> In(const memory::desc& want, const memory::desc& ours, const float* p) {
    memory given(ours, eng_, const_cast<float*>(p));
    if (want == ours) return given;
    TW_ASSIGN_OR_RETURN(memory m, Temp(want));
    Reorder(s_, given, m);
    return m;
  }

  // An output the primitive writes in `want`, for `p` in our layout `ours`.
  absl::StatusOr<memory> Out(const memory::desc& want, const memory::desc& ours, float* p) {
    memory given(ours, eng_, p);
    if (want == ours) return given;
    TW_ASSIGN_OR_RETURN(memory m, Temp(want));
    outputs_.emplace_back(m, given);
    return m;
  }

  // After the primitive: the outputs into our buffers, and the stream done.
  void Finish() {
    for (auto& [theirs, ours] : outputs_) Reorder(s_, theirs, ours);
    s_.wait();
  }

 private:
  absl::StatusOr<memory> Temp(const memory::desc& want) {
    if (temp_ == nullptr) return memory(want, eng_);
    const int64_t floats =
        static_cast<int64_t>((want.get_size() + sizeof(float) - 1) / sizeof(float));
    TW_ASSIGN_OR_RETURN(Tensor t, (*temp_)(floats));
    temps_.push_back(t);
    return memory(want, eng_, t.data<float>());
  }

  dnnl::engine& eng_;
  dnnl::stream& s_;
  const DnnlTemp* const temp_;
  std::vector<Tensor> temps_;
  std::vector<std::pair<memory, memory>> outputs_;  // (the primitive's, ours)
};

// The geometry of one call in oneDNN's terms.
struct Geometry {
  memory::desc src, dst;                   // ours: NHWC
  memory::desc wei;                        // ours: HWIO, grouped or not
  memory::desc src_any, dst_any, wei_any;  // what the primitive may choose
  memory::dims strides, dilates, pad_l, pad_r;
  int64_t out_channels;
};

// The forward pass with a bias and an activation, for inference: oneDNN
// adds both while the output is still in registers.
absl::Status FusedForward(dnnl::engine& eng, dnnl::algorithm algo, const Geometry& g,
                          const float* x, const float* filter, float* out, const ConvPostOps& post,
                          const DnnlTemp* temp) {
  const auto f32 = memory::data_type::f32;
  const memory::desc bias_md({g.out_channels}, f32, Tag::a);
  dnnl::post_ops ops;
  if (post.activation == FusedActivation::kRelu) {
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
  } else if (post.activation == FusedActivation::kRelu6) {
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_clip, 0.0f, 6.0f);
  }
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  const auto prop = dnnl::prop_kind::forward_inference;
  const dnnl::convolution_forward::primitive_desc pd =
      post.bias != nullptr
          ? dnnl::convolution_forward::primitive_desc(
                dnnl::convolution_forward::desc(prop, algo, g.src_any, g.wei_any, bias_md,
                                                g.dst_any, g.strides, g.dilates, g.pad_l, g.pad_r),
                attr, eng)
          : dnnl::convolution_forward::primitive_desc(
                dnnl::convolution_forward::desc(prop, algo, g.src_any, g.wei_any, g.dst_any,
                                                g.strides, g.dilates, g.pad_l, g.pad_r),
                attr, eng);
  dnnl::stream s(eng);
  Operands o(eng, s, temp);
  std::unordered_map<int, memory> args;
  TW_ASSIGN_OR_RETURN(args[DNNL_ARG_SRC], o.In(pd.src_desc(), g.src, x));
  TW_ASSIGN_OR_RETURN(args[DNNL_ARG_WEIGHTS], o.In(pd.weights_desc(), g.wei, filter));
  TW_ASSIGN_OR_RETURN(args[DNNL_ARG_DST], o.Out(pd.dst_desc(), g.dst, out));
  if (post.bias != nullptr) {
    args.insert({DNNL_ARG_BIAS, memory(bias_md, eng, const_cast<float*>(post.bias))});
  }
  dnnl::convolution_forward(pd).execute(s, args);
  o.Finish();
  return absl::OkStatus();
}

// One pass with `algo`. Throws dnnl::error when oneDNN has no kernel for it.
absl::Status RunPass(dnnl::algorithm algo, ConvPass pass, const Geometry& g, const float* x,
                     const float* filter, const float* dy, float* out, const ConvPostOps& post,
                     const DnnlTemp* temp) {
  dnnl::engine& eng = Engine();
  if (pass == ConvPass::kForward &&
      (post.bias != nullptr || post.activation != FusedActivation::kNone)) {
    return FusedForward(eng, algo, g, x, filter, out, post, temp);
  }
  const dnnl::convolution_forward::desc fwd_d(dnnl::prop_kind::forward_training, algo, g.src_any,
                                              g.wei_any, g.dst_any, g.strides, g.dilates, g.pad_l,
                                              g.pad_r);
  const dnnl::convolution_forward::primitive_desc fwd_pd(fwd_d, eng);
  dnnl::stream s(eng);
  Operands o(eng, s, temp);
  std::unordered_map<int, memory> args;
  if (pass == ConvPass::kForward) {
    TW_ASSIGN_OR_RETURN(args[DNNL_ARG_SRC], o.In(fwd_pd.src_desc(), g.src, x));
    TW_ASSIGN_OR_RETURN(args[DNNL_ARG_WEIGHTS], o.In(fwd_pd.weights_desc(), g.wei, filter));
    TW_ASSIGN_OR_RETURN(args[DNNL_ARG_DST], o.Out(fwd_pd.dst_desc(), g.dst, out));
    dnnl::convolution_forward(fwd_pd).execute(s, args);
  } else if (pass == ConvPass::kBackwardInput) {
    const dnnl::convolution_backward_data::desc d(algo, g.src_any, g.wei_any, g.dst_any, g.strides,
                                                  g.dilates, g.pad_l, g.pad_r);
    const dnnl::convolution_backward_data::primitive_desc pd(d, eng, fwd_pd);
    TW_ASSIGN_OR_RETURN(args[DNNL_ARG_DIFF_DST], o.In(pd.diff_dst_desc(), g.dst, dy));
    TW_ASSIGN_OR_RETURN(args[DNNL_ARG_WEIGHTS], o.In(pd.weights_desc(), g.wei, filter));
    TW_ASSIGN_OR_RETURN(args[DNNL_ARG_DIFF_SRC], o.Out(pd.diff_src_desc(), g.src, out));
    dnnl::convolution_backward_data(pd).execute(s, args);
  } else {
    const dnnl::convolution_backward_weights::desc d(algo, g.src_any, g.wei_any, g.dst_any,
                                                     g.strides, g.dilates, g.pad_l, g.pad_r);
    const dnnl::convolution_backward_weights::primitive_desc pd(d, eng, fwd_pd);
    TW_ASSIGN_OR_RETURN(args[DNNL_ARG_SRC], o.In(pd.src_desc(), g.src, x));
    TW_ASSIGN_OR_RETURN(args[DNNL_ARG_DIFF_DST], o.In(pd.diff_dst_desc(), g.dst, dy));
    TW_ASSIGN_OR_RETURN(args[DNNL_ARG_DIFF_WEIGHTS], o.Out(pd.diff_weights_desc(), g.wei, out));
    dnnl::convolution_backward_weights(pd).execute(s, args);
  }
  o.Finish();
  return absl::OkStatus();
}

bool Unimplemented(const dnnl::error& e) {
  // Shapes we accept but oneDNN does not (no kernel, or parameters past
  // its int limits such as a 2^31 - 1 stride).
  return e.status == dnnl_unimplemented || e.status == dnnl_invalid_arguments;
}

}  // namespace

std::atomic<bool>& UseDnnlConvolutions() {
  static std::atomic<bool> use{true};
  return use;
}

std::atomic<bool>& UseWinogradConvolutions() {
  static std::atomic<bool> use{true};
  return use;
}

int64_t WinogradPassesRun() { return WinogradPasses().load(); }

absl::StatusOr<bool> DnnlConv2D(ConvPass pass, const Window2D& w, int64_t out_channels,
                                const float* x, const float* filter, const float* dy, float* out,
                                int64_t groups, const ConvPostOps& post, const DnnlTemp* temp) {
  if (groups < 1 || w.channels % groups != 0 || out_channels % groups != 0) return false;
  try {
    const memory::dims src_dims = {w.batch, w.channels, w.in_h, w.in_w};
    const int64_t in_g = w.channels / groups, out_g = out_channels / groups;
    // Grouped weights are (g, o, i, h, w); ours are [KH,KW,C/G,G,OC/G].
    const memory::dims wei_dims = groups == 1 ? memory::dims{out_channels, w.channels, w.k_h, w.k_w}
                                              : memory::dims{groups, out_g, in_g, w.k_h, w.k_w};
    const memory::dims dst_dims = {w.batch, out_channels, w.out_h, w.out_w};
    const auto f32 = memory::data_type::f32;
    Geometry g;
    g.src = memory::desc(src_dims, f32, Tag::nhwc);
    g.dst = memory::desc(dst_dims, f32, Tag::nhwc);
    g.wei = groups == 1
                ? memory::desc(wei_dims, f32, Tag::hwio)
                : memory::desc(wei_dims, f32,
                               memory::dims{out_g, 1, groups * out_g, w.k_w * in_g * groups * out_g,
                                            in_g * groups * out_g});
    g.wei_any = memory::desc(wei_dims, f32, Tag::any);
    g.strides = {w.stride_h, w.stride_w};
    g.dilates = {w.dilation_h - 1, w.dilation_w - 1};
    g.pad_l = {w.pad_top, w.pad_left};
    g.pad_r = {w.pad_bottom, w.pad_right};
    g.out_channels = out_channels;
    if (temp != nullptr && WinogradApplies(w, out_channels, groups)) {
      // Winograd chooses its blocked layout for the activations too.
      g.src_any = memory::desc(src_dims, f32, Tag::any);
      g.dst_any = memory::desc(dst_dims, f32, Tag::any);
      try {
        TW_RETURN_IF_ERROR(RunPass(dnnl::algorithm::convolution_winograd, pass, g, x, filter, dy,
                                   out, post, temp));
        WinogradPasses().fetch_add(1);
        return true;
      } catch (const dnnl::error& e) {
        if (!Unimplemented(e)) throw;
        // No Winograd kernel on this CPU: the direct one below.
      }
    }
    g.src_any = g.src;
    g.dst_any = g.dst;
    TW_RETURN_IF_ERROR(
        RunPass(dnnl::algorithm::convolution_direct, pass, g, x, filter, dy, out, post, temp));
    return true;
  } catch (const dnnl::error& e) {
    if (Unimplemented(e)) return false;
    return absl::InternalError(absl::StrCat("oneDNN convolution failed: ", e.what()));
  }
}

}  // namespace towerflow
