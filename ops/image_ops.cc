// Ops on batches of images: resizing (bilinear and nearest neighbour, with
// TensorFlow's align_corners and half_pixel_centers conventions) and their
// gradients, and the block rearrangements between space, depth and batch
// (DepthToSpace, SpaceToDepth, SpaceToBatchND, BatchToSpaceND); and the
// image codecs: JPEG and PNG to and from uint8 (or uint16) [H, W, C]
// tensors (core/jpeg.h, core/png.h).
#include <algorithm>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "graph/op_registry.h"
#include "ops/shape_fns.h"

namespace towerflow {
namespace {

// DepthToSpace (to_space) and SpaceToDepth on NHWC: height and width times
// or divided by block_size, depth divided or times block_size^2.
absl::Status BlockShape(InferenceContext* c, bool to_space) {
  int64_t block;
  TW_RETURN_IF_ERROR(c->GetAttr("block_size", &block));
  std::string format;
  TW_RETURN_IF_ERROR(c->GetAttr("data_format", &format));
  PartialTensorShape in;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 4, &in));
  if (format != "NHWC") {
    c->set_output(0, PartialTensorShape::UnknownDims(4));
    return absl::OkStatus();
  }
  if (block < 2 || block > (int64_t{1} << 20)) {
    return absl::InvalidArgumentError(absl::StrCat("block_size must be in [2, 2^20], got ", block));
  }
  const int64_t area = block * block;
  const auto scale = [&](int64_t d, bool up) -> absl::StatusOr<int64_t> {
    if (d < 0) return -1;
    if (up && d > INT64_MAX / area) {
      return absl::InvalidArgumentError(
          absl::StrCat("Image dimension ", d, " times block_size ", block, " overflows"));
    }
    if (up) return d * block;
    if (d % block != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Image dimension ", d, " must be divisible by block_size ", block));
    }
    return d / block;
  };
  TW_ASSIGN_OR_RETURN(int64_t h, scale(in.dim_size(1), to_space));
  TW_ASSIGN_OR_RETURN(int64_t w, scale(in.dim_size(2), to_space));
  int64_t depth = in.dim_size(3);
  if (depth >= 0) {
    if (to_space && depth % area != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Depth ", depth, " must be divisible by block_size * block_size = ", area));
    }
    if (!to_space && depth > INT64_MAX / area) {
      return absl::InvalidArgumentError(
          absl::StrCat("Depth ", depth, " times ", area, " overflows"));
    }
    depth = to_space ? depth / area : depth * area;
  }
  c->set_output(0, PartialTensorShape({in.dim_size(0), h, w, depth}));
  return absl::OkStatus();
}

// Resize ops: images [N, H, W, C] and size [2] (new height and width)
// give [N, size[0], size[1], C].
absl::Status ResizeShape(InferenceContext* c) {
  PartialTensorShape images, size;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 4, &images));
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &size));
  if (size.dim_size(0) >= 0 && size.dim_size(0) != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("size must have 2 elements (height, width), got ", size.DebugString()));
  }
  int64_t h = -1, w = -1;
  TW_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> hw, c->ConstantIntInput(1));
  if (hw.has_value()) {
    if (hw->size() != 2 || (*hw)[0] <= 0 || (*hw)[1] <= 0) {
      return absl::InvalidArgumentError("size must be two positive values (height, width)");
    }
    h = (*hw)[0];
    w = (*hw)[1];
  }
  c->set_output(0, PartialTensorShape({images.dim_size(0), h, w, images.dim_size(3)}));
  return absl::OkStatus();
}

// ResizeBilinearGrad: grads [N, h, w, C] back onto original_image's shape.
absl::Status ResizeBilinearGradShape(InferenceContext* c) {
  PartialTensorShape grads, original;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 4, &grads));
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 4, &original));
  c->set_output(0, original);
  return absl::OkStatus();
}

