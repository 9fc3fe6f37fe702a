// tf.Example and tf.SequenceExample parsing: ParseExample as TensorFlow
// 1.x's tf.parse_example writes it (the serving signatures of TF's SavedModels take serialized
// Examples); and the record decoders of input pipelines, DecodeRaw,
// DecodePaddedRaw and DecodeCSV (kernels/cpu/decode_ops.cc); SerializeTensor
// and ParseTensor.
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "graph/op_registry.h"
#include "ops/shape_fns.h"

namespace towerflow {
namespace {

TW_REGISTER_OP("ParseExample")
    .Input("serialized: string")
    .Input("names: string")
    .Input("sparse_keys: Nsparse * string")
    .Input("dense_keys: Ndense * string")
    .Input("dense_defaults: Tdense")
    .Output("sparse_indices: Nsparse * int64")
    .Output("sparse_values: sparse_types")
    .Output("sparse_shapes: Nsparse * int64")
    .Output("dense_values: Tdense")
    .Attr("Nsparse: int >= 0")
    .Attr("Ndense: int >= 0")
    .Attr("sparse_types: list({float,int64,string}) >= 0")
    .Attr("Tdense: list({float,int64,string}) >= 0")
    .Attr("dense_shapes: list(shape) >= 0")
    .Doc("Parses a vector of serialized tf.Example protos into dense and sparse tensors.")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape serialized;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 1, &serialized));
      int64_t num_sparse = 0;
      std::vector<PartialTensorShape> dense_shapes;
      TW_RETURN_IF_ERROR(c->GetAttr("Nsparse", &num_sparse));
      TW_RETURN_IF_ERROR(c->GetAttr("dense_shapes", &dense_shapes));
      const int n = static_cast<int>(num_sparse);
      for (int i = 0; i < n; ++i) {
        c->set_output(i, PartialTensorShape({-1, 2}));
        c->set_output(n + i, PartialTensorShape({-1}));
        c->set_output(2 * n + i, PartialTensorShape({2}));
      }
      const int first_dense = 3 * n;
      if (c->num_outputs() - first_dense != static_cast<int>(dense_shapes.size())) {
        return absl::InvalidArgumentError("dense_shapes must have one shape per dense key");
      }
      for (size_t i = 0; i < dense_shapes.size(); ++i) {
        c->set_output(first_dense + static_cast<int>(i),
                      PartialTensorShape({serialized.dim_size(0)}).Concatenate(dense_shapes[i]));
      }
      return absl::OkStatus();
    });

// TF 1's tf.parse_single_example: one serialized example (a scalar), the
// keys as attrs, the outputs without the batch dimension.
TW_REGISTER_OP("ParseSingleExample")
    .Input("serialized: string")
    .Input("dense_defaults: Tdense")
    .Output("sparse_indices: num_sparse * int64")
    .Output("sparse_values: sparse_types")
    .Output("sparse_shapes: num_sparse * int64")
    .Output("dense_values: Tdense")
    .Attr("num_sparse: int >= 0")
    .Attr("sparse_keys: list(string) >= 0")
    .Attr("dense_keys: list(string) >= 0")
    .Attr("sparse_types: list({float,int64,string}) >= 0")
    .Attr("Tdense: list({float,int64,string}) >= 0")
    .Attr("dense_shapes: list(shape) >= 0")
    .Doc("Parses one serialized tf.Example (TF 1's parse_single_example).")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape serialized;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 0, &serialized));
      int64_t num_sparse = 0;
      std::vector<PartialTensorShape> dense_shapes;
      TW_RETURN_IF_ERROR(c->GetAttr("num_sparse", &num_sparse));
      TW_RETURN_IF_ERROR(c->GetAttr("dense_shapes", &dense_shapes));
      const int n = static_cast<int>(num_sparse);
      if (3 * n + static_cast<int>(dense_shapes.size()) != c->num_outputs()) {
        return absl::InvalidArgumentError(
            "num_sparse, sparse_types, Tdense and dense_shapes disagree");
      }
      for (int i = 0; i < n; ++i) {
        c->set_output(i, PartialTensorShape({-1, 1}));
        c->set_output(n + i, PartialTensorShape({-1}));
        c->set_output(2 * n + i, PartialTensorShape({1}));
      }
      for (size_t d = 0; d < dense_shapes.size(); ++d) {
        c->set_output(3 * n + static_cast<int>(d), dense_shapes[d]);
      }
      return absl::OkStatus();
    });

