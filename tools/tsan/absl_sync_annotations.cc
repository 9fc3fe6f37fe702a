// Happens-before edges for ThreadSanitizer through Debian's Abseil.
//
// Debian's libabsl_synchronization is compiled without -fsanitize=thread, so
// TSan cannot see that absl::Mutex, absl::CondVar and absl::Notification
// order the memory accesses around them, and every access guarded by an
// absl::Mutex would be reported as a race (and absl::Status's shared
// representation, freed after an atomic decrement inside libabsl_status, as
// a race with its last readers). This library, linked into the
// test binaries of `--config=tsan` only (.bazelrc), defines the entry points
// of those classes in the executable; `-rdynamic` makes the shared library's
// own calls (Notification::Notify locks its Mutex through the PLT) bind to
// them as well. Each forwards to Abseil's definition (dlsym RTLD_NEXT) and
// tells TSan what it did, as Abseil's own TSan build would:
//
//   acquiring (Lock, TryLock true, LockWhen, the return of Await/Wait):
//       __tsan_acquire(mutex) after the real call;
//   releasing (Unlock, the start of Await/Wait):
//       __tsan_release(mutex) before the real call.
//
// Abseil evaluates the Condition of an Await/LockWhen inside the library,
// with the mutex held, on the waiting thread or on the thread that unlocks.
// The shim passes Abseil a wrapped condition that acquires the mutex for TSan
// before calling the user's and releases it after, so the condition's reads
// are ordered with the writes of every other holder. Notification::Notify
// releases the notification and a WaitForNotification that returns true
// acquires it (its fast path is an atomic load inside the library).
//
// Only the functions Abseil defines out of line need this; inline ones are
// compiled into instrumented code. A missing symbol (another Abseil version)
// is a fatal error naming it, not a silent gap.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "absl/base/options.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

extern "C" {
void __tsan_acquire(void* addr);
void __tsan_release(void* addr);

// TSan reads these at start-up (TSAN_OPTIONS overrides the options). A race
// report ends the program; huge allocations (the bad-input tests ask for
// terabytes) fail as they do outside TSan instead of exhausting its heap.
const char* __tsan_default_options() {
  return "halt_on_error=1:second_deadlock_stack=1:allocator_may_return_null=1:"
         "max_allocation_size_mb=4096";
}

// Reports that stem from synchronisation inside uninstrumented Debian
// libraries, which TSan cannot see (each seen in the tests):
// - Abseil's deadlock detector (GraphCycles) guards its graph with a
//   SpinLock inside libabsl_graphcycles_internal.
// - oneDNN publishes its primitive cache entries (and the rwlocks in them)
//   to other threads through its own atomics; the inline dnnl:: C++ API
//   then reads them from instrumented code.
// A frame in either stack of a report matching a line suppresses it; none
// matches Towerflow's own code.
const char* __tsan_default_suppressions() {
  return "race:absl::*::synchronization_internal::GraphCycles::\n"
         "race:libdnnl.so\n"
         "race:dnnl::primitive_desc_base::\n";
}
}

namespace {

#define TW_STRINGIFY_INNER(x) #x
#define TW_STRINGIFY(x) TW_STRINGIFY_INNER(x)

// The Itanium mangling of `absl::<inline namespace>::<rest>`: `rest` is the
// mangled tail after the namespaces, e.g. "5Mutex4LockEv". `konst` marks a
// const member function.
std::string Mangle(const char* rest, bool konst = false) {
  std::string name = konst ? "_ZNK4absl" : "_ZN4absl";
#if ABSL_OPTION_USE_INLINE_NAMESPACE
  const std::string ns = TW_STRINGIFY(ABSL_OPTION_INLINE_NAMESPACE_NAME);
  name += std::to_string(ns.size()) + ns;
#endif
  return name + rest;
}

void* Real(const char* rest, bool konst = false) {
  const std::string name = Mangle(rest, konst);
  void* fn = dlsym(RTLD_NEXT, name.c_str());
  if (fn == nullptr) {
    std::fprintf(stderr,
                 "tools/tsan/absl_sync_annotations: %s not found in the "
                 "Abseil libraries: update the shim for this Abseil\n",
                 name.c_str());
    std::abort();
  }
  return fn;
}

template <typename Fn>
Fn RealFn(const char* rest, bool konst = false) {
  return reinterpret_cast<Fn>(Real(rest, konst));
}

// A user's condition, evaluated as a holder of `mu` in TSan's eyes.
class AnnotatedCondition {
 public:
  AnnotatedCondition(const absl::Condition& inner, absl::Mutex* mu)
      : inner_(inner), mu_(mu), condition_(&AnnotatedCondition::Eval, this) {}
  const absl::Condition& condition() const { return condition_; }