// SpaceToBatchND (to_batch) pads the M block dims after the batch dim and
// moves each block_shape block into the batch; BatchToSpaceND undoes it,
// cropping. block_shape [M] and paddings / crops [M, 2] as constants give
// the output's dims, otherwise they stay unknown.
// The first versions, SpaceToBatch and BatchToSpace, take an NHWC input,
// the attr block_size for both spatial dims and paddings / crops as input 1.
absl::Status SpaceBatchShape(InferenceContext* c, bool to_batch) {
  const char* amounts_name = to_batch ? "paddings" : "crops";
  const bool v1 = c->num_inputs() == 2;
  const int amounts_input = v1 ? 1 : 2;
  PartialTensorShape input, block_shape({2}), amounts;
  std::optional<std::vector<int64_t>> block;
  if (v1) {
    int64_t size = 0;
    TW_RETURN_IF_ERROR(c->GetAttr("block_size", &size));
    block = std::vector<int64_t>{size, size};
    TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 4, &input));
  } else {
    TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &block_shape));
    TW_ASSIGN_OR_RETURN(block, c->ConstantIntInput(1));
  }
  TW_RETURN_IF_ERROR(c->WithRank(c->input(amounts_input), 2, &amounts));
  if (amounts.dim_size(1) >= 0 && amounts.dim_size(1) != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat(amounts_name, " must be [M, 2], got ", amounts.DebugString()));
  }
  int64_t m = block_shape.dim_size(0);
  TW_RETURN_IF_ERROR(c->MergeDim(m, amounts.dim_size(0), &m));
  TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(0), m < 0 ? 1 : static_cast<int>(m) + 1, &input));
  if (input.unknown_rank()) return absl::OkStatus();
  std::vector<int64_t> dims(input.dim_sizes().begin(), input.dim_sizes().end());
  TW_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> amount,
                      c->ConstantIntInput(amounts_input));
  if (!block.has_value() || !amount.has_value()) {
    // The batch and block dims change; with M unknown, every dim may.
    const int64_t changed = m < 0 ? input.dims() : m + 1;
    for (int64_t i = 0; i < changed; ++i) dims[i] = -1;
    c->set_output(0, PartialTensorShape(dims));
    return absl::OkStatus();
  }
  int64_t product = 1;
  for (size_t i = 0; i < block->size(); ++i) {
    const int64_t b = (*block)[i], before = (*amount)[2 * i], after = (*amount)[2 * i + 1];
    if (b < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("block_shape[", i, "] must be positive, got ", b));
    }
    if (before < 0 || after < 0) {
      return absl::InvalidArgumentError(absl::StrCat(amounts_name, " must be non-negative, got ",
                                                     before, " and ", after,
                                                     " for block dimension ", i));
    }
    if (product > INT64_MAX / b) return absl::InvalidArgumentError("block_shape overflows");
    product *= b;
    int64_t& d = dims[i + 1];
    if (d < 0) continue;
    if (to_batch) {
      if (d > INT64_MAX - before - after || (d + before + after) % b != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("padded input dimension ", i + 1, " (", d, " + ", before, " + ", after,
                         ") is not divisible by block_shape[", i, "] = ", b));
      }
      d = (d + before + after) / b;
    } else {
      if (d > INT64_MAX / b || d * b < before + after) {
        return absl::InvalidArgumentError(absl::StrCat("crops ", before, " + ", after,
                                                       " exceed dimension ", i + 1, " (", d,
                                                       ") times block_shape[", i, "] = ", b));
      }
      d = d * b - before - after;
    }
  }
  if (dims[0] >= 0) {
    if (to_batch) {
      if (dims[0] > INT64_MAX / product) return absl::InvalidArgumentError("batch overflows");
      dims[0] *= product;
    } else {
      if (dims[0] % product != 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "batch ", dims[0], " is not divisible by the product of block_shape, ", product));
      }
      dims[0] /= product;
    }
  }
  c->set_output(0, PartialTensorShape(dims));
  return absl::OkStatus();
}

// NonMaxSuppression V1-V5: boxes [n, 4], scores [n], scalar arguments;
// the selected indices (V4 and V5 padded to max_output_size when asked).
absl::Status NonMaxSuppressionShape(InferenceContext* c) {
  PartialTensorShape boxes, scores, scalar;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 2, &boxes));
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &scores));
  int64_t n = 0, four = 0;
  TW_RETURN_IF_ERROR(c->MergeDim(boxes.dim_size(0), scores.dim_size(0), &n));
  TW_RETURN_IF_ERROR(c->MergeDim(boxes.dim_size(1), 4, &four));
  for (int i = 2; i < c->num_inputs(); ++i) {
    TW_RETURN_IF_ERROR(c->WithRank(c->input(i), 0, &scalar));
  }
  bool pad = false;
  if (c->node_def().attr().count("pad_to_max_output_size") > 0) {
    TW_RETURN_IF_ERROR(c->GetAttr("pad_to_max_output_size", &pad));
  }
  int64_t selected = -1;
  if (pad) {
    TW_ASSIGN_OR_RETURN(std::optional<int64_t> size, c->ConstantScalarInput(2));
    if (size.has_value() && *size >= 0) selected = *size;
  }
  // V4: (indices, valid_outputs); V5: (indices, scores, valid_outputs).
  const int n_out = c->num_outputs();
  c->set_output(0, PartialTensorShape({selected}));
  if (n_out == 3) c->set_output(1, PartialTensorShape({selected}));
  if (n_out > 1) c->set_output(n_out - 1, PartialTensorShape::Scalar());
  return absl::OkStatus();
}

// DrawBoundingBoxes(V2): the images [b, h, w, d], outlines drawn.
absl::Status DrawBoundingBoxesShape(InferenceContext* c) {
  PartialTensorShape images;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 4, &images));
  c->set_output(0, images);
  return absl::OkStatus();
}

// CropAndResize: boxes [n, 4] and box_ind [n] crop [n, h, w, depth].
absl::Status CropAndResizeShape(InferenceContext* c) {
  PartialTensorShape image, boxes, box_ind, size;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 4, &image));
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 2, &boxes));
  TW_RETURN_IF_ERROR(c->WithRank(c->input(2), 1, &box_ind));
  TW_RETURN_IF_ERROR(c->WithRank(c->input(3), 1, &size));
  int64_t n = 0, four = 0, two = 0;
  TW_RETURN_IF_ERROR(c->MergeDim(boxes.dim_size(0), box_ind.dim_size(0), &n));
  TW_RETURN_IF_ERROR(c->MergeDim(boxes.dim_size(1), 4, &four));
  TW_RETURN_IF_ERROR(c->MergeDim(size.dim_size(0), 2, &two));
  TW_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> crop, c->ConstantIntInput(3));
  const int64_t h = crop.has_value() ? (*crop)[0] : -1, w = crop.has_value() ? (*crop)[1] : -1;
  c->set_output(0, PartialTensorShape({n, h, w, image.dim_size(3)}));
  return absl::OkStatus();
}

