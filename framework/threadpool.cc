#include "framework/threadpool.h"

#include <algorithm>
#include <thread>
#include <utility>

#include "unsupported/Eigen/CXX11/Tensor"
#include "unsupported/Eigen/CXX11/ThreadPool"

namespace towerflow {

ThreadPool::ThreadPool(std::string name, int num_threads)
    : name_(std::move(name)),
      pool_(std::make_unique<Eigen::ThreadPool>(std::max(1, num_threads))),
      device_(std::make_unique<Eigen::ThreadPoolDevice>(pool_.get(), std::max(1, num_threads))) {}

ThreadPool::~ThreadPool() {
  device_.reset();
  pool_.reset();  // Eigen's pool drains its queues and joins
}

int ThreadPool::NumThreads() const { return pool_->NumThreads(); }

void ThreadPool::Schedule(std::function<void()> fn) { pool_->Schedule(std::move(fn)); }

void ThreadPool::ParallelFor(int64_t total, int64_t cost_per_unit,
                             const std::function<void(int64_t, int64_t)>& fn) {
  if (total <= 0) return;
  if (total == 1 || NumThreads() == 1) {
    fn(0, total);
    return;
  }
  // Eigen sizes the shards from the cost: cheap loops stay on one thread.
  const Eigen::TensorOpCost cost(0, 0, static_cast<double>(cost_per_unit));
  device_->parallelFor(static_cast<Eigen::Index>(total), cost,
                       [&fn](Eigen::Index begin, Eigen::Index end) { fn(begin, end); });
}

int DefaultNumThreads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

}  // namespace towerflow