// TF 2's tf.io.parse_example: the keys as vectors, `serialized` a vector or
// a scalar (one example, outputs without the batch dimension),
// variable-length dense features (a dense shape [-1, ...]) and ragged ones.
TW_REGISTER_OP("ParseExampleV2")
    .Input("serialized: string")
    .Input("names: string")
    .Input("sparse_keys: string")
    .Input("dense_keys: string")
    .Input("ragged_keys: string")
    .Input("dense_defaults: Tdense")
    .Output("sparse_indices: num_sparse * int64")
    .Output("sparse_values: sparse_types")
    .Output("sparse_shapes: num_sparse * int64")
    .Output("dense_values: Tdense")
    .Output("ragged_values: ragged_value_types")
    .Output("ragged_row_splits: ragged_split_types")
    .Attr("Tdense: list({float,int64,string}) >= 0")
    .Attr("num_sparse: int >= 0")
    .Attr("sparse_types: list({float,int64,string}) >= 0")
    .Attr("ragged_value_types: list({float,int64,string}) >= 0")
    .Attr("ragged_split_types: list({int32,int64}) >= 0")
    .Attr("dense_shapes: list(shape) >= 0")
    .Doc("Parses a scalar or vector of serialized tf.Example protos (TF 2's parse_example).")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape serialized, names;
      TW_RETURN_IF_ERROR(c->WithRankAtMost(c->input(0), 1, &serialized));
      TW_RETURN_IF_ERROR(c->WithRankAtMost(c->input(1), 1, &names));
      int64_t num_sparse = 0;
      std::vector<PartialTensorShape> dense_shapes;
      DataTypeVector ragged_values;
      TW_RETURN_IF_ERROR(c->GetAttr("num_sparse", &num_sparse));
      TW_RETURN_IF_ERROR(c->GetAttr("dense_shapes", &dense_shapes));
      TW_RETURN_IF_ERROR(c->GetAttr("ragged_value_types", &ragged_values));
      const int n = static_cast<int>(num_sparse);
      const int64_t rank = serialized.dims() < 0 ? -1 : serialized.dims() + 1;
      for (int i = 0; i < n; ++i) {
        c->set_output(i, PartialTensorShape({-1, rank}));
        c->set_output(n + i, PartialTensorShape({-1}));
        c->set_output(2 * n + i, PartialTensorShape({rank}));
      }
      int next = 3 * n;
      for (const PartialTensorShape& dense : dense_shapes) {
        if (next >= c->num_outputs()) {
          return absl::InvalidArgumentError("dense_shapes must have one shape per Tdense type");
        }
        c->set_output(next++, serialized.dims() < 0 ? PartialTensorShape::Unknown()
                                                    : serialized.Concatenate(dense));
      }
      // Row splits: one more than the examples (none for a scalar).
      const int64_t splits = serialized.dims() == 0 ? 0
                             : serialized.dims() == 1 && serialized.dim_size(0) >= 0
                                 ? serialized.dim_size(0) + 1
                                 : -1;
      for (size_t i = 0; i < ragged_values.size() && next < c->num_outputs(); ++i) {
        c->set_output(next++, PartialTensorShape({-1}));
      }
      while (next < c->num_outputs()) c->set_output(next++, PartialTensorShape({splits}));
      return absl::OkStatus();
    });