// ExtractImagePatches: [b, rows, cols, k_r * k_c * depth], the window of
// each list entry given as [1, r, c, 1] (rates dilate it);
// ExtractVolumePatches the same over [b, planes, rows, cols, depth], with
// no rates.
absl::Status ExtractPatchesShape(InferenceContext* c, int spatial) {
  const int rank = spatial + 2;
  PartialTensorShape input;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), rank, &input));
  std::vector<int64_t> ksizes, strides, rates(rank, 1);
  TW_RETURN_IF_ERROR(c->GetAttr("ksizes", &ksizes));
  TW_RETURN_IF_ERROR(c->GetAttr("strides", &strides));
  if (spatial == 2) TW_RETURN_IF_ERROR(c->GetAttr("rates", &rates));
  std::string padding;
  TW_RETURN_IF_ERROR(c->GetAttr("padding", &padding));
  for (const auto& [name, v] :
       {std::pair{"ksizes", &ksizes}, {"strides", &strides}, {"rates", &rates}}) {
    if (static_cast<int>(v->size()) != rank) {
      return absl::InvalidArgumentError(absl::StrCat(name, " must have ", rank, " entries"));
    }
    if (v->front() != 1 || v->back() != 1) {
      return absl::UnimplementedError(absl::StrCat("Only support ", name, " across space."));
    }
    for (int i = 1; i <= spatial; ++i) {
      if ((*v)[i] < 1) return absl::OutOfRangeError(absl::StrCat(name, " is out of range."));
    }
  }
  std::vector<int64_t> dims = {input.dim_size(0)};
  int64_t taps = 1;
  for (int i = 1; i <= spatial; ++i) {
    const int64_t in = input.dim_size(i);
    const int64_t window = (ksizes[i] - 1) * rates[i] + 1, stride = strides[i];
    dims.push_back(in < 0              ? -1
                   : padding == "SAME" ? (in + stride - 1) / stride
                                       : std::max<int64_t>(0, (in - window + stride) / stride));
    taps *= ksizes[i];
  }
  const int64_t depth = input.dim_size(rank - 1);
  dims.push_back(depth < 0 ? -1 : taps * depth);
  c->set_output(0, PartialTensorShape(dims));
  return absl::OkStatus();
}

// --------------------------------------------------------------- schemas

TW_REGISTER_OP("DepthToSpace")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("block_size: int >= 2")
    .Attr("data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'")
    .Doc("Moves depth into block_size x block_size spatial blocks.")
    .SetShapeFn([](InferenceContext* c) { return BlockShape(c, true); });

TW_REGISTER_OP("SpaceToDepth")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("block_size: int >= 2")
    .Attr("data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'")
    .Doc("Moves block_size x block_size spatial blocks into depth.")
    .SetShapeFn([](InferenceContext* c) { return BlockShape(c, false); });

TW_REGISTER_OP("ResizeBilinear")
    .Input("images: T")
    .Input("size: int32")
    .Output("resized_images: float")
    .Attr("T: {int8, uint8, int16, uint16, int32, int64, bfloat16, half, float, double}")
    .Attr("align_corners: bool = false")
    .Attr("half_pixel_centers: bool = false")
    .Doc("Resizes images [N, H, W, C] to size by bilinear interpolation.")
    .SetShapeFn(ResizeShape);

TW_REGISTER_OP("ResizeBilinearGrad")
    .Input("grads: float")
    .Input("original_image: T")
    .Output("output: T")
    .Attr("T: {float, bfloat16, half, double}")
    .Attr("align_corners: bool = false")
    .Attr("half_pixel_centers: bool = false")
    .Doc("Gradient of ResizeBilinear with respect to its images.")
    .SetShapeFn(ResizeBilinearGradShape);

TW_REGISTER_OP("ResizeBicubic")
    .Input("images: T")
    .Input("size: int32")
    .Output("resized_images: float")
    .Attr("T: {int8, uint8, int16, uint16, int32, int64, half, float, double, bfloat16}")
    .Attr("align_corners: bool = false")
    .Attr("half_pixel_centers: bool = false")
    .Doc("Resizes images [N, H, W, C] to size by bicubic interpolation (Keys' kernel).")
    .SetShapeFn(ResizeShape);

TW_REGISTER_OP("ResizeBicubicGrad")
    .Input("grads: float")
    .Input("original_image: T")
    .Output("output: T")
    .Attr("T: {float, double}")
    .Attr("align_corners: bool = false")
    .Attr("half_pixel_centers: bool = false")
    .Doc("Gradient of ResizeBicubic with respect to its images.")
    .SetShapeFn(ResizeBilinearGradShape);

