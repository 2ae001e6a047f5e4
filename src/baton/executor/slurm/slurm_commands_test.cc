#include "baton/executor/slurm/slurm_commands.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace baton {
namespace {

TaskRecord SlurmTask() {
  TaskRecord task;
  task.id = TaskId{TaskKind::kShell, 7};
  task.spec.cwd = "/work/it's here";
  task.spec.shell_command = "echo 'hi' && exit 3";
  task.spec.remote = ToRemote(SlurmRequest{.partition = "debug",
                                           .time_limit_s = 61,
                                           .cpus = 2,
                                           .mem = "1G",
                                           .gres = "gpu:1",
                                           .sbatch_args = {"--qos=high"}});
  return task;
}

TEST(SlurmCommandsTest, SbatchArgvCarriesTheRequestAndRoundsTheTimeUp) {
  TaskRecord task = SlurmTask();
  auto argv = SbatchArgv(task, "baton-x-shell-7", "/d/job.sh", "/d/out", false);
  std::vector<std::string> want = {"sbatch",
                                   "--parsable",
                                   "--job-name=baton-x-shell-7",
                                   "--chdir=/work/it's here",
                                   "--output=/d/out",
                                   "--open-mode=append",
                                   "--export=ALL",
                                   "--partition=debug",
                                   "--time=2",
                                   "--cpus-per-task=2",
                                   "--mem=1G",
                                   "--gres=gpu:1",
                                   "--qos=high",
                                   "/d/job.sh"};
  EXPECT_EQ(argv, want);
  auto test = SbatchArgv(task, "n", "/d/job.sh", "/dev/null", true);
  EXPECT_EQ(test[2], "--test-only");
  EXPECT_EQ(test.back(), "--wrap=true");
}

TEST(SlurmCommandsTest, LeftOutResourcesAreNotPassed) {
  TaskRecord task = SlurmTask();
  task.spec.remote = ToRemote(SlurmRequest{});
  auto argv = SbatchArgv(task, "n", "/s", "/o", false);
  for (const std::string& arg : argv) {
    EXPECT_FALSE(arg.starts_with("--partition") || arg.starts_with("--time") ||
                 arg.starts_with("--mem") || arg.starts_with("--cpus"))
        << arg;
  }
}

TEST(SlurmCommandsTest, TheJobScriptQuotesWhatItRuns) {
  TaskRecord task = SlurmTask();
  std::string script = SlurmJobScript(task, "/jobs/a b");
  EXPECT_TRUE(script.starts_with("#!/bin/sh\n"));
  EXPECT_NE(script.find("baton_dir='/jobs/a b'"), std::string::npos);
  EXPECT_NE(script.find("cd '/work/it'\\''s here'"), std::string::npos);
  EXPECT_NE(script.find("/bin/sh -c 'echo '\\''hi'\\'' && exit 3'"),
            std::string::npos);
  task.spec.shell_command.reset();
  task.spec.argv = {"printf", "%s\\n", "a b"};
  script = SlurmJobScript(task, "/j");
  EXPECT_NE(script.find("'printf' '%s\\n' 'a b'"), std::string::npos);
}

TEST(SlurmCommandsTest, SbatchAnswers) {
  EXPECT_EQ(ParseSbatchJobId("12\n").value(), "12");
  EXPECT_EQ(ParseSbatchJobId("12;cluster\n").value(), "12");
  EXPECT_FALSE(ParseSbatchJobId("sbatch: error: x\n"));
  EXPECT_FALSE(ParseSbatchJobId(""));
}

TEST(SlurmCommandsTest, SqueueRows) {
  auto rows = ParseSqueue(
      "12|PENDING|Resources||debug\n"
      "13|RUNNING|None|node1|short\n"
      "warning: something\n"
      "14.batch|RUNNING|None|n|p\n");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].job_id, "12");
  EXPECT_EQ(rows[0].reason, "Resources");
  EXPECT_EQ(rows[1].node, "node1");
  EXPECT_EQ(rows[1].partition, "short");
}

TEST(SlurmCommandsTest, ScontrolAndSacct) {
  auto end = ParseScontrolJob(
      "JobId=12 JobName=baton-x UserId=root(0) JobState=FAILED "
      "Reason=NonZeroExitCode Dependency=(null) ExitCode=3:0 RunTime=00:00:01");
  ASSERT_TRUE(end);
  EXPECT_EQ(end->state, "FAILED");
  EXPECT_EQ(end->exit_code, 3);
  EXPECT_EQ(end->signal, 0);
  EXPECT_EQ(end->reason, "NonZeroExitCode");
  EXPECT_FALSE(ParseScontrolJob("slurm_load_jobs error: Invalid job id"));

  auto ends = ParseSacct(
      "12|CANCELLED by 1000|0:15\n12.batch|CANCELLED|0:15\n13|TIMEOUT|0:15\n");
  ASSERT_EQ(ends.size(), 2u);
  EXPECT_EQ(ends["12"].state, "CANCELLED");
  EXPECT_EQ(ends["12"].cancelled_by, "1000");
  EXPECT_EQ(ends["13"].signal, 15);
}