// The outputs of a SequenceExample parser, in order: the context's sparse
// (indices, values, shapes), dense and ragged (values, row splits) features,
// then the feature lists' sparse, dense (and their lengths) and ragged
// (values, outer and inner splits) ones. A scalar input's outputs have no
// batch dimension.
absl::Status SequenceExampleShapes(InferenceContext* c, bool ragged, bool lengths) {
  PartialTensorShape serialized;
  TW_RETURN_IF_ERROR(c->WithRankAtMost(c->input(0), 1, &serialized));
  int64_t context_sparse = 0, list_sparse = 0;
  std::vector<PartialTensorShape> context_dense, list_dense;
  DataTypeVector context_ragged, list_ragged;
  TW_RETURN_IF_ERROR(c->GetAttr("Ncontext_sparse", &context_sparse));
  TW_RETURN_IF_ERROR(c->GetAttr("context_dense_shapes", &context_dense));
  TW_RETURN_IF_ERROR(c->GetAttr("Nfeature_list_sparse", &list_sparse));
  TW_RETURN_IF_ERROR(c->GetAttr("feature_list_dense_shapes", &list_dense));
  if (ragged) {
    TW_RETURN_IF_ERROR(c->GetAttr("context_ragged_value_types", &context_ragged));
    TW_RETURN_IF_ERROR(c->GetAttr("feature_list_ragged_value_types", &list_ragged));
  }
  const int64_t rank = serialized.dims();  // -1 when unknown
  const auto with_batch = [&](const PartialTensorShape& s) {
    return rank < 0 ? PartialTensorShape::Unknown() : serialized.Concatenate(s);
  };
  // Row splits over the examples: a scalar's are a scalar (TF's).
  const PartialTensorShape splits =
      rank < 0 ? PartialTensorShape::Unknown()
      : rank == 0
          ? PartialTensorShape::Scalar()
          : PartialTensorShape({serialized.dim_size(0) < 0 ? -1 : serialized.dim_size(0) + 1});
  const int64_t needed = 3 * context_sparse + static_cast<int64_t>(context_dense.size()) +
                         2 * static_cast<int64_t>(context_ragged.size()) + 3 * list_sparse +
                         static_cast<int64_t>(list_dense.size()) * (lengths ? 2 : 1) +
                         3 * static_cast<int64_t>(list_ragged.size());
  if (needed != c->num_outputs()) {
    return absl::InvalidArgumentError(
        "the sparse, dense and ragged counts disagree with their types and shapes");
  }
  int next = 0;
  const auto sparse = [&](int64_t n, int64_t index_rank) {
    const PartialTensorShape indices({-1, rank < 0 ? -1 : index_rank});
    for (int64_t i = 0; i < n; ++i) c->set_output(next + static_cast<int>(i), indices);
    for (int64_t i = 0; i < n; ++i) c->set_output(next + n + i, PartialTensorShape({-1}));
    for (int64_t i = 0; i < n; ++i) {
      c->set_output(next + 2 * n + i, PartialTensorShape({rank < 0 ? -1 : index_rank}));
    }
    next += static_cast<int>(3 * n);
  };
  sparse(context_sparse, rank + 1);
  for (const PartialTensorShape& s : context_dense) c->set_output(next++, with_batch(s));
  for (size_t i = 0; i < context_ragged.size(); ++i)
    c->set_output(next++, PartialTensorShape({-1}));
  for (size_t i = 0; i < context_ragged.size(); ++i) c->set_output(next++, splits);
  sparse(list_sparse, rank + 2);
  for (const PartialTensorShape& s : list_dense) {
    c->set_output(next++, with_batch(PartialTensorShape({-1}).Concatenate(s)));
  }
  if (lengths) {
    for (size_t i = 0; i < list_dense.size(); ++i) c->set_output(next++, serialized);
  }
  for (size_t i = 0; i < list_ragged.size(); ++i) c->set_output(next++, PartialTensorShape({-1}));
  for (size_t i = 0; i < list_ragged.size(); ++i) c->set_output(next++, splits);
  for (size_t i = 0; i < list_ragged.size(); ++i) c->set_output(next++, PartialTensorShape({-1}));
  return absl::OkStatus();
}

