// Einsum equations ("ab,bc->ac", "...ij,...jk->...ik", "ij->"), parsed
// and resolved against input shapes: shared by Einsum's shape function,
// its CPU kernel and its gradient.
//
// A label is a letter; an ellipsis stands for the leading dims an input
// has beyond its letters, broadcast across inputs NumPy-style (aligned on
// the right). Resolving expands every ellipsis into labels of its own
// (kEllipsisLabel + k for the k-th ellipsis dim counted from the right), so
// the kernel sees only labels. Without "->" the output is the ellipsis
// followed by the letters that occur once, in alphabetical order (NumPy's
// and TensorFlow's implicit mode).
#ifndef TOWERFLOW_CORE_EINSUM_H_
#define TOWERFLOW_CORE_EINSUM_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace towerflow {

constexpr int kEllipsisLabel = 1000;

struct EinsumTerm {
  std::vector<int> labels;  // letters, with kEllipsisLabel where "..." stands
  bool has_ellipsis = false;
};

struct EinsumEquation {
  std::vector<EinsumTerm> inputs;  // one or two
  EinsumTerm output;
};

// Parses `equation` for `num_inputs` inputs (1 or 2); InvalidArgument
// naming what is wrong (a bad character, a second ellipsis, an output label
// no input has, a term count that differs). A label may repeat within a
// term: a diagonal, read from an input ("ii->i") or written into the
// output ("i->ii", zero elsewhere), as TF's Einsum does.
absl::StatusOr<EinsumEquation> ParseEinsum(absl::string_view equation, int num_inputs);

// An equation resolved against input dims: every ellipsis expanded.
struct EinsumDims {
  std::vector<std::vector<int>> inputs;  // per input, one label per dim
  std::vector<int> output;               // one label per output dim
  std::vector<int64_t> output_dims;      // -1 where an input dim is unknown
  std::map<int, int64_t> sizes;          // every label's (broadcast) size
};

// Resolves `eq` for inputs of dims `input_dims` (-1: unknown size). Sizes of
// one label must agree or be 1, which broadcasts (NumPy's rule; the
// gradient relies on it for dims an input broadcast), except that the dims
// of a label repeated within one input (a diagonal) must be equal.
absl::StatusOr<EinsumDims> ResolveEinsum(const EinsumEquation& eq,
                                         const std::vector<std::vector<int64_t>>& input_dims);

// The letters of an equation over resolved labels, mapping each label to a
// letter of its own ("ab,bc->ac" style, no ellipsis); Unimplemented past 52
// labels. For the gradient, which writes new equations over the same labels.
absl::StatusOr<std::string> EinsumLetters(const std::vector<std::vector<int>>& inputs,
                                          const std::vector<int>& output);

}  // namespace towerflow

#endif  // TOWERFLOW_CORE_EINSUM_H_
