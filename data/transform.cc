// Dataset::Map, RandomMap and Prefetch: the stages that run work on threads.
#include <atomic>
#include <deque>
#include <memory>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "core/status_macros.h"
#include "data/dataset.h"
#include "framework/threadpool.h"

namespace towerflow {
namespace data {
namespace {

// SplitMix64's finaliser: decorrelates nearby seeds.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

using Result = absl::StatusOr<std::optional<Element>>;

// ------------------------------------------------------------ map

// fn(element, index); `index` counts the elements of the pass.
using IndexedFn = std::function<absl::StatusOr<Element>(Element, uint64_t index)>;

class MapDataset final : public DatasetBase {
 public:
  // make_fn(k) is the function of the k-th iterator (pass k; RandomMap
  // seeds from it).
  MapDataset(Dataset input, std::function<IndexedFn(uint64_t pass)> make_fn, int num_parallel_calls)
      : input_(std::move(input)),
        make_fn_(std::move(make_fn)),
        num_parallel_calls_(num_parallel_calls) {}

  std::unique_ptr<Iterator> MakeIterator() const override {
    return std::make_unique<It>(input_.MakeIterator(), make_fn_(passes_++), num_parallel_calls_);
  }

 private:
  // One element's call, finished by a pool thread.
  struct Pending {
    absl::Mutex mu;
    bool done ABSL_GUARDED_BY(mu) = false;
    absl::StatusOr<Element> result ABSL_GUARDED_BY(mu) = absl::UnknownError("not run");
  };

  class It final : public Iterator {
   public:
    It(std::unique_ptr<Iterator> input, IndexedFn fn, int num_parallel_calls)
        : input_(std::move(input)), fn_(std::move(fn)), parallel_(num_parallel_calls) {
      if (parallel_ > 1) pool_ = std::make_unique<ThreadPool>("map", parallel_);
    }
    // The pool's destructor runs what was scheduled: no call outlives the
    // Pending objects it writes, which the closures share.
    ~It() override { pool_.reset(); }

    Result GetNext() override {
      if (parallel_ < 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("Map: num_parallel_calls must be at least 1, got ", parallel_));
      }
      if (failed_) return std::nullopt;
      Result out = Next();
      failed_ = !out.ok();
      return out;
    }

   private:
    Result Next() {
      if (pool_ == nullptr) {
        TW_ASSIGN_OR_RETURN(std::optional<Element> e, input_->GetNext());
        if (!e.has_value()) return std::nullopt;
        TW_ASSIGN_OR_RETURN(Element out, fn_(*std::move(e), index_++));
        return std::optional<Element>(std::move(out));
      }
      // Keep `parallel_` calls in flight, then take the oldest.
      while (!input_done_ && static_cast<int>(in_flight_.size()) < parallel_) {
        absl::StatusOr<std::optional<Element>> e = input_->GetNext();
        if (!e.ok() || !e->has_value()) {
          input_done_ = true;
          if (!e.ok()) input_error_ = e.status();
          break;
        }
        auto pending = std::make_shared<Pending>();
        pool_->Schedule([fn = &fn_, pending, element = **std::move(e), i = index_++]() mutable {
          absl::StatusOr<Element> r = (*fn)(std::move(element), i);
          absl::MutexLock lock(&pending->mu);
          pending->result = std::move(r);
          pending->done = true;
        });
        in_flight_.push_back(std::move(pending));
      }
      if (in_flight_.empty()) {
        if (!input_error_.ok()) return std::exchange(input_error_, absl::OkStatus());
        return std::nullopt;
      }
      std::shared_ptr<Pending> front = std::move(in_flight_.front());
      in_flight_.pop_front();
      absl::MutexLock lock(&front->mu);
      front->mu.Await(absl::Condition(&front->done));
      TW_ASSIGN_OR_RETURN(Element out, std::move(front->result));
      return std::optional<Element>(std::move(out));
    }

    std::unique_ptr<Iterator> input_;
    const IndexedFn fn_;
    const int parallel_;
    std::unique_ptr<ThreadPool> pool_;
    std::deque<std::shared_ptr<Pending>> in_flight_;
    absl::Status input_error_;
    bool input_done_ = false;
    bool failed_ = false;  // an error ends the pass
    uint64_t index_ = 0;
  };