TW_REGISTER_OP("ResizeArea")
    .Input("images: T")
    .Input("size: int32")
    .Output("resized_images: float")
    .Attr("T: {int8, uint8, int16, uint16, int32, int64, half, float, double, bfloat16}")
    .Attr("align_corners: bool = false")
    .Doc("Resizes images [N, H, W, C] to size, each pixel the mean of the area it covers.")
    .SetShapeFn(ResizeShape);

TW_REGISTER_OP("ResizeNearestNeighbor")
    .Input("images: T")
    .Input("size: int32")
    .Output("resized_images: T")
    .Attr("T: {int8, uint8, int16, uint16, int32, int64, half, float, double, bfloat16}")
    .Attr("align_corners: bool = false")
    .Attr("half_pixel_centers: bool = false")
    .Doc("Resizes images [N, H, W, C] to size, each pixel from its nearest source pixel.")
    .SetShapeFn(ResizeShape);

TW_REGISTER_OP("ResizeNearestNeighborGrad")
    .Input("grads: T")
    .Input("size: int32")
    .Output("output: T")
    .Attr("T: {uint8, int8, int32, half, float, double, bfloat16}")
    .Attr("align_corners: bool = false")
    .Attr("half_pixel_centers: bool = false")
    .Doc("Gradient of ResizeNearestNeighbor: each gradient added to its source pixel.")
    .SetShapeFn(ResizeShape);

TW_REGISTER_OP("SpaceToBatchND")
    .Input("input: T")
    .Input("block_shape: Tblock_shape")
    .Input("paddings: Tpaddings")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tblock_shape: {int32, int64} = DT_INT32")
    .Attr("Tpaddings: {int32, int64} = DT_INT32")
    .Doc("Pads the block dimensions and moves block_shape blocks of them into the batch.")
    .SetShapeFn([](InferenceContext* c) { return SpaceBatchShape(c, true); });

TW_REGISTER_OP("SpaceToBatch")
    .Input("input: T")
    .Input("paddings: Tpaddings")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tpaddings: {int32, int64} = DT_INT32")
    .Attr("block_size: int >= 2")
    .Doc("SpaceToBatchND over the height and width of an NHWC input, block_size each.")
    .SetShapeFn([](InferenceContext* c) { return SpaceBatchShape(c, true); });

TW_REGISTER_OP("BatchToSpace")
    .Input("input: T")
    .Input("crops: Tidx")
    .Output("output: T")
    .Attr("T: type")
    .Attr("block_size: int >= 2")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .Doc("BatchToSpaceND over the height and width of an NHWC input, block_size each.")
    .SetShapeFn([](InferenceContext* c) { return SpaceBatchShape(c, false); });

TW_REGISTER_OP("BatchToSpaceND")
    .Input("input: T")
    .Input("block_shape: Tblock_shape")
    .Input("crops: Tcrops")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tblock_shape: {int32, int64} = DT_INT32")
    .Attr("Tcrops: {int32, int64} = DT_INT32")
    .Doc("Moves batch blocks back into the block dimensions and crops them.")
    .SetShapeFn([](InferenceContext* c) { return SpaceBatchShape(c, false); });

// [height, width, channels] with the channels the attr names (0: the
// file's, unknown), after checking that `contents` is a scalar.
absl::Status DecodedImageShape(InferenceContext* c) {
  PartialTensorShape unused;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 0, &unused));
  int64_t channels;
  TW_RETURN_IF_ERROR(c->GetAttr("channels", &channels));
  if (channels < 0) {
    return absl::InvalidArgumentError(absl::StrCat("channels must be >= 0, got ", channels));
  }
  c->set_output(0, PartialTensorShape({-1, -1, channels == 0 ? -1 : channels}));
  return absl::OkStatus();
}

// An image [height, width, channels] in, a scalar string out.
absl::Status EncodedImageShape(InferenceContext* c) {
  PartialTensorShape unused;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 3, &unused));
  c->set_output(0, PartialTensorShape({}));
  return absl::OkStatus();
}

TW_REGISTER_OP("DecodeJpeg")
    .Input("contents: string")
    .Output("image: uint8")
    .Attr("channels: int = 0")
    .Attr("ratio: int = 1")
    .Attr("fancy_upscaling: bool = true")
    .Attr("try_recover_truncated: bool = false")
    .Attr("acceptable_fraction: float = 1.0")
    .Attr("dct_method: string = ''")
    .Doc("Decodes a JPEG (or PNG) image to uint8 [height, width, channels].")
    .SetShapeFn(DecodedImageShape);

TW_REGISTER_OP("DecodeAndCropJpeg")
    .Input("contents: string")
    .Input("crop_window: int32")
    .Output("image: uint8")
    .Attr("channels: int = 0")
    .Attr("ratio: int = 1")
    .Attr("fancy_upscaling: bool = true")
    .Attr("try_recover_truncated: bool = false")
    .Attr("acceptable_fraction: float = 1.0")
    .Attr("dct_method: string = ''")
    .Doc("Decodes the window [y, x, height, width] of a JPEG image.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape window;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &window));
      TW_RETURN_IF_ERROR(DecodedImageShape(c));
      TW_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> crop, c->ConstantIntInput(1));
      if (crop.has_value() && crop->size() == 4) {
        PartialTensorShape out = c->output(0);
        c->set_output(0, PartialTensorShape({(*crop)[2], (*crop)[3], out.dim_size(2)}));
      }
      return absl::OkStatus();
    });