// TF 1's SequenceExample parsers' outputs (without the lengths) and attrs,
// in TF's order.
OpDefBuilder TfOneSequenceParser(OpDefBuilder b, bool lengths) {
  b.Output("context_sparse_indices: Ncontext_sparse * int64")
      .Output("context_sparse_values: context_sparse_types")
      .Output("context_sparse_shapes: Ncontext_sparse * int64")
      .Output("context_dense_values: Tcontext_dense")
      .Output("feature_list_sparse_indices: Nfeature_list_sparse * int64")
      .Output("feature_list_sparse_values: feature_list_sparse_types")
      .Output("feature_list_sparse_shapes: Nfeature_list_sparse * int64")
      .Output("feature_list_dense_values: feature_list_dense_types");
  if (lengths) b.Output("feature_list_dense_lengths: Nfeature_list_dense * int64");
  return b;
}
OpDefBuilder TfOneSequenceAttrs(OpDefBuilder b) {
  b.Attr("Ncontext_sparse: int >= 0 = 0")
      .Attr("Ncontext_dense: int >= 0 = 0")
      .Attr("Nfeature_list_sparse: int >= 0 = 0")
      .Attr("Nfeature_list_dense: int >= 0 = 0")
      .Attr("context_sparse_types: list({float,int64,string}) >= 0 = []")
      .Attr("Tcontext_dense: list({float,int64,string}) >= 0 = []")
      .Attr("feature_list_dense_types: list({float,int64,string}) >= 0 = []")
      .Attr("context_dense_shapes: list(shape) >= 0 = []")
      .Attr("feature_list_sparse_types: list({float,int64,string}) >= 0 = []")
      .Attr("feature_list_dense_shapes: list(shape) >= 0 = []");
  return b;
}

// TF 1's tf.io.parse_sequence_example (a vector of serialized
// SequenceExamples, the keys as attrs) and tf.parse_single_sequence_example
// (one, the keys as scalar inputs, no lengths).
[[maybe_unused]] const bool kTfOneSequenceParsers = [] {
  OpDefBuilder batch("ParseSequenceExample", __FILE__);
  batch.Input("serialized: string")
      .Input("debug_name: string")
      .Input("context_dense_defaults: Tcontext_dense");
  RegisterOp(TfOneSequenceAttrs(TfOneSequenceParser(std::move(batch), /*lengths=*/true)
                                    .Attr("feature_list_dense_missing_assumed_empty: "
                                          "list(string) >= 0")
                                    .Attr("context_sparse_keys: list(string) >= 0")
                                    .Attr("context_dense_keys: list(string) >= 0")
                                    .Attr("feature_list_sparse_keys: list(string) >= 0")
                                    .Attr("feature_list_dense_keys: list(string) >= 0"))
                 .Doc("Parses a vector of serialized tf.SequenceExample protos (TF 1).")
                 .SetShapeFn([](InferenceContext* c) {
                   PartialTensorShape serialized;
                   TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 1, &serialized));
                   return SequenceExampleShapes(c, /*ragged=*/false, /*lengths=*/true);
                 }));
  OpDefBuilder single("ParseSingleSequenceExample", __FILE__);
  single.Input("serialized: string")
      .Input("feature_list_dense_missing_assumed_empty: string")
      .Input("context_sparse_keys: Ncontext_sparse * string")
      .Input("context_dense_keys: Ncontext_dense * string")
      .Input("feature_list_sparse_keys: Nfeature_list_sparse * string")
      .Input("feature_list_dense_keys: Nfeature_list_dense * string")
      .Input("context_dense_defaults: Tcontext_dense")
      .Input("debug_name: string");
  RegisterOp(
      TfOneSequenceAttrs(TfOneSequenceParser(std::move(single), /*lengths=*/false))
          .Doc("Parses one serialized tf.SequenceExample (TF 1's parse_single_sequence_example).")
          .SetShapeFn([](InferenceContext* c) {
            PartialTensorShape serialized;
            TW_RETURN_IF_ERROR(c->WithRank(c->input(0), 0, &serialized));
            return SequenceExampleShapes(c, /*ragged=*/false, /*lengths=*/false);
          }));
  return true;
}();

