// The finite-difference cases of the nn gradients (nn_grad.cc and image_grad.cc):
// see gradient_functions_test.cc.
#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/color_ops.h"
#include "ops/gen/conv3d_ops.h"
#include "ops/gen/conv_ops.h"
#include "ops/gen/ctc_ops.h"
#include "ops/gen/image_ops.h"
#include "ops/gen/index_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/nccl_ops.h"
#include "ops/gen/nn_ops.h"
#include "ops/gen/resample_ops.h"
#include "ops/gradients/testing/grad_cases.h"

namespace towerflow {
namespace grad_cases {

std::vector<GradCase> NnCases() {
  return {
      // Neural-network ops.
      Binary(
          "BiasAdd", [](const Scope& s, Output v, Output b) { return ops::BiasAdd(s, v, b); },
          S({2, 3}), S({3})),
      Binary(
          "BiasAdd/NCHW",
          [](const Scope& s, Output v, Output b) {
            return ops::BiasAdd(s, v, b, ops::BiasAdd::DataFormat("NCHW"));
          },
          S({1, 2, 2, 2}), S({2})),
      Binary(
          "BiasAddV1", [](const Scope& s, Output v, Output b) { return ops::BiasAddV1(s, v, b); },
          S({2, 3}), S({3})),
      Unary(
          "Relu", [](const Scope& s, Output x) { return ops::Relu(s, x); }, NonZero({2, 3})),
      Unary(
          "Relu6", [](const Scope& s, Output x) { return ops::Relu6(s, ops::Mul(s, x, 4.0f)); },
          InputSpec{TensorShape({2, 3}), -2, 2, true}),
      Unary(
          "Elu", [](const Scope& s, Output x) { return ops::Elu(s, x); }, NonZero({2, 3})),
      Unary("Softplus", [](const Scope& s, Output x) { return ops::Softplus(s, x); }),
      Unary(
          "Softsign", [](const Scope& s, Output x) { return ops::Softsign(s, x); },
          NonZero({2, 3})),
      Unary(
          "Selu", [](const Scope& s, Output x) { return ops::Selu(s, x); }, NonZero({2, 3})),
      Unary(
          "LeakyRelu",
          [](const Scope& s, Output x) {
            return ops::LeakyRelu(s, x, ops::LeakyRelu::Alpha(0.3f));
          },
          NonZero({2, 3})),
      Unary("Erf", [](const Scope& s, Output x) { return ops::Erf(s, x); }),
      Unary("Softmax", [](const Scope& s, Output x) { return ops::Softmax(s, x); }),
      Unary("LogSoftmax", [](const Scope& s, Output x) { return ops::LogSoftmax(s, x); }),
      // Labels are distributions (the op's backprop assumes rows summing to 1).
      {"SoftmaxCrossEntropyWithLogits",
       {S({2, 3}), S({2, 3})},
       [](const Scope& s, const Outs& x) -> Outs {
         return {ops::SoftmaxCrossEntropyWithLogits(s, x[0], ops::Softmax(s, x[1])).loss};
       }},
      {"SoftmaxCrossEntropyWithLogits/backprop",
       {S({2, 3})},
       [](const Scope& s, const Outs& x) -> Outs {
         return {ops::SoftmaxCrossEntropyWithLogits(
                     s, x[0], ops::Const(s, {{0.2f, 0.3f, 0.5f}, {1.f, 0.f, 0.f}}))
                     .backprop};
       }},
      {"SparseSoftmaxCrossEntropyWithLogits",
       {S({2, 3})},
       [](const Scope& s, const Outs& x) -> Outs {
         return {ops::SparseSoftmaxCrossEntropyWithLogits(s, x[0], {2, 0}).loss};
       }},
      {"Conv2D",
       {S({1, 4, 4, 2}, -0.5, 0.5), S({3, 3, 2, 2}, -0.5, 0.5)},
       [](const Scope& s, const Outs& x) -> Outs {
         return {ops::Conv2D(s, x[0], x[1], {1, 1, 1, 1}, "SAME")};
       }},
      {"Conv2D/valid_stride2_dilation",
       {S({1, 5, 5, 1}, -0.5, 0.5), S({2, 2, 1, 2}, -0.5, 0.5)},
       [](const Scope& s, const Outs& x) -> Outs {
         return {ops::Conv2D(s, x[0], x[1], {1, 2, 2, 1}, "VALID")};
       }},
      {"Conv2DBackpropInput",
       {S({2, 2, 1, 2}, -0.5, 0.5), S({1, 2, 2, 2}, -0.5, 0.5)},
       [](const Scope& s, const Outs& x) -> Outs {
         return {ops::Conv2DBackpropInput(s, {1, 4, 4, 1}, x[0], x[1], {1, 2, 2, 1}, "SAME")};
       }},
      {"Conv2DBackpropFilter",
       {S({1, 4, 4, 1}, -0.5, 0.5), S({1, 2, 2, 2}, -0.5, 0.5)},
       [](const Scope& s, const Outs& x) -> Outs {
         return {ops::Conv2DBackpropFilter(s, x[0], {2, 2, 1, 2}, x[1], {1, 2, 2, 1}, "SAME")};
       }},
      {"Conv3D",
       {S({1, 3, 4, 3, 2}, -0.5, 0.5), S({2, 3, 2, 2, 2}, -0.5, 0.5)},
       [](const Scope& s, const Outs& x) -> Outs {
         return {ops::Conv3D(s, x[0], x[1], {1, 1, 1, 1, 1}, "SAME")};
       }},
      {"Conv3D/valid_stride2_dilation",
       {S({1, 5, 4, 5, 1}, -0.5, 0.5), S({2, 2, 2, 1, 2}, -0.5, 0.5)},
       [](const Scope& s, const Outs& x) -> Outs {
         return {ops::Conv3D(s, x[0], x[1], {1, 2, 1, 2, 1}, "VALID",
                             ops::Conv3D::Dilations({1, 1, 2, 1, 1}))};
       }},
      {"Conv3DBackpropInputV2",
       {S({2, 2, 2, 1, 2}, -0.5, 0.5), S({1, 2, 2, 2, 2}, -0.5, 0.5)},
       [](const Scope& s, const Outs& x) -> Outs {
         return {
             ops::Conv3DBackpropInputV2(s, {1, 3, 4, 4, 1}, x[0], x[1], {1, 2, 2, 2, 1}, "SAME")};
       }},
      {"Conv3DBackpropFilterV2",
       {S({1, 3, 4, 4, 1}, -0.5, 0.5), S({1, 2, 2, 2, 2}, -0.5, 0.5)},
       [](const Scope& s, const Outs& x) -> Outs {
         return {
             ops::Conv3DBackpropFilterV2(s, x[0], {2, 2, 2, 1, 2}, x[1], {1, 2, 2, 2, 1}, "SAME")};
       }},
      Unary(
          "MaxPool3D",
          [](const Scope& s, Output x) {
            return ops::MaxPool3D(s, x, {1, 2, 2, 2, 1}, {1, 1, 1, 1, 1}, "VALID");
          },
          S({1, 3, 3, 3, 1})),
      Unary(
          "AvgPool3D",
          [](const Scope& s, Output x) {
            return ops::AvgPool3D(s, x, {1, 2, 2, 2, 1}, {1, 2, 2, 2, 1}, "SAME");
          },
          S({1, 3, 3, 3, 2})),
      Unary(
          "AvgPool3DGrad",
          [](const Scope& s, Output g) {
            return ops::AvgPool3DGrad(s, {1, 3, 3, 3, 1}, g, {1, 2, 2, 2, 1}, {1, 1, 1, 1, 1},
                                      "VALID");
          },
          S({1, 2, 2, 2, 1})),
      {"MaxPool3DGrad",
       {S({1, 3, 3, 3, 1}), S({1, 2, 2, 2, 1})},
       [](const Scope& s, const Outs& x) -> Outs {
         const std::vector<int64_t> k = {1, 2, 2, 2, 1}, st = {1, 1, 1, 1, 1};
         return {ops::MaxPool3DGrad(s, x[0], ops::MaxPool3D(s, x[0], k, st, "VALID"), x[1], k, st,
                                    "VALID")};
       }},
      {"MaxPool3DGradGrad",
       {S({1, 3, 3, 3, 1}), S({1, 3, 3, 3, 1})},
       [](const Scope& s, const Outs& x) -> Outs {
         const std::vector<int64_t> k = {1, 2, 2, 2, 1}, st = {1, 1, 1, 1, 1};
         return {ops::MaxPool3DGradGrad(s, x[0], ops::MaxPool3D(s, x[0], k, st, "VALID"), x[1], k,
                                        st, "VALID")};
       }},
      {"BatchNormWithGlobalNormalization",
       {S({1, 2, 3, 2}), S({2}), S({2}, 0.5, 2), S({2}), S({2})},
       [](const Scope& s, const Outs& x) -> Outs {
         return {
             ops::BatchNormWithGlobalNormalization(s, x[0], x[1], x[2], x[3], x[4], 0.001f, true)};
       }},
      Unary(
          "MaxPool",
          [](const Scope& s, Output x) {
            return ops::MaxPool(s, x, {1, 2, 2, 1}, {1, 1, 1, 1}, "VALID");
          },
          S({1, 3, 3, 1})),
      Unary(
          "AvgPool",
          [](const Scope& s, Output x) {
            return ops::AvgPool(s, x, {1, 2, 2, 1}, {1, 2, 2, 1}, "SAME");
          },
          S({1, 3, 3, 2})),
      Unary(
          "AvgPoolGrad",
          [](const Scope& s, Output g) {
            return ops::AvgPoolGrad(s, {1, 3, 3, 1}, g, {1, 2, 2, 1}, {1, 1, 1, 1}, "VALID");
          },
          S({1, 2, 2, 1})),
      Unary(
          "LRN",
          [](const Scope& s, Output x) {
            return ops::LRN(s, x, ops::LRN::DepthRadius(1).Bias(1.0f).Alpha(0.5f).Beta(0.75f));
          },
          S({1, 2, 1, 4})),
      {"FusedBatchNormV3",
       {S({2, 2, 1, 3}), S({3}, 0.2, 0.6), S({3})},
       [](const Scope& s, const Outs& x) -> Outs {
         return {ops::FusedBatchNormV3(s, x[0], x[1], x[2], ops::Const(s, {0.f, 0.f, 0.f}),
                                       ops::Const(s, {1.f, 1.f, 1.f}))
                     .y};
       }},
      {"FusedBatchNorm",
       {S({2, 2, 1, 3}), S({3}, 0.2, 0.6), S({3})},
       [](const Scope& s, const Outs& x) -> Outs {
         return {ops::FusedBatchNorm(s, x[0], x[1], x[2], ops::Const(s, {0.f, 0.f, 0.f}),
                                     ops::Const(s, {1.f, 1.f, 1.f}))
                     .y};
       }},
      {"FusedBatchNormV3/inference",
       {S({2, 2, 1, 3}), S({3}, 0.2, 0.6), S({3})},
       [](const Scope& s, const Outs& x) -> Outs {
         return {ops::FusedBatchNormV3(s, x[0], x[1], x[2], ops::Const(s, {0.1f, -0.2f, 0.3f}),
                                       ops::Const(s, {1.f, 0.5f, 2.f}),
                                       ops::FusedBatchNormV3::IsTraining(false))
                     .y};
       }},
      {"FusedBatchNormV2",
       {S({2, 2, 1, 3}), S({3}, 0.2, 0.6), S({3})},
       [](const Scope& s, const Outs& x) -> Outs {
         return {ops::FusedBatchNormV2(s, x[0], x[1], x[2], ops::Const(s, {0.f, 0.f, 0.f}),
                                       ops::Const(s, {1.f, 1.f, 1.f}))
                     .y};
       }},
      {"FusedBatchNormGradV2",
       {S({2, 2, 1, 3}), S({2, 2, 1, 3}), S({3}, 0.2, 0.6)},
       [](const Scope& s, const Outs& x) -> Outs {
         auto fbn =
             ops::FusedBatchNormV2(s, x[1], x[2], ops::Const(s, {0.f, 0.f, 0.f}),
                                   ops::Const(s, {0.f, 0.f, 0.f}), ops::Const(s, {1.f, 1.f, 1.f}));
         auto g = ops::FusedBatchNormGradV2(s, x[0], x[1], x[2], fbn.reserve_space_1,
                                            fbn.reserve_space_2);
         return {g.x_backprop, g.scale_backprop, g.offset_backprop};
       }},
      {"DepthwiseConv2dNative",
       {S({1, 4, 4, 2}, -0.5, 0.5), S({3, 3, 2, 2}, -0.5, 0.5)},
       [](const Scope& s, const Outs& x) -> Outs {
         return {ops::DepthwiseConv2dNative(s, x[0], x[1], {1, 1, 1, 1}, "SAME")};
       }},
      {"DepthwiseConv2dNative/valid_stride2",
       {S({1, 5, 5, 3}, -0.5, 0.5), S({2, 2, 3, 1}, -0.5, 0.5)},
       [](const Scope& s, const Outs& x) -> Outs {
         return {ops::DepthwiseConv2dNative(s, x[0], x[1], {1, 2, 2, 1}, "VALID")};
       }},
      {"DepthwiseConv2dNativeBackpropInput",
       {S({2, 2, 2, 1}, -0.5, 0.5), S({1, 2, 2, 2}, -0.5, 0.5)},
       [](const Scope& s, const Outs& x) -> Outs {
         return {ops::DepthwiseConv2dNativeBackpropInput(s, {1, 4, 4, 2}, x[0], x[1], {1, 2, 2, 1},
                                                         "SAME")};
       }},
      {"DepthwiseConv2dNativeBackpropFilter",
       {S({1, 4, 4, 2}, -0.5, 0.5), S({1, 2, 2, 2}, -0.5, 0.5)},
       [](const Scope& s, const Outs& x) -> Outs {
         return {ops::DepthwiseConv2dNativeBackpropFilter(s, x[0], {2, 2, 2, 1}, x[1], {1, 2, 2, 1},
                                                          "SAME")};
       }},
      Unary(
          "ResizeBilinear",
          [](const Scope& s, Output x) {
            return ops::ResizeBilinear(s, x, {3, 5});
          },
          S({1, 2, 3, 2})),
      Unary(
          "MaxPoolWithArgmax",
          [](const Scope& s, Output x) {
            return ops::MaxPoolWithArgmax(s, x, {1, 2, 2, 1}, {1, 1, 2, 1}, "VALID").output;
          },
          S({2, 3, 4, 2})),
      Unary(
          "MaxPoolWithArgmax/same with batch",
          [](const Scope& s, Output x) {
            return ops::MaxPoolWithArgmax(s, x, {1, 2, 3, 1}, {1, 2, 2, 1}, "SAME",
                                          ops::MaxPoolWithArgmax::IncludeBatchInIndex(true))
                .output;
          },
          S({2, 3, 4, 2})),
      // Fixed windows (deterministic, seeded): max over overlapping ones,
      // mean over pseudo-random ones.
      Unary(
          "FractionalMaxPool",
          [](const Scope& s, Output x) {
            return ops::FractionalMaxPool(
                       s, x, {1, 1.5f, 1.4f, 1},
                       ops::FractionalMaxPool::Overlapping(true).Deterministic(true).Seed(7).Seed2(
                           3))
                .output;
          },
          S({2, 5, 6, 2})),
      Unary(
          "FractionalAvgPool",
          [](const Scope& s, Output x) {
            return ops::FractionalAvgPool(
                       s, x, {1, 1.5f, 1.4f, 1},
                       ops::FractionalAvgPool::PseudoRandom(true).Deterministic(true).Seed(1).Seed2(
                           2))
                .output;
          },
          S({2, 5, 6, 2})),
      Unary(
          "ExtractImagePatches",
          [](const Scope& s, Output x) {
            return ops::ExtractImagePatches(s, x, {1, 2, 2, 1}, {1, 1, 2, 1}, {1, 2, 1, 1}, "SAME");
          },
          S({2, 5, 6, 2})),
      Unary(
          "ExtractImagePatches/valid",
          [](const Scope& s, Output x) {
            return ops::ExtractImagePatches(s, x, {1, 2, 3, 1}, {1, 2, 2, 1}, {1, 1, 1, 1},
                                            "VALID");
          },
          S({1, 5, 6, 2})),
      Unary(
          "ExtractVolumePatches",
          [](const Scope& s, Output x) {
            return ops::ExtractVolumePatches(s, x, {1, 2, 2, 2, 1}, {1, 1, 1, 2, 1}, "SAME");
          },
          S({1, 3, 3, 4, 2})),
      Unary(
          "ExtractVolumePatches/valid",
          [](const Scope& s, Output x) {
            return ops::ExtractVolumePatches(s, x, {1, 2, 1, 2, 1}, {1, 1, 2, 1, 1}, "VALID");
          },
          S({2, 3, 3, 3, 1})),
      Precise(Unary(
                  "RGBToHSV", [](const Scope& s, Output x) { return ops::RGBToHSV(s, x); },
                  S({2, 4, 3}, 0.05, 1)),
              1e-6, 1e-8),
      Unary(
          "CropAndResize",
          [](const Scope& s, Output x) {
            const Output boxes =
                ops::Const(s, {{0.1f, 0.2f, 0.8f, 0.9f}, {0.5f, -0.2f, 1.3f, 0.6f}});
            return ops::CropAndResize(s, x, boxes, {1, 0}, {3, 2});
          },
          S({2, 4, 5, 2})),
      Unary(
          "CropAndResize/nearest",
          [](const Scope& s, Output x) {
            const Output boxes = ops::Const(s, {{0.9f, 0.8f, 0.1f, 0.05f}});
            return ops::CropAndResize(s, x, boxes, {0}, {2, 3},
                                      ops::CropAndResize::Method("nearest"));
          },
          S({1, 4, 5, 2})),
      Unary(
          "ResizeBilinear/half_pixel_centers",
          [](const Scope& s, Output x) {
            return ops::ResizeBilinear(s, x, {5, 2}, ops::ResizeBilinear::HalfPixelCenters(true));
          },
          S({2, 3, 3, 1})),
      Unary(
          "ResizeBicubic",
          [](const Scope& s, Output x) {
            return ops::ResizeBicubic(s, x, {4, 5});
          },
          S({1, 3, 3, 2})),
      Unary(
          "ResizeBicubic/half_pixel_centers",
          [](const Scope& s, Output x) {
            return ops::ResizeBicubic(s, x, {2, 5}, ops::ResizeBicubic::HalfPixelCenters(true));
          },
          S({2, 3, 4, 1})),
      Unary(
          "ScaleAndTranslate",
          [](const Scope& s, Output x) {
            return ops::ScaleAndTranslate(s, x, {3, 4}, {0.6f, 0.75f}, {0.0f, -0.5f});
          },
          S({2, 5, 6, 2})),
      Unary(
          "ScaleAndTranslate/mitchellcubic_up",
          [](const Scope& s, Output x) {
            return ops::ScaleAndTranslate(
                s, x, {5, 7}, {1.5f, 2.0f}, {0.25f, 0.0f},
                ops::ScaleAndTranslate::KernelType("mitchellcubic").Antialias(false));
          },
          S({1, 3, 4, 1})),
      Unary(
          "ScaleAndTranslateGrad",
          [](const Scope& s, Output x) {
            return ops::ScaleAndTranslateGrad(s, x, ops::Fill(s, {1, 5, 4, 1}, 0.f), {0.6f, 0.75f},
                                              {0.0f, 0.0f});
          },
          S({1, 3, 3, 1})),
      Unary(
          "ResizeBicubicGrad",
          [](const Scope& s, Output x) {
            return ops::ResizeBicubicGrad(s, x, ops::Fill(s, {1, 2, 3, 1}, 0.f),
                                          ops::ResizeBicubicGrad::HalfPixelCenters(true));
          },
          S({1, 3, 4, 1})),
      Unary(
          "ResizeBilinearGrad",
          [](const Scope& s, Output x) {
            return ops::ResizeBilinearGrad(s, x, ops::Fill(s, {1, 2, 3, 2}, 0.f),
                                           ops::ResizeBilinearGrad::AlignCorners(true));
          },
          S({1, 3, 5, 2})),
      Unary(
          "ResizeNearestNeighbor",
          [](const Scope& s, Output x) {
            return ops::ResizeNearestNeighbor(s, x, {3, 5},
                                              ops::ResizeNearestNeighbor::AlignCorners(true));
          },
          S({1, 2, 3, 2})),
      Unary(
          "ResizeNearestNeighborGrad",
          [](const Scope& s, Output x) {
            return ops::ResizeNearestNeighborGrad(
                s, x, {2, 3}, ops::ResizeNearestNeighborGrad::HalfPixelCenters(true));
          },
          S({1, 3, 5, 2})),
      Unary(
          "SpaceToBatchND",
          [](const Scope& s, Output x) {
            return ops::SpaceToBatchND(s, x, {2, 2}, {{0, 0}, {2, 0}});
          },
          S({2, 2, 4, 1})),
      Unary(
          "BatchToSpaceND",
          [](const Scope& s, Output x) {
            return ops::BatchToSpaceND(s, x, {2, 2}, {{0, 0}, {2, 0}});
          },
          S({8, 1, 3, 1})),
      Unary(
          "SpaceToBatch",
          [](const Scope& s, Output x) {
            return ops::SpaceToBatch(s, x, {{0, 0}, {2, 0}}, 2);
          },
          S({1, 2, 2, 1})),
      Unary(
          "BatchToSpace",
          [](const Scope& s, Output x) {
            return ops::BatchToSpace(s, x, {{0, 0}, {1, 0}}, 2);
          },
          S({4, 1, 2, 1})),
      Unary(
          "GatherNd",
          [](const Scope& s, Output x) {
            return ops::GatherNd(s, x, {{0, 1}, {2, 0}, {0, 1}});
          },
          S({3, 2})),
      Unary(
          "ScatterNd",
          [](const Scope& s, Output x) {
            return ops::ScatterNd(s, {{1}, {0}, {1}}, x, {3, 2});
          },
          S({3, 2})),
      {"TensorScatterUpdate",
       {S({3, 2}), S({2, 2})},
       [](const Scope& s, const Outs& x) -> Outs {
         return {ops::TensorScatterUpdate(s, x[0], {{2}, {0}}, x[1])};
       }},
      // A duplicate index: both its updates add.
      {"TensorScatterAdd",
       {S({3, 2}), S({3, 2})},
       [](const Scope& s, const Outs& x) -> Outs {
         return {ops::TensorScatterAdd(s, x[0], {{2}, {0}, {2}}, x[1])};
       }},
      {"ScatterNdNonAliasingAdd",
       {S({4}), S({3})},
       [](const Scope& s, const Outs& x) -> Outs {
         return {ops::ScatterNdNonAliasingAdd(s, x[0], {{1}, {3}, {1}}, x[1])};
       }},
      {"TensorScatterSub",
       {S({3, 2}), S({2, 2})},
       [](const Scope& s, const Outs& x) -> Outs {
         return {ops::TensorScatterSub(s, x[0], {{1}, {0}}, x[1])};
       }},
      // Random values, so no ties: each output is one input's.
      {"TensorScatterMax",
       {S({3, 2}), S({3, 2})},
       [](const Scope& s, const Outs& x) -> Outs {
         return {ops::TensorScatterMax(s, x[0], {{2}, {0}, {2}}, x[1])};
       }},
      {"TensorScatterMin",
       {S({3, 2}), S({2, 2})},
       [](const Scope& s, const Outs& x) -> Outs {
         return {ops::TensorScatterMin(s, x[0], {{1}, {0}}, x[1])};
       }},
      Binary(
          "Einsum",
          [](const Scope& s, Output a, Output b) {
            return ops::Einsum(s, {a, b}, "ij,jk->ik");
          },
          S({2, 3}), S({3, 2})),
      Binary(
          "Einsum/attention",
          [](const Scope& s, Output a, Output b) {
            return ops::Einsum(s, {a, b}, "aecd,abcd->acbe");
          },
          S({2, 3, 2, 2}), S({2, 2, 2, 2})),
      // i is summed in a alone, j broadcasts over the ellipsis.
      Binary(
          "Einsum/summed_and_broadcast",
          [](const Scope& s, Output a, Output b) {
            return ops::Einsum(s, {a, b}, "...ij,...jk->...k");
          },
          S({2, 1, 2, 3}), S({3, 3, 2})),
      Unary(
          "Einsum/one_input",
          [](const Scope& s, Output x) { return ops::Einsum(s, {x}, "abc->ca"); }, S({2, 3, 2})),
      // Diagonals: read from an input (alone, summed away, against the other
      // input's diagonal) and written into the output.
      Unary(
          "Einsum/diagonal",
          [](const Scope& s, Output x) { return ops::Einsum(s, {x}, "bii->ib"); }, S({2, 3, 3})),
      Unary(
          "Einsum/trace", [](const Scope& s, Output x) { return ops::Einsum(s, {x}, "ii->"); },
          S({3, 3})),
      Binary(
          "Einsum/diagonal_against_matrix",
          [](const Scope& s, Output a, Output b) {
            return ops::Einsum(s, {a, b}, "ij,jj->ji");
          },
          S({2, 3}), S({3, 3})),
      Unary(
          "Einsum/inflate", [](const Scope& s, Output x) { return ops::Einsum(s, {x}, "ai->aii"); },
          S({2, 3})),
      Unary("L2Loss", [](const Scope& s, Output x) { return ops::L2Loss(s, x); }),
      // Two members (on one CPU): each outputs x0 + x1; the gradient is the
      // all-reduce of the members' gradients.
      GradCase{"NcclAllReduce",
               {S({2, 3}), S({2, 3})},
               [](const Scope& s, const std::vector<Output>& x) {
                 return std::vector<Output>{ops::NcclAllReduce(s, x[0], "sum", 2, "r"),
                                            ops::NcclAllReduce(s, x[1], "sum", 2, "r")};
               }},
      // In one process the sum over processes is the identity, and so is
      // its gradient (the multi-process sums: distribute/mpi_ops_test.cc).
      GradCase{"MpiAllReduce",
               {S({2, 3}), S({4})},
               [](const Scope& s, const std::vector<Output>& x) {
                 return ops::MpiAllReduce(s, {x[0], x[1]}).sum;
               }},
      // Likewise the gather of one process's rows (the multi-process
      // gradient: distribute/mpi_ops_test.cc).
      GradCase{"MpiAllGather",
               {S({3, 2}), S({2})},
               [](const Scope& s, const std::vector<Output>& x) {
                 return ops::MpiAllGather(s, {x[0], x[1]}).gathered;
               }},
      // Second order: the backprop ops' own gradients.
      Unary(
          "BiasAddGrad", [](const Scope& s, Output x) { return ops::BiasAddGrad(s, x); },
          S({2, 3})),
      Unary(
          "BiasAddGrad/NCHW",
          [](const Scope& s, Output x) {
            return ops::BiasAddGrad(s, x, ops::BiasAddGrad::DataFormat("NCHW"));
          },
          S({1, 2, 2, 2})),
      Binary(
          "Relu6Grad",
          [](const Scope& s, Output dy, Output x) {
            return ops::Relu6Grad(s, dy, ops::Mul(s, x, 4.0f));
          },
          S({2, 3}), InputSpec{TensorShape({2, 3}), -2, 2, true}),
      Binary(
          "SoftplusGrad",
          [](const Scope& s, Output dy, Output x) { return ops::SoftplusGrad(s, dy, x); },
          S({2, 3}), S({2, 3})),
      Binary(
          "SeluGrad",
          [](const Scope& s, Output dy, Output x) { return ops::SeluGrad(s, dy, ops::Selu(s, x)); },
          S({2, 3}), NonZero({2, 3})),
      Binary(
          "LeakyReluGrad",
          [](const Scope& s, Output dy, Output x) {
            return ops::LeakyReluGrad(s, dy, x, ops::LeakyReluGrad::Alpha(0.3f));
          },
          S({2, 3}), NonZero({2, 3})),
      Binary(
          "EluGrad",
          [](const Scope& s, Output dy, Output x) { return ops::EluGrad(s, dy, ops::Elu(s, x)); },
          S({2, 3}), NonZero({2, 3})),
      {"SparseSoftmaxCrossEntropyWithLogits/backprop",
       {S({2, 3})},
       [](const Scope& s, const Outs& x) -> Outs {
         return {ops::SparseSoftmaxCrossEntropyWithLogits(s, x[0], {2, 0}).backprop};
       }},
      {"MaxPoolGrad",
       {S({1, 3, 3, 1}), S({1, 2, 2, 1})},
       [](const Scope& s, const Outs& x) -> Outs {
         const std::vector<int64_t> k = {1, 2, 2, 1}, st = {1, 1, 1, 1};
         return {ops::MaxPoolGrad(s, x[0], ops::MaxPool(s, x[0], k, st, "VALID"), x[1], k, st,
                                  "VALID")};
       }},
      {"MaxPoolGradGrad",
       {S({1, 3, 3, 1}), S({1, 3, 3, 1})},
       [](const Scope& s, const Outs& x) -> Outs {
         const std::vector<int64_t> k = {1, 2, 2, 1}, st = {1, 1, 1, 1};
         return {ops::MaxPoolGradGrad(s, x[0], ops::MaxPool(s, x[0], k, st, "VALID"), x[1], k, st,
                                      "VALID")};
       }},
      Binary(
          "Dilation2D",
          [](const Scope& s, Output x, Output f) {
            return ops::Dilation2D(s, x, f, {1, 1, 1, 1}, {1, 2, 1, 1}, "SAME");
          },
          S({1, 4, 3, 2}), S({2, 2, 2})),
      Unary(
          "MaxPoolV2",
          [](const Scope& s, Output x) {
            return ops::MaxPoolV2(s, x, {1, 2, 2, 1}, {1, 1, 1, 1}, "VALID");
          },
          S({1, 3, 3, 1})),
      {"MaxPoolGradV2",
       {S({1, 3, 3, 1}), S({1, 2, 2, 1})},
       [](const Scope& s, const Outs& x) -> Outs {
         const Output k = ops::Const(s, {1, 2, 2, 1}), st = ops::Const(s, {1, 1, 1, 1});
         return {ops::MaxPoolGradV2(s, x[0], ops::MaxPoolV2(s, x[0], k, st, "VALID"), x[1], k, st,
                                    "VALID")};
       }},
      // Labels [[1, 1], [2, 0]] (the second batch entry 3 steps long); in
      // double, as float differences of a log-sum-exp chain are too coarse.
      Precise({"CTCLoss",
               {S({5, 2, 4})},
               [](const Scope& s, const Outs& x) -> Outs {
                 const Output indices = ops::Const(s, {{int64_t{0}, int64_t{0}},
                                                       {int64_t{0}, int64_t{1}},
                                                       {int64_t{1}, int64_t{0}},
                                                       {int64_t{1}, int64_t{1}}});
                 return {ops::CTCLoss(s, x[0], indices, ops::Const(s, {1, 1, 2, 0}),
                                      ops::Const(s, {5, 3}))
                             .loss};
               }},
              1e-6, 1e-7),
      {"FusedBatchNormGradV3",
       {S({2, 2, 1, 3}), S({2, 2, 1, 3}), S({3}, 0.2, 0.6)},
       [](const Scope& s, const Outs& x) -> Outs {
         auto fbn =
             ops::FusedBatchNormV3(s, x[1], x[2], ops::Const(s, {0.f, 0.f, 0.f}),
                                   ops::Const(s, {0.f, 0.f, 0.f}), ops::Const(s, {1.f, 1.f, 1.f}));
         auto g = ops::FusedBatchNormGradV3(s, x[0], x[1], x[2], fbn.reserve_space_1,
                                            fbn.reserve_space_2, fbn.reserve_space_3);
         return {g.x_backprop, g.scale_backprop, g.offset_backprop};
       }},
      {"FusedBatchNormGrad/NCHW",
       {S({2, 3, 2, 1}), S({2, 3, 2, 1}), S({3}, 0.2, 0.6)},
       [](const Scope& s, const Outs& x) -> Outs {
         const auto nchw = ops::FusedBatchNorm::DataFormat("NCHW");
         auto fbn = ops::FusedBatchNorm(s, x[1], x[2], ops::Const(s, {0.f, 0.f, 0.f}),
                                        ops::Const(s, {0.f, 0.f, 0.f}),
                                        ops::Const(s, {1.f, 1.f, 1.f}), nchw);
         auto g =
             ops::FusedBatchNormGrad(s, x[0], x[1], x[2], fbn.reserve_space_1, fbn.reserve_space_2,
                                     ops::FusedBatchNormGrad::DataFormat("NCHW"));
         return {g.x_backprop, g.scale_backprop, g.offset_backprop};
       }},
      {"FusedBatchNormGradV3/inference",
       {S({2, 2, 1, 3}), S({2, 2, 1, 3}), S({3}, 0.2, 0.6)},
       [](const Scope& s, const Outs& x) -> Outs {
         auto g = ops::FusedBatchNormGradV3(s, x[0], x[1], x[2], ops::Const(s, {0.1f, -0.2f, 0.3f}),
                                            ops::Const(s, {1.f, 0.5f, 2.f}),
                                            ops::Const(s, {0.f, 0.f, 0.f}),
                                            ops::FusedBatchNormGradV3::IsTraining(false));
         return {g.x_backprop, g.scale_backprop, g.offset_backprop};
       }},
  };
}

}  // namespace grad_cases
}  // namespace towerflow