TW_REGISTER_OP("ExtractJpegShape")
    .Input("contents: string")
    .Output("image_shape: output_type")
    .Attr("output_type: {int32, int64} = DT_INT32")
    .Doc("The [height, width, channels] of a JPEG image, from its header.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape unused;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 0, &unused));
      c->set_output(0, PartialTensorShape({3}));
      return absl::OkStatus();
    });

TW_REGISTER_OP("EncodeJpeg")
    .Input("image: uint8")
    .Output("contents: string")
    .Attr("format: {'', 'grayscale', 'rgb'} = ''")
    .Attr("quality: int = 95")
    .Attr("progressive: bool = false")
    .Attr("optimize_size: bool = false")
    .Attr("chroma_downsampling: bool = true")
    .Attr("density_unit: {'in', 'cm'} = 'in'")
    .Attr("x_density: int = 300")
    .Attr("y_density: int = 300")
    .Attr("xmp_metadata: string = ''")
    .Doc("Encodes a uint8 [height, width, 1 or 3] image as a JPEG.")
    .SetShapeFn(EncodedImageShape);

// tf.image.adjust_jpeg_quality / random_jpeg_quality: the quality as an
// input.
TW_REGISTER_OP("EncodeJpegVariableQuality")
    .Input("images: uint8")
    .Input("quality: int32")
    .Output("contents: string")
    .Doc("Encodes a uint8 [height, width, 1 or 3] image as a JPEG of the given quality.")
    .SetShapeFn(EncodedImageShape);

TW_REGISTER_OP("DecodeBmp")
    .Input("contents: string")
    .Output("image: uint8")
    .Attr("channels: int = 0")
    .Doc("Decodes an uncompressed 8-, 24- or 32-bit BMP image to [height, width, channels].")
    .SetShapeFn(DecodedImageShape);

TW_REGISTER_OP("DecodePng")
    .Input("contents: string")
    .Output("image: dtype")
    .Attr("channels: int = 0")
    .Attr("dtype: {uint8, uint16} = DT_UINT8")
    .Doc("Decodes a PNG (or JPEG) image to [height, width, channels].")
    .SetShapeFn(DecodedImageShape);

// EncodePng: one PNG per image of [..., height, width, channels] (TF 2's
// batches).
absl::Status EncodedImagesShape(InferenceContext* c) {
  PartialTensorShape images;
  TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(0), 3, &images));
  if (images.unknown_rank()) {
    c->set_output(0, PartialTensorShape());
    return absl::OkStatus();
  }
  c->set_output(0, PartialTensorShape(std::vector<int64_t>(images.dim_sizes().begin(),
                                                           images.dim_sizes().end() - 3)));
  return absl::OkStatus();
}

TW_REGISTER_OP("EncodePng")
    .Attr("compression: int = -1")
    .Attr("T: {uint8, uint16} = DT_UINT8")
    .Input("image: T")
    .Output("contents: string")
    .Doc("Encodes each [height, width, 1-4] image of [..., height, width, channels] as a PNG.")
    .SetShapeFn(EncodedImagesShape);

TW_REGISTER_OP("DecodeImage")
    .Input("contents: string")
    .Output("image: dtype")
    .Attr("channels: int = 0")
    .Attr("dtype: {uint8, uint16, float} = DT_UINT8")
    .Attr("expand_animations: bool = true")
    .Doc("Decodes a JPEG or PNG image; float32 is scaled to [0, 1].")
    .SetShapeFn([](InferenceContext* c) {
      bool expand;
      TW_RETURN_IF_ERROR(c->GetAttr("expand_animations", &expand));
      TW_RETURN_IF_ERROR(DecodedImageShape(c));
      // A GIF's frames would make a 4-D tensor, so TF leaves the rank open.
      if (expand) c->set_output(0, PartialTensorShape());
      return absl::OkStatus();
    });

// The crop of SampleDistortedBoundingBox(V2): begin and size [3] of the
// image_size's type, and the crop as a box [1, 1, 4].
absl::Status SampleBoxShape(InferenceContext* c) {
  PartialTensorShape size, boxes;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 1, &size));
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 3, &boxes));
  if (size.dim_size(0) >= 0 && size.dim_size(0) != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("image_size must contain 3 elements, got ", size.DebugString()));
  }
  if (boxes.dim_size(2) >= 0 && boxes.dim_size(2) != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("bounding boxes must have shape [*, *, 4], got ", boxes.DebugString()));
  }
  if (c->num_inputs() == 3) {
    PartialTensorShape covered;
    TW_RETURN_IF_ERROR(c->WithRank(c->input(2), 0, &covered));
  }
  c->set_output(0, PartialTensorShape({3}));
  c->set_output(1, PartialTensorShape({3}));
  c->set_output(2, PartialTensorShape({1, 1, 4}));
  return absl::OkStatus();
}