  const Dataset input_;
  const std::function<IndexedFn(uint64_t)> make_fn_;
  const int num_parallel_calls_;
  mutable std::atomic<uint64_t> passes_{0};
};

// ------------------------------------------------------------ prefetch

class PrefetchDataset final : public DatasetBase {
 public:
  PrefetchDataset(Dataset input, int64_t buffer_size)
      : input_(std::move(input)), buffer_size_(buffer_size) {}

  std::unique_ptr<Iterator> MakeIterator() const override {
    return std::make_unique<It>(input_.MakeIterator(), buffer_size_);
  }

 private:
  class It final : public Iterator {
   public:
    It(std::unique_ptr<Iterator> input, int64_t buffer_size)
        : input_(std::move(input)), buffer_size_(buffer_size) {
      if (buffer_size_ > 0) thread_ = std::thread([this] { Produce(); });
    }
    ~It() override {
      {
        absl::MutexLock lock(&mu_);
        cancelled_ = true;
      }
      if (thread_.joinable()) thread_.join();
    }

    Result GetNext() override {
      if (buffer_size_ <= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("Prefetch buffer size must be greater than zero, got ", buffer_size_));
      }
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](It* it) ABSL_EXCLUSIVE_LOCKS_REQUIRED(it->mu_) {
            return !it->buffer_.empty() || it->finished_;
          },
          this));
      if (buffer_.empty()) return std::nullopt;  // finished, and everything consumed
      Result out = std::move(buffer_.front());
      buffer_.pop_front();
      return out;
    }

   private:
    // The background thread: fills the buffer until the input ends, fails
    // or the iterator goes away. An error is queued after the elements
    // before it, then the pass ends.
    void Produce() {
      while (true) {
        {
          absl::MutexLock lock(&mu_);
          mu_.Await(absl::Condition(
              +[](It* it) ABSL_EXCLUSIVE_LOCKS_REQUIRED(it->mu_) {
                return it->cancelled_ ||
                       static_cast<int64_t>(it->buffer_.size()) < it->buffer_size_;
              },
              this));
          if (cancelled_) return;
        }
        Result next = input_->GetNext();
        const bool last = !next.ok() || !next->has_value();
        absl::MutexLock lock(&mu_);
        if (!last || !next.ok()) buffer_.push_back(std::move(next));
        if (last) {
          finished_ = true;
          return;
        }
      }
    }

    std::unique_ptr<Iterator> input_;  // used by the background thread only
    const int64_t buffer_size_;
    absl::Mutex mu_;
    std::deque<Result> buffer_ ABSL_GUARDED_BY(mu_);
    bool finished_ ABSL_GUARDED_BY(mu_) = false;
    bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
    std::thread thread_;
  };

  const Dataset input_;
  const int64_t buffer_size_;
};

}  // namespace

Dataset Dataset::Map(MapFn fn, int num_parallel_calls) const {
  auto make_fn = [fn = std::move(fn)](uint64_t /*pass*/) -> IndexedFn {
    return [fn](Element e, uint64_t /*index*/) { return fn(std::move(e)); };
  };
  return Dataset(std::make_shared<MapDataset>(*this, std::move(make_fn), num_parallel_calls));
}

Dataset Dataset::RandomMap(RandomMapFn fn, uint64_t seed, int num_parallel_calls) const {
  auto make_fn = [fn = std::move(fn), seed](uint64_t pass) -> IndexedFn {
    const uint64_t pass_seed = Mix(Mix(seed) ^ pass);
    return [fn, pass_seed](Element e, uint64_t index) {
      std::mt19937_64 rng(Mix(pass_seed ^ Mix(index)));
      return fn(std::move(e), &rng);
    };
  };
  return Dataset(std::make_shared<MapDataset>(*this, std::move(make_fn), num_parallel_calls));
}

Dataset Dataset::Prefetch(int64_t buffer_size) const {
  return Dataset(std::make_shared<PrefetchDataset>(*this, buffer_size));
}

}  // namespace data
}  // namespace towerflow
