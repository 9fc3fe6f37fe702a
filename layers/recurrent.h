// Recurrent networks as TensorFlow 1.x builds them: the cells
// tf.nn.rnn_cell.LSTMCell and GRUCell, and tf.nn.dynamic_rnn, which runs a
// cell over the time steps of a batch in a while loop, the inputs read from
// and the outputs written to TensorArrays (ops/tensor_array.h). Variables
// have TF's names (rnn/lstm_cell/kernel, rnn/gru_cell/gates/bias, ...), so
// TF checkpoints restore into them, and gradients flow through the loop.
//
//   layers::LstmCell cell(64);
//   TW_ASSIGN_OR_RETURN(layers::RnnResult rnn, layers::DynamicRnn(s, cell, inputs));
//   // rnn.outputs: [batch, time, 64]; rnn.final_state: {c, h}
#ifndef TOWERFLOW_LAYERS_RECURRENT_H_
#define TOWERFLOW_LAYERS_RECURRENT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/output.h"
#include "graph/scope.h"
#include "ops/initializers.h"

namespace towerflow {
namespace layers {

// TF's RNNCell: one time step, (inputs [batch, depth], state) -> (output
// [batch, output_size()], new state), its variables under its own variable
// scope (made on the first step, reused by the rest).
class RnnCell {
 public:
  virtual ~RnnCell() = default;
  // The sizes of the state's tensors, each [batch, size].
  virtual std::vector<int64_t> StateSizes() const = 0;
  virtual int64_t OutputSize() const = 0;
  struct StepResult {
    Output output;
    std::vector<Output> state;
  };
  // The step in `scope`, the cell's variable scope entered inside.
  virtual absl::StatusOr<StepResult> Step(const Scope& scope, const Output& inputs,
                                          const std::vector<Output>& state) const = 0;
};

struct LstmCellOptions {
  double forget_bias = 1.0;                      // added to the forget gate
  initializers::Initializer kernel_initializer;  // none: GlorotUniform
  std::string name = "lstm_cell";
};

// tf.nn.rnn_cell.LSTMCell without peepholes or projection: with
// [i, j, f, o] = [x, h] kernel + bias, c' = sigmoid(f + forget_bias) c +
// sigmoid(i) tanh(j), h' = sigmoid(o) tanh(c'). State {c, h}; output h'.
// Variables kernel [depth + units, 4 units] and bias [4 units] (zeros).
class LstmCell : public RnnCell {
 public:
  explicit LstmCell(int64_t units, LstmCellOptions options = {})
      : units_(units), options_(std::move(options)) {}
  std::vector<int64_t> StateSizes() const override { return {units_, units_}; }
  int64_t OutputSize() const override { return units_; }
  absl::StatusOr<StepResult> Step(const Scope& scope, const Output& inputs,
                                  const std::vector<Output>& state) const override;

 private:
  int64_t units_;
  LstmCellOptions options_;
};

struct GruCellOptions {
  initializers::Initializer kernel_initializer;  // none: GlorotUniform
  std::string name = "gru_cell";
};

// tf.nn.rnn_cell.GRUCell: [r, u] = sigmoid([x, h] gates/kernel +
// gates/bias), c = tanh([x, r h] candidate/kernel + candidate/bias),
// h' = u h + (1 - u) c. State {h}; output h'. gates/bias starts at ones,
// candidate/bias at zeros, as TF.
class GruCell : public RnnCell {
 public:
  explicit GruCell(int64_t units, GruCellOptions options = {})
      : units_(units), options_(std::move(options)) {}
  std::vector<int64_t> StateSizes() const override { return {units_}; }
  int64_t OutputSize() const override { return units_; }
  absl::StatusOr<StepResult> Step(const Scope& scope, const Output& inputs,
                                  const std::vector<Output>& state) const override;

 private:
  int64_t units_;
  GruCellOptions options_;
};

struct DynamicRnnOptions {
  bool time_major = false;  // inputs [time, batch, depth] rather than [batch, time, depth]
  // The state at time 0, one tensor per StateSizes(); empty: zeros.
  std::vector<Output> initial_state;
  // The length of each sequence, an int32 or int64 vector [batch]; unset:
  // every sequence runs all the steps. As TF: past its length a sequence's
  // output is zeros and its state stays its last one (final_state holds
  // each sequence's state at its own end), and the loop stops after the
  // longest sequence (at least one step). A vector whose length is not the
  // batch's is an InvalidArgument from an Assert at run time.
  Output sequence_length;
  int parallel_iterations = 32;
  std::string name = "rnn";  // the variable and name scope
};

struct RnnResult {
  Output outputs;                   // [batch, time, output_size] (time-major: [time, ...])
  std::vector<Output> final_state;  // after the last step
};

// tf.nn.dynamic_rnn. The inputs' depth must be known; their batch and
// time may be known only at run time.
absl::StatusOr<RnnResult> DynamicRnn(const Scope& scope, const RnnCell& cell, const Output& inputs,
                                     const DynamicRnnOptions& options = {});

}  // namespace layers
}  // namespace towerflow

#endif  // TOWERFLOW_LAYERS_RECURRENT_H_