TW_REGISTER_OP("SampleDistortedBoundingBoxV2")
    .Input("image_size: T")
    .Input("bounding_boxes: float")
    .Input("min_object_covered: float")
    .Output("begin: T")
    .Output("size: T")
    .Output("bboxes: float")
    .Attr("T: {uint8, int8, int16, int32, int64}")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr("aspect_ratio_range: list(float) = [0.75, 1.33]")
    .Attr("area_range: list(float) = [0.05, 1.0]")
    .Attr("max_attempts: int = 100")
    .Attr("use_image_if_no_bounding_boxes: bool = false")
    .SetIsStateful()
    .Doc("A random crop of an image covering enough of one of its boxes (TF's draws).")
    .SetShapeFn(SampleBoxShape);

TW_REGISTER_OP("SampleDistortedBoundingBox")
    .Input("image_size: T")
    .Input("bounding_boxes: float")
    .Output("begin: T")
    .Output("size: T")
    .Output("bboxes: float")
    .Attr("T: {uint8, int8, int16, int32, int64}")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr("min_object_covered: float = 0.1")
    .Attr("aspect_ratio_range: list(float) = [0.75, 1.33]")
    .Attr("area_range: list(float) = [0.05, 1.0]")
    .Attr("max_attempts: int = 100")
    .Attr("use_image_if_no_bounding_boxes: bool = false")
    .SetIsStateful()
    .Doc("SampleDistortedBoundingBoxV2 with min_object_covered an attr.")
    .SetShapeFn(SampleBoxShape);

TW_REGISTER_OP("StatelessSampleDistortedBoundingBox")
    .Input("image_size: T")
    .Input("bounding_boxes: float")
    .Input("min_object_covered: float")
    .Input("seed: Tseed")
    .Output("begin: T")
    .Output("size: T")
    .Output("bboxes: float")
    .Attr("T: {uint8, int8, int16, int32, int64}")
    .Attr("Tseed: {int32, int64}")
    .Attr("aspect_ratio_range: list(float) = [0.75, 1.33]")
    .Attr("area_range: list(float) = [0.05, 1.0]")
    .Attr("max_attempts: int = 100")
    .Attr("use_image_if_no_bounding_boxes: bool = false")
    .Doc(
        "SampleDistortedBoundingBoxV2 drawing from the stateless stream of seed [2] (TF's "
        "draws): the same seed, the same crop.")
    .SetShapeFn(SampleBoxShape);

// tf.image.extract_glimpse: [batch, height, width, depth] windows at each
// image's (y, x) offset (V2's placement, or V1's; kernels/cpu/glimpse_ops.cc).
absl::Status GlimpseShape(InferenceContext* c) {
  PartialTensorShape input, size, offsets;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 4, &input));
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &size));
  TW_RETURN_IF_ERROR(c->WithRank(c->input(2), 2, &offsets));
  int64_t h = -1, w = -1;
  TW_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> hw, c->ConstantIntInput(1));
  if (hw.has_value() && hw->size() == 2) {
    h = (*hw)[0];
    w = (*hw)[1];
  }
  c->set_output(0, PartialTensorShape({input.dim_size(0), h, w, input.dim_size(3)}));
  return absl::OkStatus();
}

// V1 and V2 differ only in where the kernel places the window.
[[maybe_unused]] const bool kGlimpses = [] {
  for (const auto& [name, doc] :
       {std::pair{"ExtractGlimpse",
                  "Windows of the images at the offsets (TF 1's placement), "
                  "noise where they leave them."},
        std::pair{"ExtractGlimpseV2",
                  "Windows of the images at the offsets (TF 2's placement), "
                  "noise where they leave them."}}) {
    OpDefBuilder b(name, __FILE__);
    b.Input("input: float")
        .Input("size: int32")
        .Input("offsets: float")
        .Output("glimpse: float")
        .Attr("centered: bool = true")
        .Attr("normalized: bool = true")
        .Attr("uniform_noise: bool = true")
        .Attr("noise: string = 'uniform'")
        .Doc(doc)
        .SetShapeFn(GlimpseShape);
    RegisterOp(b);
  }
  return true;
}();

