// What a task asks of a Slurm cluster, in Slurm's terms: the options of
// its RemoteRequest (core/task.h) when it runs there. The front ends fill
// it (through SlurmFields of a run or delegate request, and the config's
// `[executors.slurm]`), executor/slurm/ reads it; core/ never does.
#ifndef BATON_IPC_SLURM_REQUEST_H_
#define BATON_IPC_SLURM_REQUEST_H_

#include <cstdint>
#include <string>
#include <vector>

#include "baton/core/task.h"
#include "baton/util/result.h"

namespace baton {

// RemoteRequest::executor of a task on Slurm.
inline constexpr char kSlurmExecutor[] = "slurm";

// What a task asks of a Slurm cluster when it runs there as a job
// (doc/slurm.md). Empty fields leave the cluster's defaults (or those of
// `[executors.slurm]` in baton's config, filled in by batond).
struct SlurmRequest {
  std::string partition;
  std::string account;
  int64_t time_limit_s = 0;  // --time; 0 = the partition's limit.
  int64_t cpus = 0;          // --cpus-per-task; 0 = Slurm's default.
  std::string mem;           // --mem, Slurm's syntax: "4G", "512M".
  std::string gres;          // --gres, e.g. "gpu:1".
  std::vector<std::string> sbatch_args;  // Passed to sbatch as they are.
  // Where the job's files go (its script, output and exit record): a
  // folder every node sees. Empty = batond's own tasks folder.
  std::string shared_dir;
  // The submitting client's SLURM_CONF and PATH, with which every later
  // call about the job runs (status, cancel), also after a batond restart.
  std::string slurm_conf;
  std::string path;

  bool operator==(const SlurmRequest&) const = default;
  template <class V>
  void Fields(V& v) {
    v("partition", partition, {.omit_when_empty = true});
    v("account", account, {.omit_when_empty = true});
    v("time_limit_s", time_limit_s, {.min = 0});
    v("cpus", cpus, {.min = 0});
    v("mem", mem, {.omit_when_empty = true});
    v("gres", gres, {.omit_when_empty = true});
    v("sbatch_args", sbatch_args, {.omit_when_empty = true});
    v("shared_dir", shared_dir, {.omit_when_empty = true});
    v("slurm_conf", slurm_conf, {.omit_when_empty = true});
    v("path", path, {.omit_when_empty = true});
  }
};

// `request` as a task's RemoteRequest.
RemoteRequest ToRemote(const SlurmRequest& request);
// The Slurm request of a task on Slurm; nullopt for a task elsewhere, an
// error for options that are not a SlurmRequest (a store written by
// another build).
Result<std::optional<SlurmRequest>> SlurmRequestOf(const TaskSpec& spec);

}  // namespace baton

#endif  // BATON_IPC_SLURM_REQUEST_H_
