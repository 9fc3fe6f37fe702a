// String ops on DT_STRING tensors: element by element StringLength,
// StringLower, StringUpper, AsString, StringToNumber and Substr
// (kernels/cpu/string_ops.cc); the text ops of TF 2's tf.strings and Keras's
// TextVectorization: splitting, stripping, regular expressions (RE2) and
// StringFormat (kernels/cpu/text_ops.cc); Unicode decoding and encoding
// (kernels/cpu/unicode_ops.cc, ICU); EncodeBase64, DecodeBase64 and
// ReduceJoin (kernels/cpu/string_encoding_ops.cc). StringJoin,
// StaticRegexFullMatch and the StringToHashBucket ops are in io_ops.cc.
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "graph/op_registry.h"
#include "ops/segment_shapes.h"
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

// [?, 2] indices, [?] values and [2] dense shape of a sparse split.
absl::Status SplitShape(InferenceContext* c) {
  PartialTensorShape unused;
  TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 1, &unused));
  TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, &unused));
  c->set_output(0, PartialTensorShape({-1, 2}));
  c->set_output(1, PartialTensorShape({-1}));
  c->set_output(2, PartialTensorShape({2}));
  return absl::OkStatus();
}

// The input's shape, after checking that inputs [1, end) are scalars.
absl::Status UnchangedWithScalarArgs(InferenceContext* c) {
  PartialTensorShape unused;
  for (int i = 1; i < c->num_inputs(); ++i) {
    TW_RETURN_IF_ERROR(c->WithRank(c->input(i), 0, &unused));
  }
  return UnchangedShape(c);
}

TW_REGISTER_OP("StringSplit")
    .Input("input: string")
    .Input("delimiter: string")
    .Output("indices: int64")
    .Output("values: string")
    .Output("shape: int64")
    .Attr("skip_empty: bool = true")
    .Doc(
        "Splits each string of a vector at any byte of delimiter (into bytes when it is empty), "
        "as a SparseTensor.")
    .SetShapeFn(SplitShape);

TW_REGISTER_OP("StringSplitV2")
    .Input("input: string")
    .Input("sep: string")
    .Output("indices: int64")
    .Output("values: string")
    .Output("shape: int64")
    .Attr("maxsplit: int = -1")
    .Doc(
        "Splits each string of a vector as Python's str.split(sep, maxsplit) (on runs of "
        "whitespace when sep is empty), as a SparseTensor.")
    .SetShapeFn(SplitShape);

TW_REGISTER_OP("StringStrip")
    .Input("input: string")
    .Output("output: string")
    .Doc("Each string without its leading and trailing ASCII whitespace.")
    .SetShapeFn(UnchangedShape);

TW_REGISTER_OP("StaticRegexReplace")
    .Input("input: string")
    .Output("output: string")
    .Attr("pattern: string")
    .Attr("rewrite: string")
    .Attr("replace_global: bool = true")
    .Doc(
        "Each string with the matches of the RE2 pattern replaced by rewrite (\\1 names a "
        "group); only the first match unless replace_global.")
    .SetShapeFn(UnchangedShape);

TW_REGISTER_OP("RegexReplace")
    .Input("input: string")
    .Input("pattern: string")
    .Input("rewrite: string")
    .Output("output: string")
    .Attr("replace_global: bool = true")
    .Doc("StaticRegexReplace with the pattern and rewrite as scalar inputs.")
    .SetShapeFn(UnchangedWithScalarArgs);

TW_REGISTER_OP("RegexFullMatch")
    .Input("input: string")
    .Input("pattern: string")
    .Output("output: bool")
    .Doc("Whether each string matches the RE2 pattern (a scalar input) as a whole.")
    .SetShapeFn(UnchangedWithScalarArgs);

TW_REGISTER_OP("StringFormat")
    .Input("inputs: T")
    .Output("output: string")
    .Attr("T: list(type) >= 0")
    .Attr("template: string = '%s'")
    .Attr("placeholder: string = '%s'")
    .Attr("summarize: int = 3")
    .Doc(
        "The template with each placeholder replaced by an input as tf.print shows it (the "
        "first and last `summarize` entries of each dimension).")
    .SetShapeFn(shape_fns::ScalarShape);

// Row splits [N + 1] of the N strings, and [?] for each value output.
absl::Status UnicodeDecodeShape(InferenceContext* c) {
  const PartialTensorShape& in = c->input(0);
  const int64_t n = in.IsFullyDefined() ? in.num_elements() : -1;
  c->set_output(0, PartialTensorShape({n < 0 ? -1 : n + 1}));
  for (int i = 1; i < c->num_outputs(); ++i) c->set_output(i, PartialTensorShape({-1}));
  return absl::OkStatus();
}

TW_REGISTER_OP("UnicodeDecode")
    .Input("input: string")
    .Output("row_splits: Tsplits")
    .Output("char_values: int32")
    .Attr("input_encoding: string")
    .Attr("errors: {'strict', 'replace', 'ignore'} = 'replace'")
    .Attr("replacement_char: int = 65533")
    .Attr("replace_control_characters: bool = false")
    .Attr("Tsplits: {int32, int64} = DT_INT64")
    .Doc(
        "The code points of each string (any encoding ICU knows), as a ragged tensor's "
        "row_splits and values; malformed input per `errors`.")
    .SetShapeFn(UnicodeDecodeShape);