 private:
  static bool Eval(AnnotatedCondition* self) {
    __tsan_acquire(self->mu_);
    const bool met = self->inner_.Eval();
    __tsan_release(self->mu_);
    return met;
  }

  const absl::Condition& inner_;
  absl::Mutex* const mu_;
  const absl::Condition condition_;
};

}  // namespace

namespace absl {
ABSL_NAMESPACE_BEGIN

void Mutex::Lock() {
  static const auto real = RealFn<void (*)(Mutex*)>("5Mutex4LockEv");
  real(this);
  __tsan_acquire(this);
}

void Mutex::ReaderLock() {
  static const auto real = RealFn<void (*)(Mutex*)>("5Mutex10ReaderLockEv");
  real(this);
  __tsan_acquire(this);
}

bool Mutex::TryLock() {
  static const auto real = RealFn<bool (*)(Mutex*)>("5Mutex7TryLockEv");
  const bool locked = real(this);
  if (locked) __tsan_acquire(this);
  return locked;
}

bool Mutex::ReaderTryLock() {
  static const auto real = RealFn<bool (*)(Mutex*)>("5Mutex13ReaderTryLockEv");
  const bool locked = real(this);
  if (locked) __tsan_acquire(this);
  return locked;
}

void Mutex::Unlock() {
  static const auto real = RealFn<void (*)(Mutex*)>("5Mutex6UnlockEv");
  __tsan_release(this);
  real(this);
}

void Mutex::ReaderUnlock() {
  static const auto real = RealFn<void (*)(Mutex*)>("5Mutex12ReaderUnlockEv");
  __tsan_release(this);
  real(this);
}

void Mutex::LockWhen(const Condition& cond) {
  static const auto real =
      RealFn<void (*)(Mutex*, const Condition&)>("5Mutex8LockWhenERKNS0_9ConditionE");
  real(this, AnnotatedCondition(cond, this).condition());
  __tsan_acquire(this);
}

void Mutex::ReaderLockWhen(const Condition& cond) {
  static const auto real =
      RealFn<void (*)(Mutex*, const Condition&)>("5Mutex14ReaderLockWhenERKNS0_9ConditionE");
  real(this, AnnotatedCondition(cond, this).condition());
  __tsan_acquire(this);
}

bool Mutex::LockWhenWithTimeout(const Condition& cond, absl::Duration timeout) {
  static const auto real = RealFn<bool (*)(Mutex*, const Condition&, absl::Duration)>(
      "5Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  const bool met = real(this, AnnotatedCondition(cond, this).condition(), timeout);
  __tsan_acquire(this);  // The mutex is held either way.
  return met;
}

bool Mutex::LockWhenWithDeadline(const Condition& cond, absl::Time deadline) {
  static const auto real = RealFn<bool (*)(Mutex*, const Condition&, absl::Time)>(
      "5Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  const bool met = real(this, AnnotatedCondition(cond, this).condition(), deadline);
  __tsan_acquire(this);
  return met;
}

void Mutex::Await(const Condition& cond) {
  static const auto real =
      RealFn<void (*)(Mutex*, const Condition&)>("5Mutex5AwaitERKNS0_9ConditionE");
  __tsan_release(this);
  real(this, AnnotatedCondition(cond, this).condition());
  __tsan_acquire(this);
}

bool Mutex::AwaitWithTimeout(const Condition& cond, absl::Duration timeout) {
  static const auto real = RealFn<bool (*)(Mutex*, const Condition&, absl::Duration)>(
      "5Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  __tsan_release(this);
  const bool met = real(this, AnnotatedCondition(cond, this).condition(), timeout);
  __tsan_acquire(this);
  return met;
}

bool Mutex::AwaitWithDeadline(const Condition& cond, absl::Time deadline) {
  static const auto real = RealFn<bool (*)(Mutex*, const Condition&, absl::Time)>(
      "5Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  __tsan_release(this);
  const bool met = real(this, AnnotatedCondition(cond, this).condition(), deadline);
  __tsan_acquire(this);
  return met;
}

void CondVar::Wait(Mutex* mu) {
  static const auto real = RealFn<void (*)(CondVar*, Mutex*)>("7CondVar4WaitEPNS0_5MutexE");
  __tsan_release(mu);
  real(this, mu);
  __tsan_acquire(mu);
}

bool CondVar::WaitWithTimeout(Mutex* mu, absl::Duration timeout) {
  static const auto real = RealFn<bool (*)(CondVar*, Mutex*, absl::Duration)>(
      "7CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE");
  __tsan_release(mu);
  const bool timed_out = real(this, mu, timeout);
  __tsan_acquire(mu);
  return timed_out;
}

bool CondVar::WaitWithDeadline(Mutex* mu, absl::Time deadline) {
  static const auto real = RealFn<bool (*)(CondVar*, Mutex*, absl::Time)>(
      "7CondVar16WaitWithDeadlineEPNS0_5MutexENS0_4TimeE");
  __tsan_release(mu);
  const bool timed_out = real(this, mu, deadline);
  __tsan_acquire(mu);
  return timed_out;
}

void Notification::Notify() {
  static const auto real = RealFn<void (*)(Notification*)>("12Notification6NotifyEv");
  __tsan_release(this);
  real(this);
}

void Notification::WaitForNotification() const {
  static const auto real =
      RealFn<void (*)(const Notification*)>("12Notification19WaitForNotificationEv", true);
  real(this);
  __tsan_acquire(const_cast<Notification*>(this));
}

bool Notification::WaitForNotificationWithTimeout(absl::Duration timeout) const {
  static const auto real = RealFn<bool (*)(const Notification*, absl::Duration)>(
      "12Notification30WaitForNotificationWithTimeoutENS0_8DurationE", true);
  const bool notified = real(this, timeout);
  if (notified) __tsan_acquire(const_cast<Notification*>(this));
  return notified;
}

bool Notification::WaitForNotificationWithDeadline(absl::Time deadline) const {
  static const auto real = RealFn<bool (*)(const Notification*, absl::Time)>(
      "12Notification31WaitForNotificationWithDeadlineENS0_4TimeE", true);
  const bool notified = real(this, deadline);
  if (notified) __tsan_acquire(const_cast<Notification*>(this));
  return notified;
}

// absl::Status shares its heap representation between copies and frees it
// after an atomic decrement inside libabsl_status, which TSan does not see:
// the free would be reported against the reads of every other thread that
// held a copy. Serialising the releases of one representation on a mutex
// (intercepted by TSan) orders each thread's reads before the last release.
void Status::UnrefNonInlined(uintptr_t rep) {
  static const auto real = RealFn<void (*)(uintptr_t)>("6Status15UnrefNonInlinedEm");
  static std::mutex stripes[64];
  std::lock_guard<std::mutex> lock(stripes[(rep >> 4) % 64]);
  real(rep);
}

ABSL_NAMESPACE_END
}  // namespace absl
