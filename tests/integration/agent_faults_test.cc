// A full disk under an agent's events log (issue 12, "Fault injection";
// doc/faults.md): batond writes it, so the LD_PRELOAD fault library fails
// batond's writes to events.jsonl while a follow-up is sent mid-turn. The
// work goes on (the follow-up is delivered, the task completes), the loss
// is told in the transcript, and the events log records the gap once it
// can write again.
#include <unistd.h>

#include <fstream>
#include <set>
#include <thread>

#include "baton/util/file_util.h"
#include "tests/integration/fake_agent_fixture.h"

namespace baton::testing {
namespace {

using std::chrono::milliseconds;

TEST_F(FakeAgentTest, AFullDiskUnderTheEventsLogLosesEventsNotTheWork) {
  std::string control = home_ + "/disk-full";
  std::string faults = home_ + "/faults.log";
  auto env = env_;
  env["LD_PRELOAD"] = BATON_FAULT_INJECT_LIB;
  env["BATON_FAULT_CONTROL"] = control;
  env["BATON_FAULT_PATH"] = "*/events.jsonl";
  env["BATON_FAULT_ERRNO"] = "ENOSPC";
  env["BATON_FAULT_LOG"] = faults;
  env["ASAN_OPTIONS"] = "verify_asan_link_order=0";
  auto started = Baton({"daemon", "start"}, env);
  ASSERT_EQ(started.exit_code, 0) << started.err;

  std::string id = Delegate({"--agent", "claude", "SLOW3 work"});
  WaitStarted(id, env_);
  std::this_thread::sleep_for(milliseconds(500));  // Inside its turn.
  std::ofstream{control};
  auto sent = Baton({"send", id, "then that"}, env_);
  EXPECT_EQ(sent.out, id + ": m-1 queued until the current turn ends\n")
      << sent.err;
  std::this_thread::sleep_for(milliseconds(300));
  ::unlink(control.c_str());
  ASSERT_NE(ReadFile(faults).value_or(""), "") << "the window was not hit";

  auto ended = WaitEnd(id);
  EXPECT_EQ(ended["status"], "completed") << ended.dump();
  std::string transcript = Baton({"output", id}, env_).out;
  EXPECT_NE(transcript.find("turn 2: then that"), std::string::npos)
      << transcript;
  EXPECT_NE(transcript.find("could not record event"), std::string::npos)
      << transcript;

  // The gap is in the log, and every other seq is there once.
  auto gaps = EventsOfType(id, "error");
  ASSERT_EQ(gaps.size(), 1u) << Events(id).dump();
  EXPECT_EQ(gaps[0]["source"], "batond");
  auto lost = gaps[0]["lost"];
  ASSERT_TRUE(lost.is_array() && lost.size() == 2) << gaps[0].dump();
  std::set<int64_t> seqs;
  for (const auto& event : Events(id))
    EXPECT_TRUE(seqs.insert(event["seq"].get<int64_t>()).second);
  for (int64_t seq = lost[0]; seq <= lost[1].get<int64_t>(); ++seq)
    EXPECT_FALSE(seqs.contains(seq)) << seq << " is both lost and there";
  for (int64_t seq = 1; seq <= *seqs.rbegin(); ++seq) {
    EXPECT_TRUE(seqs.contains(seq) || (seq >= lost[0] && seq <= lost[1]))
        << "seq " << seq << " is missing and not told";
  }
  std::string log = ReadFile(home_ + "/batond.log").value_or("");
  EXPECT_NE(log.find("cannot record event"), std::string::npos) << log;
  EXPECT_NE(log.find("recording again"), std::string::npos) << log;
  EXPECT_EQ(Baton({"daemon", "status"}).exit_code, 0);
}

}  // namespace
}  // namespace baton::testing