TW_REGISTER_OP("UnicodeDecodeWithOffsets")
    .Input("input: string")
    .Output("row_splits: Tsplits")
    .Output("char_values: int32")
    .Output("char_to_byte_starts: int64")
    .Attr("input_encoding: string")
    .Attr("errors: {'strict', 'replace', 'ignore'} = 'replace'")
    .Attr("replacement_char: int = 65533")
    .Attr("replace_control_characters: bool = false")
    .Attr("Tsplits: {int32, int64} = DT_INT64")
    .Doc("UnicodeDecode, with the byte offset where each code point starts.")
    .SetShapeFn(UnicodeDecodeShape);

TW_REGISTER_OP("UnicodeEncode")
    .Input("input_values: int32")
    .Input("input_splits: Tsplits")
    .Output("output: string")
    .Attr("errors: {'ignore', 'replace', 'strict'} = 'replace'")
    .Attr("output_encoding: {'UTF-8', 'UTF-16-BE', 'UTF-32-BE'}")
    .Attr("replacement_char: int = 65533")
    .Attr("Tsplits: {int32, int64} = DT_INT64")
    .Doc("One string per row of a ragged tensor of code points, in output_encoding.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape values, splits;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 1, &values));
      TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &splits));
      const int64_t n = splits.dims() == 1 ? splits.dim_size(0) : -1;
      c->set_output(0, PartialTensorShape({n > 0 ? n - 1 : -1}));
      return absl::OkStatus();
    });

TW_REGISTER_OP("UnicodeTranscode")
    .Input("input: string")
    .Output("output: string")
    .Attr("input_encoding: string")
    .Attr("output_encoding: {'UTF-8', 'UTF-16-BE', 'UTF-32-BE'}")
    .Attr("errors: {'strict', 'replace', 'ignore'} = 'replace'")
    .Attr("replacement_char: int = 65533")
    .Attr("replace_control_characters: bool = false")
    .Doc("Each string decoded from input_encoding and encoded in output_encoding.")
    .SetShapeFn(UnchangedShape);

TW_REGISTER_OP("UnicodeScript")
    .Input("input: int32")
    .Output("output: int32")
    .Doc("The ICU script code (UScriptCode) of each code point; -1 for one out of range.")
    .SetShapeFn(UnchangedShape);

TW_REGISTER_OP("EncodeBase64")
    .Input("input: string")
    .Output("output: string")
    .Attr("pad: bool = false")
    .Doc("Each string in web-safe base64 (- and _), '=' padded with pad.")
    .SetShapeFn(UnchangedShape);

TW_REGISTER_OP("DecodeBase64")
    .Input("input: string")
    .Output("output: string")
    .Doc("Each web-safe base64 string decoded (padding optional).")
    .SetShapeFn(UnchangedShape);

TW_REGISTER_OP("UnsortedSegmentJoin")
    .Input("inputs: string")
    .Input("segment_ids: Tindices")
    .Input("num_segments: Tnumsegments")
    .Output("output: string")
    .Attr("separator: string = ''")
    .Attr("Tindices: {int32, int64}")
    .Attr("Tnumsegments: {int32, int64} = DT_INT32")
    .Doc("The strings of each segment joined with separator, in input order.")
    .SetShapeFn(segment_shapes::UnsortedSegmentShape);

TW_REGISTER_OP("ReduceJoin")
    .Input("inputs: string")
    .Input("reduction_indices: int32")
    .Output("output: string")
    .Attr("keep_dims: bool = false")
    .Attr("separator: string = ''")
    .Doc("The strings along reduction_indices joined with separator (none listed: unchanged).")
    .SetShapeFn([](InferenceContext* c) {
      const PartialTensorShape& in = c->input(0);
      TW_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> indices, c->ConstantIntInput(1));
      if (in.unknown_rank() || !indices.has_value()) {
        c->set_output(0, PartialTensorShape());
        return absl::OkStatus();
      }
      bool keep_dims = false;
      TW_RETURN_IF_ERROR(c->GetAttr("keep_dims", &keep_dims));
      const int rank = in.dims();
      std::vector<bool> reduced(rank, false);
      for (int64_t given : *indices) {
        const int64_t d = given < 0 ? given + rank : given;
        if (d < 0 || d >= rank) {
          // TF's shape function's words (its kernel says OutOfRange).
          return absl::InvalidArgumentError(absl::StrCat("Invalid reduction dimension ", given,
                                                         " for input with ", rank, " dimensions."));
        }
        if (reduced[d]) {
          return absl::InvalidArgumentError(absl::StrCat("Duplicate reduction dimension ", given));
        }
        reduced[d] = true;
      }
      std::vector<int64_t> dims;
      for (int d = 0; d < rank; ++d) {
        if (!reduced[d]) {
          dims.push_back(in.dim_size(d));
        } else if (keep_dims) {
          dims.push_back(1);
        }
      }
      c->set_output(0, PartialTensorShape(absl::Span<const int64_t>(dims)));
      return absl::OkStatus();
    });

TW_REGISTER_OP("StringNGrams")
    .Input("data: string")
    .Input("data_splits: Tsplits")
    .Output("ngrams: string")
    .Output("ngrams_splits: Tsplits")
    .Attr("separator: string")
    .Attr("ngram_widths: list(int) >= 0")
    .Attr("left_pad: string")
    .Attr("right_pad: string")
    .Attr("pad_width: int")
    .Attr("preserve_short_sequences: bool")
    .Attr("Tsplits: {int32, int64} = DT_INT64")
    .Doc(
        "The n-grams of each row of a ragged tensor of strings (tf.strings.ngrams), joined with "
        "separator, padded with left_pad/right_pad up to pad_width (-1: n - 1) on each side.")
    .SetShapeFn([](InferenceContext* c) {
      c->set_output(0, PartialTensorShape({-1}));
      c->set_output(1, c->input(1));
      return absl::OkStatus();
    });

}  // namespace
}  // namespace towerflow