// TF 2's tf.io.parse_sequence_example and parse_single_sequence_example:
// the keys as inputs, a vector or a scalar, ragged features.
TW_REGISTER_OP("ParseSequenceExampleV2")
    .Input("serialized: string")
    .Input("debug_name: string")
    .Input("context_sparse_keys: string")
    .Input("context_dense_keys: string")
    .Input("context_ragged_keys: string")
    .Input("feature_list_sparse_keys: string")
    .Input("feature_list_dense_keys: string")
    .Input("feature_list_ragged_keys: string")
    .Input("feature_list_dense_missing_assumed_empty: bool")
    .Input("context_dense_defaults: Tcontext_dense")
    .Output("context_sparse_indices: Ncontext_sparse * int64")
    .Output("context_sparse_values: context_sparse_types")
    .Output("context_sparse_shapes: Ncontext_sparse * int64")
    .Output("context_dense_values: Tcontext_dense")
    .Output("context_ragged_values: context_ragged_value_types")
    .Output("context_ragged_row_splits: context_ragged_split_types")
    .Output("feature_list_sparse_indices: Nfeature_list_sparse * int64")
    .Output("feature_list_sparse_values: feature_list_sparse_types")
    .Output("feature_list_sparse_shapes: Nfeature_list_sparse * int64")
    .Output("feature_list_dense_values: feature_list_dense_types")
    .Output("feature_list_dense_lengths: Nfeature_list_dense * int64")
    .Output("feature_list_ragged_values: feature_list_ragged_value_types")
    .Output("feature_list_ragged_outer_splits: feature_list_ragged_split_types")
    .Output("feature_list_ragged_inner_splits: feature_list_ragged_split_types")
    .Attr("Ncontext_sparse: int >= 0 = 0")
    .Attr("Tcontext_dense: list({float,int64,string}) >= 0 = []")
    .Attr("context_sparse_types: list({float,int64,string}) >= 0 = []")
    .Attr("context_ragged_value_types: list({float,int64,string}) >= 0 = []")
    .Attr("context_ragged_split_types: list({int32,int64}) >= 0 = []")
    .Attr("context_dense_shapes: list(shape) >= 0 = []")
    .Attr("Nfeature_list_sparse: int >= 0 = 0")
    .Attr("Nfeature_list_dense: int >= 0 = 0")
    .Attr("feature_list_dense_types: list({float,int64,string}) >= 0 = []")
    .Attr("feature_list_sparse_types: list({float,int64,string}) >= 0 = []")
    .Attr("feature_list_ragged_value_types: list({float,int64,string}) >= 0 = []")
    .Attr("feature_list_ragged_split_types: list({int32,int64}) >= 0 = []")
    .Attr("feature_list_dense_shapes: list(shape) >= 0 = []")
    .Doc("Parses a scalar or vector of serialized tf.SequenceExample protos (TF 2).")
    .SetShapeFn([](InferenceContext* c) {
      return SequenceExampleShapes(c, /*ragged=*/true, /*lengths=*/true);
    });

TW_REGISTER_OP("SerializeTensor")
    .Input("tensor: T")
    .Output("serialized: string")
    .Attr("T: type")
    .Doc("The tensor's TensorProto, serialized.")
    .SetShapeFn([](InferenceContext* c) {
      c->set_output(0, PartialTensorShape::Scalar());
      return absl::OkStatus();
    });

TW_REGISTER_OP("ParseTensor")
    .Input("serialized: string")
    .Output("output: out_type")
    .Attr("out_type: type")
    .Doc("The tensor of a serialized TensorProto, of dtype out_type.")
    .SetShapeFn(shape_fns::UnknownShape);

// tf.io.decode_compressed: each string inflated from ZLIB or GZIP, or
// passed through ("").
TW_REGISTER_OP("DecodeCompressed")
    .Input("bytes: string")
    .Output("output: string")
    .Attr("compression_type: string = ''")
    .Doc("Each string decompressed (ZLIB or GZIP), in the input's shape.")
    .SetShapeFn([](InferenceContext* c) {
      c->set_output(0, c->input(0));
      return absl::OkStatus();
    });

