// ThreadPool: the inter-op and intra-op pools of a session's devices.
//
// A thin owner of Eigen's non-blocking work-stealing pool (TensorFlow's own
// CPU pool). Schedule() runs closures; ParallelFor() shards a loop across the
// pool and the calling thread and returns when every shard is done, which is
// how kernels use intra-op parallelism. eigen_device() lets Eigen tensor
// expressions run on the pool directly:
//
//   out.device(pool->eigen_device()) = a + b;
//
// Thread-safe. The pool joins its threads on destruction, after running what
// was scheduled.
#ifndef TOWERFLOW_FRAMEWORK_THREADPOOL_H_
#define TOWERFLOW_FRAMEWORK_THREADPOOL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

// Eigen's types, complete in threadpool.cc and wherever Eigen's Tensor
// module is included (framework/tensor_views.h): the files that only hold
// a pool are spared compiling it.
namespace Eigen {
class ThreadPoolInterface;
struct ThreadPoolDevice;
}  // namespace Eigen

namespace towerflow {

class ThreadPool {
 public:
  // REQUIRES: num_threads >= 1.
  ThreadPool(std::string name, int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  const std::string& name() const { return name_; }
  int NumThreads() const;

  void Schedule(std::function<void()> fn);

  // Runs fn(begin, end) over shards covering [0, total), in parallel when
  // `cost_per_unit` (roughly CPU cycles per element) makes it worth it.
  // Returns when all shards are done. fn must be safe to call concurrently
  // on disjoint ranges.
  void ParallelFor(int64_t total, int64_t cost_per_unit,
                   const std::function<void(int64_t, int64_t)>& fn);

  const Eigen::ThreadPoolDevice& eigen_device() const { return *device_; }

 private:
  const std::string name_;
  std::unique_ptr<Eigen::ThreadPoolInterface> pool_;
  std::unique_ptr<Eigen::ThreadPoolDevice> device_;
};

// The number of hardware threads, at least 1.
int DefaultNumThreads();

}  // namespace towerflow

#endif  // TOWERFLOW_FRAMEWORK_THREADPOOL_H_
