#include "baton/mcp/tools/start_arguments.h"

#include <cmath>

namespace baton::mcp {

RetryFields RetryArguments::ToWire() const {
  RetryFields wire;
  wire.retries = retries;
  if (retry_delay_s)
    wire.retry_delay_ms = std::llround(retry_delay_s->value * 1000);
  return wire;
}

LimitFields LimitArguments::ToWire() const {
  LimitFields wire;
  if (memory)
    wire.memory_bytes = memory->bytes;
  wire.cpus = cpus;
  wire.pids = pids;
  return wire;
}

}  // namespace baton::mcp