// tf.io.decode_json_example: tf.Examples in protobuf's JSON mapping to their
// binary form.
TW_REGISTER_OP("DecodeJSONExample")
    .Input("json_examples: string")
    .Output("binary_examples: string")
    .Doc("Each JSON-encoded tf.Example serialized, in the input's shape.")
    .SetShapeFn([](InferenceContext* c) {
      c->set_output(0, c->input(0));
      return absl::OkStatus();
    });

TW_REGISTER_OP("DecodeRaw")
    .Input("bytes: string")
    .Output("output: out_type")
    .Attr(
        "out_type: {half, float, double, int32, uint16, uint8, int16, int8, int64, complex64, "
        "complex128, bool, bfloat16}")
    .Attr("little_endian: bool = true")
    .Doc("Each string's bytes as a vector of out_type (all strings one length).")
    .SetShapeFn([](InferenceContext* c) {
      const PartialTensorShape& in = c->input(0);
      c->set_output(0, in.unknown_rank() ? in : in.Concatenate(PartialTensorShape({-1})));
      return absl::OkStatus();
    });

TW_REGISTER_OP("DecodePaddedRaw")
    .Input("input_bytes: string")
    .Input("fixed_length: int32")
    .Output("output: out_type")
    .Attr("out_type: {half, float, double, int32, uint16, uint8, int16, int8, int64, bfloat16}")
    .Attr("little_endian: bool = true")
    .Doc("Each string's first fixed_length bytes (zero-padded) as a vector of out_type.")
    .SetShapeFn([](InferenceContext* c) {
      const PartialTensorShape& in = c->input(0);
      PartialTensorShape length;
      TW_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, &length));
      if (in.unknown_rank()) return absl::OkStatus();
      TW_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> fixed, c->ConstantIntInput(1));
      DataType type = DT_INVALID;
      TW_RETURN_IF_ERROR(c->GetAttr("out_type", &type));
      const int64_t size =
          type == DT_INT8 || type == DT_UINT8                                               ? 1
          : type == DT_HALF || type == DT_BFLOAT16 || type == DT_INT16 || type == DT_UINT16 ? 2
          : type == DT_FLOAT || type == DT_INT32                                            ? 4
                                                                                            : 8;
      int64_t width = -1;
      if (fixed.has_value() && fixed->size() == 1 && size > 0 && (*fixed)[0] > 0 &&
          (*fixed)[0] % size == 0) {
        width = (*fixed)[0] / size;
      }
      c->set_output(0, in.Concatenate(PartialTensorShape({width})));
      return absl::OkStatus();
    });

TW_REGISTER_OP("DecodeCSV")
    .Input("records: string")
    .Input("record_defaults: OUT_TYPE")
    .Output("output: OUT_TYPE")
    .Attr("OUT_TYPE: list({float, double, int32, int64, string}) >= 1")
    .Attr("field_delim: string = ','")
    .Attr("use_quote_delim: bool = true")
    .Attr("na_value: string = ''")
    .Attr("select_cols: list(int) = []")
    .Doc(
        "Each CSV record's fields (or the selected columns) as one tensor per column, of the "
        "records' shape; an empty or na_value field takes the column's default.")
    .SetShapeFn([](InferenceContext* c) {
      for (int i = 1; i < c->num_inputs(); ++i) {
        PartialTensorShape d;
        TW_RETURN_IF_ERROR(c->WithRankAtMost(c->input(i), 1, &d));
        if (d.dims() == 1 && d.dim_size(0) > 1) {
          return absl::InvalidArgumentError(
              absl::StrCat("Shape of a default must be a length-0 or length-1 vector, or a "
                           "scalar; input ",
                           i, " has ", d.dim_size(0), " elements"));
        }
      }
      for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, c->input(0));
      return absl::OkStatus();
    });

}  // namespace
}  // namespace towerflow