TEST(SlurmCommandsTest, JobRecords) {
  auto record =
      ParseJobRecord(R"({"status":3,"started_ms":1000,"ended_ms":2000})");
  ASSERT_TRUE(record);
  EXPECT_EQ(record->status, 3);
  EXPECT_EQ(record->ended_ms, 2000);
  auto started =
      ParseJobRecord(R"({"started_ms":1000,"node":"n1","partition":"debug"})");
  ASSERT_TRUE(started);
  EXPECT_EQ(started->node, "n1");
  EXPECT_EQ(started->partition, "debug");
  EXPECT_EQ(started->ended_ms, 0);
  // A date without %N writes "%3N": no record.
  EXPECT_FALSE(ParseJobRecord(R"({"status":0,"started_ms":17%3N})"));
  EXPECT_FALSE(ParseJobRecord("[]"));
}

// fuzz/corpus/slurm_parsers/nasty-*: numbers that no shell or Slurm
// writes are not taken for a status, a code or a signal.
TEST(SlurmCommandsTest, StatusesOutsideAByteAreNotRead) {
  // 2^32 cut to an int was 0: a job that reads as a success.
  EXPECT_FALSE(ParseJobRecord(R"({"status":4294967296,"started_ms":1})"));
  EXPECT_FALSE(ParseJobRecord(R"({"status":-1,"started_ms":1})"));
  EXPECT_FALSE(ParseJobRecord(R"({"status":1.5,"started_ms":1})"));
  auto ends = ParseSacct("12|FAILED|-1:300\n13|FAILED|99999999999:9\n");
  EXPECT_EQ(ends["12"].exit_code, 0);
  EXPECT_EQ(ends["12"].signal, 0);
  EXPECT_EQ(ends["13"].exit_code, 0);
  EXPECT_EQ(ends["13"].signal, 9);
  auto scontrol = ParseScontrolJob("JobState=FAILED ExitCode=-5:2147483648");
  ASSERT_TRUE(scontrol);
  EXPECT_EQ(scontrol->exit_code, 0);
  EXPECT_EQ(scontrol->signal, 0);
}

TEST(SlurmCommandsTest, TheCommandsOwnEndWinsWhereTheJobRanToItsEnd) {
  JobRecord record{.status = 3, .started_ms = 10, .ended_ms = 20};
  ExitInfo exit = SlurmExit(SlurmEnd{.state = "FAILED", .exit_code = 3}, record,
                            false, "12");
  EXPECT_EQ(exit.cause, ExitCause::kNatural);
  EXPECT_EQ(exit.exit_code, 3);
  EXPECT_FALSE(exit.verdict);
  EXPECT_EQ(exit.ended_ms, 20);
  // No record (the script was killed): Slurm's ExitCode.
  exit = SlurmExit(SlurmEnd{.state = "COMPLETED"}, std::nullopt, false, "12");
  EXPECT_EQ(exit.exit_code, 0);
  // A shell's 128+N is signal N.
  record.status = 137;
  exit = SlurmExit(std::nullopt, record, false, "12");
  EXPECT_EQ(exit.signal, 9);
  EXPECT_FALSE(exit.exit_code);
}

TEST(SlurmCommandsTest, SlurmsEndsMapToBatonsStatuses) {
  auto verdict = [](std::string state) {
    ExitInfo exit = SlurmExit(SlurmEnd{.state = state, .signal = 15},
                              std::nullopt, false, "12");
    return std::pair(exit.verdict, exit.verdict_detail);
  };
  EXPECT_EQ(verdict("TIMEOUT").first, TaskStatus::kKilled);
  EXPECT_NE(verdict("TIMEOUT").second.find("timed out"), std::string::npos);
  EXPECT_EQ(verdict("OUT_OF_MEMORY").first, TaskStatus::kFailed);
  EXPECT_NE(verdict("OUT_OF_MEMORY").second.find("out of memory"),
            std::string::npos);
  EXPECT_EQ(verdict("CANCELLED").first, TaskStatus::kKilled);
  EXPECT_NE(verdict("CANCELLED").second.find("outside baton"),
            std::string::npos);
  EXPECT_EQ(verdict("NODE_FAIL").first, TaskStatus::kInterrupted);
  EXPECT_EQ(verdict("PREEMPTED").first, TaskStatus::kInterrupted);
  // Cancelled by baton: killed, whatever Slurm calls it.
  ExitInfo killed =
      SlurmExit(SlurmEnd{.state = "CANCELLED"}, std::nullopt, true, "12");
  EXPECT_EQ(killed.cause, ExitCause::kKilled);
  // Nothing known at all: lost.
  EXPECT_EQ(SlurmExit(std::nullopt, std::nullopt, false, "12").cause,
            ExitCause::kLost);
}

TEST(SlurmCommandsTest, EndStates) {
  EXPECT_TRUE(IsSlurmEndState("COMPLETED"));
  EXPECT_TRUE(IsSlurmEndState("OUT_OF_MEMORY"));
  EXPECT_FALSE(IsSlurmEndState("RUNNING"));
  EXPECT_FALSE(IsSlurmEndState("COMPLETING"));
  EXPECT_FALSE(IsSlurmEndState("PENDING"));
}

}  // namespace
}  // namespace baton
