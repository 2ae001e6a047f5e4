// The Timers port: one-shot timers on the loop thread. An interface so that
// core's registry can be driven by a fake in tests; loop/'s EventLoop is the
// real one. Here in util, not in core/ports.h, because loop/ implements it
// and loop/ depends only on util (src/baton/layers.txt).
#ifndef BATON_UTIL_TIMERS_H_
#define BATON_UTIL_TIMERS_H_

#include <cstdint>
#include <functional>

#include "baton/util/clock.h"

namespace baton {

using TimerId = uint64_t;

// One-shot timers on the loop thread.
class Timers {
 public:
  virtual ~Timers() = default;
  virtual TimerId Schedule(MonoTime when, std::function<void()> callback) = 0;
  // Cancelling a timer that already fired or was cancelled is a no-op.
  virtual void Cancel(TimerId id) = 0;
};

}  // namespace baton

#endif  // BATON_UTIL_TIMERS_H_