TW_REGISTER_OP("ExtractImagePatches")
    .Input("images: T")
    .Output("patches: T")
    .Attr("ksizes: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("rates: list(int) >= 4")
    .Attr(
        "T: {bfloat16, half, float, double, int8, int16, int32, int64, uint8, uint16, uint32, "
        "uint64, complex64, complex128, bool}")
    .Attr("padding: {'SAME', 'VALID'}")
    .Doc("Each window of images [b, r, c, d] flattened into the depth of one output pixel.")
    .SetShapeFn([](InferenceContext* c) { return ExtractPatchesShape(c, 2); });

TW_REGISTER_OP("ExtractVolumePatches")
    .Input("input: T")
    .Output("patches: T")
    .Attr("ksizes: list(int) >= 5")
    .Attr("strides: list(int) >= 5")
    .Attr(
        "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, "
        "uint64}")
    .Attr("padding: {'SAME', 'VALID'}")
    .Doc("Each window of input [b, p, r, c, d] flattened into the depth of one output voxel.")
    .SetShapeFn([](InferenceContext* c) { return ExtractPatchesShape(c, 3); });

TW_REGISTER_OP("DrawBoundingBoxes")
    .Input("images: T")
    .Input("boxes: float")
    .Output("output: T")
    .Attr("T: {float, half} = DT_FLOAT")
    .Doc("images [b, h, w, 1|3|4] with the outlines of boxes [b, n, 4] drawn in TF's colours.")
    .SetShapeFn(DrawBoundingBoxesShape);

TW_REGISTER_OP("DrawBoundingBoxesV2")
    .Input("images: T")
    .Input("boxes: float")
    .Input("colors: float")
    .Output("output: T")
    .Attr("T: {float, half} = DT_FLOAT")
    .Doc("DrawBoundingBoxes in the given colours [k, >= depth] (TF's when empty).")
    .SetShapeFn(DrawBoundingBoxesShape);

TW_REGISTER_OP("CropAndResize")
    .Input("image: T")
    .Input("boxes: float")
    .Input("box_ind: int32")
    .Input("crop_size: int32")
    .Output("crops: float")
    .Attr("T: {uint8, uint16, int8, int16, int32, int64, half, float, double}")
    .Attr("method: {'bilinear', 'nearest'} = 'bilinear'")
    .Attr("extrapolation_value: float = 0")
    .Doc("Boxes [y1, x1, y2, x2] (normalised) of image[box_ind] resampled to crop_size.")
    .SetShapeFn(CropAndResizeShape);

TW_REGISTER_OP("CropAndResizeGradImage")
    .Input("grads: float")
    .Input("boxes: float")
    .Input("box_ind: int32")
    .Input("image_size: int32")
    .Output("output: T")
    .Attr("T: {float, half, double}")
    .Attr("method: {'bilinear', 'nearest'} = 'bilinear'")
    .Doc("CropAndResize's gradient with respect to the image (of shape image_size).")
    .SetShapeFn([](InferenceContext* c) { return shape_fns::ShapeFromShapeTensorInput(c, 3); });

TW_REGISTER_OP("CropAndResizeGradBoxes")
    .Input("grads: float")
    .Input("image: T")
    .Input("boxes: float")
    .Input("box_ind: int32")
    .Output("output: float")
    .Attr("T: {uint8, uint16, int8, int16, int32, int64, half, float, double}")
    .Attr("method: {'bilinear'} = 'bilinear'")
    .Doc("CropAndResize's gradient with respect to the boxes.")
    .SetShapeFn([](InferenceContext* c) {
      c->set_output(0, c->input(2));
      return absl::OkStatus();
    });

// ImageProjectiveTransformV2 / V3: [N, output_shape, C] from images by
// each image's projective transform (kernels/cpu/projective_transform_ops.cc).
absl::Status ProjectiveTransformShape(InferenceContext* c) {
  PartialTensorShape images, transforms;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 4, &images));
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 2, &transforms));
  TW_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> size, c->ConstantIntInput(2));
  int64_t h = -1, w = -1;
  if (size.has_value()) {
    if (size->size() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("output_shape must have two elements, got ", size->size()));
    }
    h = (*size)[0];
    w = (*size)[1];
  }
  const int64_t n = images.unknown_rank() ? -1 : images.dim_size(0);
  const int64_t ch = images.unknown_rank() ? -1 : images.dim_size(3);
  c->set_output(0, PartialTensorShape({n, h, w, ch}));
  return absl::OkStatus();
}

TW_REGISTER_OP("ImageProjectiveTransformV2")
    .Input("images: dtype")
    .Input("transforms: float")
    .Input("output_shape: int32")
    .Output("transformed_images: dtype")
    .Attr("dtype: {uint8, int32, int64, half, bfloat16, float, double}")
    .Attr("interpolation: string")
    .Attr("fill_mode: string = 'CONSTANT'")
    .Doc(
        "Each image warped by its projective transform [a0 a1 a2 b0 b1 b2 c0 c1] (the "
        "output point maps to an input point); outside the image, zeros (CONSTANT) or the "
        "fill_mode's reflection, wrap or edge.")
    .SetShapeFn(ProjectiveTransformShape);

TW_REGISTER_OP("ImageProjectiveTransformV3")
    .Input("images: dtype")
    .Input("transforms: float")
    .Input("output_shape: int32")
    .Input("fill_value: float")
    .Output("transformed_images: dtype")
    .Attr("dtype: {uint8, int32, int64, half, bfloat16, float, double}")
    .Attr("interpolation: string")
    .Attr("fill_mode: string = 'CONSTANT'")
    .Doc("ImageProjectiveTransformV2 with CONSTANT's fill value given.")
    .SetShapeFn(ProjectiveTransformShape);

TW_REGISTER_OP("NonMaxSuppression")
    .Input("boxes: float")
    .Input("scores: float")
    .Input("max_output_size: int32")
    .Output("selected_indices: int32")
    .Attr("iou_threshold: float = 0.5")
    .Doc("Greedy non-maximum suppression: the boxes kept, highest score first.")
    .SetShapeFn(NonMaxSuppressionShape);

