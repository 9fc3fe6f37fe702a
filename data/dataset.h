// The input pipeline: tf.data's core in C++.
//
//   TW_ASSIGN_OR_RETURN(Dataset d, Dataset::FromTensorSlices({images, labels}));
//   d = d.Shuffle(/*buffer_size=*/10000, /*seed=*/42).Repeat().Batch(128, true);
//   std::unique_ptr<Iterator> it = d.MakeIterator();
//   TW_ASSIGN_OR_RETURN(std::optional<Element> batch, it->GetNext());  // nullopt: end
//
// A Dataset is an immutable recipe (a value type sharing its stages);
// each MakeIterator() starts a fresh pass with its own state, so one
// dataset can feed training and evaluation. An Element is one example (or
// batch): its components, e.g. {image, label}.
//
// Iterators are not thread-safe: one consumer calls GetNext().
#ifndef TOWERFLOW_DATA_DATASET_H_
#define TOWERFLOW_DATA_DATASET_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/tensor.h"

namespace towerflow {
namespace data {

using Element = std::vector<Tensor>;

class Iterator {
 public:
  virtual ~Iterator() = default;
  // The next element; nullopt at the end of the data (and on every call
  // after it). An error (e.g. DataLoss from a reader) ends the pass too.
  virtual absl::StatusOr<std::optional<Element>> GetNext() = 0;
};

class DatasetBase {
 public:
  virtual ~DatasetBase() = default;
  virtual std::unique_ptr<Iterator> MakeIterator() const = 0;
};

// A function applied to every element by Dataset::Map.
using MapFn = std::function<absl::StatusOr<Element>(Element)>;
// The same with a random generator of the element's own (see RandomMap).
using RandomMapFn = std::function<absl::StatusOr<Element>(Element, std::mt19937_64* rng)>;
class Dataset;
// The dataset an element opens, for Dataset::Interleave.
using InterleaveFn = std::function<absl::StatusOr<Dataset>(const Element&)>;

class Dataset {
 public:
  explicit Dataset(std::shared_ptr<const DatasetBase> impl) : impl_(std::move(impl)) {}

  // Element i holds row i (along dimension 0) of every component.
  // InvalidArgument for no components, a scalar, or differing first
  // dimensions.
  static absl::StatusOr<Dataset> FromTensorSlices(const Element& components);

  // Groups consecutive elements, stacking each component along a new first
  // dimension; the last batch is smaller unless `drop_remainder`. Elements
  // of one batch must agree in dtype and shape (InvalidArgument naming the
  // component otherwise).
  Dataset Batch(int64_t batch_size, bool drop_remainder = false) const;
  // The data `count` times (-1: forever). An empty dataset stays empty.
  Dataset Repeat(int64_t count = -1) const;
  // At most the first `count` elements (-1: all).
  Dataset Take(int64_t count) const;
  // Every num_shards-th element, starting at element `index`: the part of
  // the data one of num_shards workers reads (TF's shard; with MPI, index
  // = rank and num_shards = size). A pass fails with InvalidArgument unless
  // num_shards > 0 and 0 <= index < num_shards.
  Dataset Shard(int64_t num_shards, int64_t index) const;
  // tf.data's interleave: fn opens a dataset for each element (a file
  // name: its records); `cycle_length` of them are read at once, taking
  // `block_length` elements from each in turn, and one that ends is
  // replaced by the next element's. Deterministic. A pass fails with
  // InvalidArgument unless both lengths are at least 1, and with fn's
  // error.
  Dataset Interleave(InterleaveFn fn, int cycle_length, int block_length = 1) const;
  // Draws uniformly from a buffer of `buffer_size` elements refilled from
  // the input: TF's shuffle. Deterministic for a given seed; each pass
  // (iterator) reshuffles with the next seed in the sequence.
  Dataset Shuffle(int64_t buffer_size, uint64_t seed) const;

  // fn(element) for every element, in order. With num_parallel_calls > 1,
  // that many calls run at once on threads of the iterator's own (fn must
  // then be thread-safe); the output order stays the input order. An error
  // from fn ends the pass with that error.
  Dataset Map(MapFn fn, int num_parallel_calls = 1) const;
  // Map for random transformations (augmentation): element i of pass p gets
  // a generator seeded from (seed, p, i), so results depend on the seed
  // alone, not on num_parallel_calls or thread timing, and each pass (epoch)
  // draws afresh.
  Dataset RandomMap(RandomMapFn fn, uint64_t seed, int num_parallel_calls = 1) const;
  // Produces up to `buffer_size` elements ahead on a background thread, so
  // the input's work overlaps the consumer's (tf.data's prefetch). The
  // thread stops when the iterator is destroyed.
  Dataset Prefetch(int64_t buffer_size) const;

  std::unique_ptr<Iterator> MakeIterator() const { return impl_->MakeIterator(); }

 private:
  std::shared_ptr<const DatasetBase> impl_;
};

// Stacks `parts` (same dtype and shape) along a new first dimension.
absl::StatusOr<Tensor> Stack(const std::vector<Tensor>& parts);
// Joins `parts` (same dtype, same dimensions after the first) along the
// first dimension.
absl::StatusOr<Tensor> Concat(const std::vector<Tensor>& parts);

}  // namespace data
}  // namespace towerflow

#endif  // TOWERFLOW_DATA_DATASET_H_
