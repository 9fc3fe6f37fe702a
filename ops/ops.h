// Every op builder: include this to build graphs with ops::Xxx(scope, ...).
//
//   #include "ops/ops.h"
//   Output x = ops::Placeholder(s, DT_FLOAT, ops::Placeholder::Shape({-1, 784}));
//   Output y = ops::MatMul(s, x, w, ops::MatMul::TransposeB(true));
//
// The builders are generated from the op schemas (ops/*_ops.cc) by
// //ops:op_gen; their headers are under bazel-bin/ops/gen/, one per schema
// file. Towerflow's own sources include the families they use
// ("ops/gen/math_ops.h", "ops/const_op.h"), not this header: a source
// recompiles when a header it includes changes, and an op added to one family
// then recompiles that family's users only (docs/BUILD.md).
#ifndef TOWERFLOW_OPS_OPS_H_
#define TOWERFLOW_OPS_OPS_H_

#include "ops/const_op.h"
#include "ops/gen/array_ops.h"
#include "ops/gen/audio_ops.h"
#include "ops/gen/candidate_sampling_ops.h"
#include "ops/gen/color_ops.h"
#include "ops/gen/concat_ops.h"
#include "ops/gen/control_ops.h"
#include "ops/gen/conv3d_ops.h"
#include "ops/gen/conv_ops.h"
#include "ops/gen/ctc_ops.h"
#include "ops/gen/data_flow_ops.h"
#include "ops/gen/fake_quant_ops.h"
#include "ops/gen/functional_ops.h"
#include "ops/gen/histogram_ops.h"
#include "ops/gen/image_ops.h"
#include "ops/gen/index_ops.h"
#include "ops/gen/io_ops.h"
#include "ops/gen/list_ops.h"
#include "ops/gen/logging_ops.h"
#include "ops/gen/lookup_ops.h"
#include "ops/gen/manip_ops.h"
#include "ops/gen/math_ops.h"
#include "ops/gen/matrix_ops.h"
#include "ops/gen/nccl_ops.h"
#include "ops/gen/nn_ops.h"
#include "ops/gen/parsing_ops.h"
#include "ops/gen/queue_ops.h"
#include "ops/gen/random_ops.h"
#include "ops/gen/resample_ops.h"
#include "ops/gen/rnn_ops.h"
#include "ops/gen/scan_ops.h"
#include "ops/gen/sparse_ops.h"
#include "ops/gen/spectral_ops.h"
#include "ops/gen/state_ops.h"
#include "ops/gen/string_ops.h"
#include "ops/gen/training_ops.h"

#endif  // TOWERFLOW_OPS_OPS_H_
