// tf.Example parsing: ParseExample as TensorFlow 1.x's tf.parse_example
// writes it (the serving signatures of TF's SavedModels take serialized
// Examples).
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

// TF 2's tf.io.parse_example: the keys as vectors, `serialized` a vector or
// a scalar (one example, outputs without the batch dimension), ragged
// features (refused by the kernel).
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
      // Row splits: one more than the examples (2 for a scalar).
      const int64_t splits = serialized.dims() == 0 ? 2
                             : serialized.dims() == 1 && serialized.dim_size(0) >= 0
                                 ? serialized.dim_size(0) + 1
                                 : -1;
      for (size_t i = 0; i < ragged_values.size() && next < c->num_outputs(); ++i) {
        c->set_output(next++, PartialTensorShape({-1}));
      }
      while (next < c->num_outputs()) c->set_output(next++, PartialTensorShape({splits}));
      return absl::OkStatus();
    });

}  // namespace
}  // namespace towerflow
