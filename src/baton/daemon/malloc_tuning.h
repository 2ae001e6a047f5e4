// batond's allocator settings. glibc reads its tunables once, when a process
// starts, so batond re-executes itself once with them set (ARCHITECTURE.md;
// the measurement is in doc/benchmarks.md, "Profiles of the misses").
#ifndef BATON_DAEMON_MALLOC_TUNING_H_
#define BATON_DAEMON_MALLOC_TUNING_H_

namespace baton {

// The tunables batond runs with:
// - glibc's per-thread cache of freed small chunks holds up to 65,535 per
//   size instead of 7. Freeing a request of a thousand ids frees thousands
//   of small chunks; beyond the cache, glibc merges and sorts them at the
//   next larger allocation, which is the one answering the wait (0.2 ms on
//   this machine). Cached chunks are reused as they are.
// - The heap is given back to the kernel only past 8 MiB free at its top,
//   and only requests of 2 MiB or more get their own mapping. With glibc's
//   defaults (a threshold that starts at 128 KiB and moves up only after a
//   large block was freed), a queue's dispatch grew the heap by about
//   170 KiB three times and trimmed it back each time, fresh pages faulted
//   in one by one: the dispatch gap went from 3.65 to 7.0 ms once no large
//   block kept the thresholds up (doc/scheduling.md, "Performance").
inline constexpr char kDaemonMallocTunables[] =
    "glibc.malloc.tcache_count=65535:glibc.malloc.trim_threshold=8388608:"
    "glibc.malloc.mmap_threshold=2097152";

// Call first thing in batond's main. In a process started without the
// tunables, adds them to GLIBC_TUNABLES (before the user's own, which win)
// and re-executes itself with the same `argv`; returns only if that
// exec fails, and batond then runs untuned. In the re-executed process,
// puts GLIBC_TUNABLES back as the user had it, so tasks started with
// batond's environment do not inherit ours.
void ReexecWithMallocTunables(char** argv);

}  // namespace baton

#endif  // BATON_DAEMON_MALLOC_TUNING_H_
