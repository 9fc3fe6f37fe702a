// Collective ops. NcclAllReduce is TensorFlow's (tf.contrib.nccl.all_sum):
// num_devices ops sharing a shared_name each contribute their input, and
// each outputs the reduction of all of them. Towerflow runs it on GPUs with
// NCCL and, beyond TensorFlow, across CPU devices (virtual ones included),
// so all-reduce training is exercised on any machine.
//
// MpiAllReduce is Towerflow's, after Horovod's HorovodAllreduce: each
// process of the cluster (distribute/cluster.h) contributes its inputs and
// every process gets the sums. One op takes all of a step's tensors, so
// every process issues its collectives in one order, and packs them into
// fused buffers of up to fusion_threshold_bytes (Horovod's 64 MiB default;
// 0: one collective per tensor). MpiBroadcast gives every process one
// process's tensors the same way; MpiAllGather every process's rows.
#include <vector>

#include "core/status_macros.h"
#include "graph/op_registry.h"
#include "ops/shape_fns.h"

namespace towerflow {
namespace {

absl::Status SameShapes(InferenceContext* c) {
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, c->input(i));
  return absl::OkStatus();
}

TW_REGISTER_OP("NcclAllReduce")
    .Input("input: T")
    .Output("data: T")
    .Attr("reduction: {'min', 'max', 'prod', 'sum'}")
    .Attr("T: {half, float, float64, int32, int64}")
    .Attr("num_devices: int")
    .Attr("shared_name: string")
    .SetIsStateful()
    .Doc("the reduction of the inputs of the num_devices ops sharing shared_name")
    .SetShapeFn(shape_fns::UnchangedShape);

TW_REGISTER_OP("MpiAllReduce")
    .Input("input: T")
    .Output("sum: T")
    .Attr("T: list({float, float64, int32, int64}) >= 1")
    .Attr("fusion_threshold_bytes: int = 67108864")
    .SetIsStateful()
    .Doc("each input summed over the processes of the cluster (MPI_Allreduce)")
    .SetShapeFn(SameShapes);

// Each input's rows from every process, concatenated in rank order
// (MPI_Allgatherv; Horovod's HorovodAllgather): how a sparse gradient's
// values and indices cross processes. The first dims may differ from
// process to process, the others may not.
TW_REGISTER_OP("MpiAllGather")
    .Input("input: T")
    .Output("gathered: T")
    .Attr("T: list(type) >= 1")
    .SetIsStateful()
    .Doc("each input's rows from every process, in rank order (MPI_Allgatherv)")
    .SetShapeFn([](InferenceContext* c) -> absl::Status {
      for (int i = 0; i < c->num_outputs(); ++i) {
        PartialTensorShape in;
        TW_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(i), 1, &in));
        if (in.unknown_rank()) {
          c->set_output(i, in);
          continue;
        }
        std::vector<int64_t> dims(in.dim_sizes().begin(), in.dim_sizes().end());
        dims[0] = -1;  // the cluster's rows, known when it runs
        c->set_output(i, PartialTensorShape(dims));
      }
      return absl::OkStatus();
    });

// This process's rank in the cluster (Horovod's rank op): 0 in a cluster of
// one. Stateful so that it is never folded into a graph that another
// process may run.
TW_REGISTER_OP("MpiRank")
    .Output("rank: int32")
    .SetIsStateful()
    .Doc("this process's rank in the cluster (0 without mpirun)")
    .SetShapeFn(shape_fns::ScalarShape);

// Each input becomes process root_rank's (MPI_Bcast), the tensors packed
// into buffers of up to fusion_threshold_bytes whatever their dtypes:
// Horovod's broadcast of the initial variables.
TW_REGISTER_OP("MpiBroadcast")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: list(type) >= 1")
    .Attr("root_rank: int = 0")
    .Attr("fusion_threshold_bytes: int = 67108864")
    .SetIsStateful()
    .Doc("each input as process root_rank has it (MPI_Bcast)")
    .SetShapeFn(SameShapes);

}  // namespace
}  // namespace towerflow