TW_REGISTER_OP("NonMaxSuppressionV2")
    .Input("boxes: T")
    .Input("scores: T")
    .Input("max_output_size: int32")
    .Input("iou_threshold: T_threshold")
    .Output("selected_indices: int32")
    .Attr("T: {half, float} = DT_FLOAT")
    .Attr("T_threshold: {half, float} = DT_FLOAT")
    .Doc("NonMaxSuppression with the IoU threshold as a tensor.")
    .SetShapeFn(NonMaxSuppressionShape);

TW_REGISTER_OP("NonMaxSuppressionV3")
    .Input("boxes: T")
    .Input("scores: T")
    .Input("max_output_size: int32")
    .Input("iou_threshold: T_threshold")
    .Input("score_threshold: T_threshold")
    .Output("selected_indices: int32")
    .Attr("T: {half, float} = DT_FLOAT")
    .Attr("T_threshold: {half, float} = DT_FLOAT")
    .Doc("NonMaxSuppressionV2 over the boxes scoring above score_threshold.")
    .SetShapeFn(NonMaxSuppressionShape);

TW_REGISTER_OP("NonMaxSuppressionWithOverlaps")
    .Input("overlaps: float")
    .Input("scores: float")
    .Input("max_output_size: int32")
    .Input("overlap_threshold: float")
    .Input("score_threshold: float")
    .Output("selected_indices: int32")
    .Doc(
        "Greedy selection as NonMaxSuppressionV3, the candidates' similarities given as "
        "overlaps [n, n] instead of boxes (tf.image.non_max_suppression_overlaps).")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape overlaps, scores, scalar;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 2, &overlaps));
      TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &scores));
      for (int i = 2; i < c->num_inputs(); ++i) {
        TW_RETURN_IF_ERROR(c->WithRank(c->input(i), 0, &scalar));
      }
      c->set_output(0, PartialTensorShape({-1}));
      return absl::OkStatus();
    });

TW_REGISTER_OP("NonMaxSuppressionV4")
    .Input("boxes: T")
    .Input("scores: T")
    .Input("max_output_size: int32")
    .Input("iou_threshold: T_threshold")
    .Input("score_threshold: T_threshold")
    .Output("selected_indices: int32")
    .Output("valid_outputs: int32")
    .Attr("T: {half, float} = DT_FLOAT")
    .Attr("T_threshold: {half, float} = DT_FLOAT")
    .Attr("pad_to_max_output_size: bool = false")
    .Doc("NonMaxSuppressionV3, optionally padded with 0 to max_output_size, and the count kept.")
    .SetShapeFn(NonMaxSuppressionShape);

TW_REGISTER_OP("NonMaxSuppressionV5")
    .Input("boxes: T")
    .Input("scores: T")
    .Input("max_output_size: int32")
    .Input("iou_threshold: T")
    .Input("score_threshold: T")
    .Input("soft_nms_sigma: T")
    .Output("selected_indices: int32")
    .Output("selected_scores: T")
    .Output("valid_outputs: int32")
    .Attr("T: {half, float} = DT_FLOAT")
    .Attr("pad_to_max_output_size: bool = false")
    .Doc("NonMaxSuppressionV4 with Soft-NMS (scores decayed by exp(-iou^2 / (2 sigma))).")
    .SetShapeFn(NonMaxSuppressionShape);

TW_REGISTER_OP("CombinedNonMaxSuppression")
    .Input("boxes: float")
    .Input("scores: float")
    .Input("max_output_size_per_class: int32")
    .Input("max_total_size: int32")
    .Input("iou_threshold: float")
    .Input("score_threshold: float")
    .Output("nmsed_boxes: float")
    .Output("nmsed_scores: float")
    .Output("nmsed_classes: float")
    .Output("valid_detections: int32")
    .Attr("pad_per_class: bool = false")
    .Attr("clip_boxes: bool = true")
    .Doc("Greedy NMS per image and class, then the best max_total_size of each image.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape boxes, scores, scalar;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 4, &boxes));
      TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 3, &scores));
      for (int i = 2; i < 6; ++i) TW_RETURN_IF_ERROR(c->WithRank(c->input(i), 0, &scalar));
      TW_ASSIGN_OR_RETURN(std::optional<int64_t> per_class, c->ConstantScalarInput(2));
      TW_ASSIGN_OR_RETURN(std::optional<int64_t> total, c->ConstantScalarInput(3));
      bool pad_per_class = false;
      TW_RETURN_IF_ERROR(c->GetAttr("pad_per_class", &pad_per_class));
      const int64_t batch = boxes.dims() == 4 ? boxes.dim_size(0) : -1;
      const int64_t classes = scores.dims() == 3 ? scores.dim_size(2) : -1;
      int64_t size = total.value_or(-1);
      if (pad_per_class) {
        size = per_class.has_value() && total.has_value() && classes >= 0
                   ? std::min(*total, *per_class * classes)
                   : -1;
      }
      c->set_output(0, PartialTensorShape({batch, size, 4}));
      c->set_output(1, PartialTensorShape({batch, size}));
      c->set_output(2, PartialTensorShape({batch, size}));
      c->set_output(3, PartialTensorShape({batch}));
      return absl::OkStatus();
    });

}  // namespace
}  // namespace towerflow
