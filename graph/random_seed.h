// Seeds of random ops, as TensorFlow's random_seed.get_seed derives them.
//
//   graph->set_seed(42);                         // tf.set_random_seed(42)
//   auto [seed, seed2] = GetSeeds(*graph, std::nullopt);
//
// With a graph seed, an op without its own seed gets the graph's node count
// as op seed, so graphs built the same way draw the same numbers. Without
// either, both are 0 ("nondeterministic"). Pure function; thread-compatible.
#ifndef TOWERFLOW_GRAPH_RANDOM_SEED_H_
#define TOWERFLOW_GRAPH_RANDOM_SEED_H_

#include <cstdint>
#include <optional>
#include <utility>

#include "graph/graph.h"

namespace towerflow {

// TensorFlow's DEFAULT_GRAPH_SEED, used when only the op has a seed.
inline constexpr int64_t kDefaultGraphSeed = 87654321;

// The (seed, seed2) attrs for a random op about to be added to `graph`.
std::pair<int64_t, int64_t> GetSeeds(const Graph& graph, std::optional<int64_t> op_seed);

}  // namespace towerflow

#endif  // TOWERFLOW_GRAPH_RANDOM_SEED_H_
