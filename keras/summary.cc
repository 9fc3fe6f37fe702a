// keras::ModelImpl::Summary: Keras's print_summary tables.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "keras/model.h"
#include "keras/model_internal.h"

namespace towerflow {
namespace keras {

using internal::ModelImpl;

using Topology = internal::ModelTopology;
using internal::ShapeTuple;

// ---- Summary --------------------------------------------------------------------------

namespace {

// Keras's print_row: each field cut at its column and padded to it, a
// field running into the next column losing its last character to a space.
std::string Row(const std::vector<std::string>& fields, const std::vector<int>& positions) {
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) line = line.substr(0, line.size() - 1) + " ";
    line += fields[i];
    line = line.substr(0, positions[i]);
    line += std::string(positions[i] - line.size(), ' ');
  }
  return line + "\n";
}

std::string Commas(int64_t v) {
  std::string digits = absl::StrCat(v), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// Whether Keras prints the model as a chain: one input, each layer called
// once on the previous call's output.
bool SequentialLike(const Topology& t) {
  if (t.sequential) return true;
  if (t.inputs.size() != 1 || t.outputs.size() != 1 || t.calls.size() != t.layers.size()) {
    return false;
  }
  for (size_t k = 0; k < t.calls.size(); ++k) {
    if (t.calls[k].inputs != std::vector<size_t>{t.inputs.size() + k - 1}) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::string> ModelImpl::Summary() {
  TW_RETURN_IF_ERROR(Build(nullptr));
  const Built& b = *built_;
  const Topology& t = *topology_;
  const size_t num_inputs = t.inputs.size();
  const bool chain = SequentialLike(t);
  // Keras's columns: 65 wide for a chain, else 98 with the connections.
  const int line_length = chain ? 65 : 98;
  const std::vector<int> positions =
      chain ? std::vector<int>{29, 55, 65} : std::vector<int>{32, 53, 65, 98};
  std::vector<std::string> header = {"Layer (type)", "Output Shape", "Param #"};
  if (!chain) header.push_back("Connected to");

  // Rows: the input layers (but a Sequential's) and the layers, ordered as
  // Keras orders a network's layers: by decreasing depth from the outputs,
  // then by when a walk from the outputs first meets them.
  struct Entry {
    int layer;  // -1: input `input`
    size_t input = 0;
    int depth = 0;
    int index = 0;
  };
  std::vector<int> depth(num_inputs + t.calls.size(), 0);
  for (size_t k = t.calls.size(); k-- > 0;) {
    for (size_t u : t.calls[k].inputs) {
      depth[u] = std::max(depth[u], depth[num_inputs + k] + 1);
    }
  }
  std::vector<int> found(num_inputs + t.layers.size(), -1);  // inputs, then layers
  int next_index = 0;
  std::vector<bool> seen(depth.size(), false);
  for (const Topology::Out& out : t.outputs) {
    std::vector<size_t> stack = {out.value};
    while (!stack.empty()) {
      const size_t v = stack.back();
      stack.pop_back();
      if (seen[v]) continue;
      seen[v] = true;
      const size_t slot = v < num_inputs ? v : num_inputs + t.calls[v - num_inputs].layer;
      if (found[slot] < 0) found[slot] = next_index++;
      if (v >= num_inputs) {
        const auto& in = t.calls[v - num_inputs].inputs;
        for (auto it = in.rbegin(); it != in.rend(); ++it) stack.push_back(*it);
      }
    }
  }
  std::vector<Entry> entries;
  if (!t.sequential) {
    for (size_t i = 0; i < num_inputs; ++i) entries.push_back({-1, i, depth[i], found[i]});
  }
  for (size_t l = 0; l < t.layers.size(); ++l) {
    Entry e{static_cast<int>(l), 0, 0, found[num_inputs + l]};
    for (size_t k = 0; k < t.calls.size(); ++k) {
      if (t.calls[k].layer == l) e.depth = std::max(e.depth, depth[num_inputs + k]);
    }
    entries.push_back(e);
  }
  if (!chain) {
    std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
      return a.depth != b.depth ? a.depth > b.depth : a.index < b.index;
    });
  }

  std::string s = absl::StrCat("Model: \"", name_, "\"\n", std::string(line_length, '_'), "\n");
  s += Row(header, positions);
  s += std::string(line_length, '=') + "\n";
  int64_t trainable = 0, frozen = 0;
  // The layers' weights only: not the optimizer's slots ("dense/kernel/Adam").
  const std::vector<Variable>& variables = b.weights;
  for (size_t e = 0; e < entries.size(); ++e) {
    const Entry& entry = entries[e];
    std::vector<std::string> fields;
    std::vector<std::string> connections;
    if (entry.layer < 0) {
      fields = {absl::StrCat(t.inputs[entry.input].name, " (InputLayer)"),
                ShapeTuple(b.inputs[entry.input][0].shape()), "0"};
    } else {
      const std::string& name = t.layer_names[entry.layer];
      int64_t params = 0;
      for (const Variable& v : variables) {
        if (!absl::StartsWith(v.name(), name + "/")) continue;
        params += v.shape().num_elements();
        (v.trainable() ? trainable : frozen) += v.shape().num_elements();
      }
      // Its output shape: the same from every call, or "multiple".
      std::string shape;
      for (size_t k = 0; k < t.calls.size(); ++k) {
        if (static_cast<int>(t.calls[k].layer) != entry.layer) continue;
        const Output& out = b.call_outputs[k];
        const std::string this_shape = out.valid() ? ShapeTuple(out.shape()) : "multiple";
        shape = shape.empty() || shape == this_shape ? this_shape : "multiple";
        for (size_t u : t.calls[k].inputs) {
          const int node = u < num_inputs ? 0 : t.calls[u - num_inputs].node_index;
          connections.push_back(absl::StrCat(t.ProducerName(u), "[", node, "][0]"));
        }
      }
      fields = {absl::StrCat(name, " (", t.layers[entry.layer].class_name(), ")"), shape,
                absl::StrCat(params)};
    }
    if (!chain) fields.push_back(connections.empty() ? "" : connections[0]);
    s += Row(fields, positions);
    for (size_t c = 1; !chain && c < connections.size(); ++c) {
      s += Row({"", "", "", connections[c]}, positions);
    }
    s += std::string(line_length, e + 1 == entries.size() ? '=' : '_') + "\n";
  }
  absl::StrAppend(&s, "Total params: ", Commas(trainable + frozen), "\n",
                  "Trainable params: ", Commas(trainable), "\n",
                  "Non-trainable params: ", Commas(frozen), "\n", std::string(line_length, '_'),
                  "\n");
  return s;
}

}  // namespace keras
}  // namespace towerflow
