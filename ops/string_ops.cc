// String ops on DT_STRING tensors, element by element: StringLength,
// StringLower, StringUpper, AsString, StringToNumber and Substr
// (kernels/cpu/string_ops.cc). StringJoin, StaticRegexFullMatch and
// StringToHashBucketFast are in io_ops.cc.
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "graph/op_registry.h"
#include "ops/shape_fns.h"

namespace towerflow {
namespace {

using shape_fns::UnchangedShape;

TW_REGISTER_OP("StringLength")
    .Input("input: string")
    .Output("output: int32")
    .Attr("unit: {'BYTE', 'UTF8_CHAR'} = 'BYTE'")
    .Doc("Each string's length in bytes, or in UTF-8 characters.")
    .SetShapeFn(UnchangedShape);

TW_REGISTER_OP("StringLower")
    .Input("input: string")
    .Output("output: string")
    .Attr("encoding: string = ''")
    .Doc("Each string in lower case: ASCII letters, or every letter with encoding 'utf-8'.")
    .SetShapeFn(UnchangedShape);

TW_REGISTER_OP("StringUpper")
    .Input("input: string")
    .Output("output: string")
    .Attr("encoding: string = ''")
    .Doc("Each string in upper case: ASCII letters, or every letter with encoding 'utf-8'.")
    .SetShapeFn(UnchangedShape);

TW_REGISTER_OP("AsString")
    .Input("input: T")
    .Output("output: string")
    .Attr(
        "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, "
        "uint64, complex64, complex128, bool, variant, string}")
    .Attr("precision: int = -1")
    .Attr("scientific: bool = false")
    .Attr("shortest: bool = false")
    .Attr("width: int = -1")
    .Attr("fill: string = ''")
    .Doc(
        "Each element as text, printf style (precision, scientific or shortest for floats; "
        "width and the fill flag for all).")
    .SetShapeFn(UnchangedShape);

TW_REGISTER_OP("StringToNumber")
    .Input("string_tensor: string")
    .Output("output: out_type")
    .Attr("out_type: {float, double, int32, int64, uint32, uint64} = DT_FLOAT")
    .Doc("Each string parsed as a number of out_type; an error names the first that is not one.")
    .SetShapeFn(UnchangedShape);

TW_REGISTER_OP("Substr")
    .Input("input: string")
    .Input("pos: T")
    .Input("len: T")
    .Output("output: string")
    .Attr("T: {int32, int64}")
    .Attr("unit: {'BYTE', 'UTF8_CHAR'} = 'BYTE'")
    .Doc(
        "Substrings from pos (negative: from the end) of len bytes or characters at most; pos "
        "and len broadcast against input.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape pos_len;
      TW_RETURN_IF_ERROR(c->Merge(c->input(1), c->input(2), &pos_len));
      return shape_fns::BroadcastBinaryOpShape(c);
    });

}  // namespace
}  // namespace towerflow
