// Fuzzes the readers of what Slurm's commands print and of the job
// script's records (executor/slurm/slurm_commands.h): the input is read as
// the output of sbatch --parsable, squeue, scontrol show job and sacct,
// and each of its lines as a job record; and what they give goes through
// SlurmExit, as a job's end is decided. Besides no crash and no throw: a
// job id is digits (and '_' for an array task), never a step; a squeue row
// has a state and no field spans a separator; exit codes and signals are
// what a shell and Slurm give (0 to 255); a job record's status is the one
// the script wrote, never a number cut to fit; and an end has a cause.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "baton/executor/slurm/slurm_commands.h"
#include "baton/util/json_fields.h"
#include "fuzz/fuzz_checks.h"

namespace {

bool IsJobId(std::string_view id) {
  if (id.empty())
    return false;
  for (char c : id) {
    if (!(c >= '0' && c <= '9') && c != '_')
      return false;
  }
  return true;
}

bool IsByte(int value) {
  return value >= 0 && value <= 255;
}

void CheckEnd(const baton::SlurmEnd& end) {
  FUZZ_CHECK(IsByte(end.exit_code), "Slurm's exit code is 0 to 255");
  FUZZ_CHECK(IsByte(end.signal), "Slurm's signal is 0 to 255");
}

void CheckExit(const std::optional<baton::SlurmEnd>& end,
               const std::optional<baton::JobRecord>& record) {
  for (bool killed : {false, true}) {
    baton::ExitInfo exit = baton::SlurmExit(end, record, killed, "12");
    if (exit.signal)
      FUZZ_CHECK(*exit.signal > 0 && *exit.signal <= 255,
                 "a job's signal is a signal");
    if (exit.exit_code)
      FUZZ_CHECK(IsByte(*exit.exit_code), "a job's exit code is 0 to 255");
    if (killed)
      FUZZ_CHECK(exit.cause == baton::ExitCause::kKilled,
                 "a job baton cancelled ended killed");
  }
}

void CheckRecordLine(std::string_view line,
                     const std::optional<baton::SlurmEnd>& end) {
  auto record = baton::ParseJobRecord(line);
  if (!record)
    return;
  auto parsed = baton::ParseJson(line);
  FUZZ_CHECK(parsed.has_value(), "a job record is JSON");
  const nlohmann::json& status = baton::MemberAt(parsed->value, "status");
  if (status.is_number_integer()) {
    FUZZ_CHECK(record->status == baton::IntAt(parsed->value, "status"),
               "a job record's status is the one written");
  }
  CheckExit(end, record);
  CheckExit(std::nullopt, record);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view out(reinterpret_cast<const char*>(data), size);
  if (auto id = baton::ParseSbatchJobId(out)) {
    FUZZ_CHECK(IsJobId(*id), "sbatch's job id is a job id");
  } else {
    FUZZ_CHECK(!id.error().message.empty(), "a bad sbatch answer says why");
  }
  for (const baton::SqueueRow& row : baton::ParseSqueue(out)) {
    FUZZ_CHECK(IsJobId(row.job_id), "a squeue row's job id is a job id");
    FUZZ_CHECK(!row.state.empty(), "a squeue row has a state");
    for (const std::string* field :
         {&row.state, &row.reason, &row.node, &row.partition}) {
      FUZZ_CHECK(field->find_first_of("|\n") == std::string::npos,
                 "a squeue field stays within its column");
    }
    (void)baton::IsSlurmEndState(row.state);
  }
  auto scontrol = baton::ParseScontrolJob(out);
  if (scontrol) {
    FUZZ_CHECK(!scontrol->state.empty(), "scontrol's end has a state");
    CheckEnd(*scontrol);
  }
  CheckExit(scontrol, std::nullopt);
  std::optional<baton::SlurmEnd> last_end;
  for (const auto& [job_id, end] : baton::ParseSacct(out)) {
    FUZZ_CHECK(IsJobId(job_id), "sacct's rows are jobs, not steps");
    CheckEnd(end);
    CheckExit(end, std::nullopt);
    last_end = end;
  }
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    if (end == std::string_view::npos)
      end = out.size();
    CheckRecordLine(out.substr(start, end - start), last_end);
    start = end + 1;
  }
  return 0;
}
