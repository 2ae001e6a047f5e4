// A fixture for agent tasks against the scripted fake CLIs in
// tests/agents/fakes (codex, acp-agent, claude): the fakes first on PATH,
// a HOME of the test's own (where the fakes keep their sessions, so resume
// works across processes), a working folder, and helpers that poll the
// task's events with a bound.
#ifndef BATON_TESTS_INTEGRATION_FAKE_AGENT_FIXTURE_H_
#define BATON_TESTS_INTEGRATION_FAKE_AGENT_FIXTURE_H_

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "tests/support/baton_fixture.h"

namespace baton::testing {

// Puts tests/agents/fakes first on `env`'s PATH (from this process's
// PATH); false when python3, which runs the fakes, is missing.
inline bool PutFakeAgentsOnPath(std::map<std::string, std::string>& env) {
  if (std::system("command -v python3 >/dev/null") != 0)
    return false;
  const char* path = std::getenv("PATH");
  env["PATH"] = std::string(BATON_SOURCE_DIR) +
                "/tests/agents/fakes:" + (path ? path : "/usr/bin:/bin");
  return true;
}

// Whether `text` holds `part`.
inline bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class FakeAgentTest : public BatonTest {
 protected:
  void SetUp() override {
    BatonTest::SetUp();
    if (!PutFakeAgentsOnPath(env_))
      GTEST_SKIP() << "python3 (for the fake agent CLIs) is not installed";
    work_ = home_ + "/work";
    std::filesystem::create_directories(work_);
    std::filesystem::create_directories(home_ + "/agent-home");
    env_["HOME"] = home_ + "/agent-home";
    env_["CODEX_HOME"] = home_ + "/agent-home/.codex";
  }

  // Writes `toml` as baton's config file (agent profiles) and names it in
  // the CLI's environment (BATON_CONFIG), which a delegate sends batond.
  void UseConfig(const std::string& toml) {
    std::string config = home_ + "/config.toml";
    std::ofstream(config) << toml;
    env_["BATON_CONFIG"] = config;
  }

  // `baton delegate ARGS...` (in the work folder unless ARGS say --cwd);
  // the task id.
  std::string Delegate(std::vector<std::string> args,
                       std::map<std::string, std::string> extra_env = {}) {
    if (std::find(args.begin(), args.end(), "--cwd") == args.end())
      args.insert(args.begin(), {"--cwd", work_});
    args.insert(args.begin(), "delegate");
    auto env = env_;
    for (auto& [k, v] : extra_env)
      env[k] = v;
    auto result = Baton(args, env);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return result.out.substr(0, result.out.find('\n'));
  }

  // `baton --json events ID`: one JSON object per line.
  nlohmann::json Events(const std::string& id) {
    auto out = Baton({"--json", "events", id}, env_).out;
    nlohmann::json events = nlohmann::json::array();
    size_t start = 0;
    for (size_t nl; (nl = out.find('\n', start)) != std::string::npos;
         start = nl + 1) {
      auto event =
          nlohmann::json::parse(out.substr(start, nl - start), nullptr, false);
      if (event.is_object())
        events.push_back(std::move(event));
    }
    return events;
  }

  std::vector<nlohmann::json> EventsOfType(const std::string& id,
                                           const std::string& type) {
    std::vector<nlohmann::json> out;
    for (const auto& event : Events(id)) {
      if (event.value("type", "") == type)
        out.push_back(event);
    }
    return out;
  }

  // Polls (bounded, 20 s) until the task has an event of `type` matching
  // `field`=`value` when given; that event, or null.
  nlohmann::json WaitForEvent(const std::string& id, const std::string& type,
                              const std::string& field = "",
                              const std::string& value = "") {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      for (const auto& event : Events(id)) {
        if (event.value("type", "") != type)
          continue;
        if (field.empty() ||
            (event.contains(field) && event[field].is_string() &&
             event[field].get<std::string>() == value)) {
          return event;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << "no " << type << " event in " << id << ": "
                  << Events(id).dump();
    return nullptr;
  }

  // `wait` for one task (bounded) and its record.
  nlohmann::json WaitEnd(const std::string& id) {
    // Exit code 1 when the task failed: the record says how it ended.
    auto done = Baton({"--json", "wait", "--timeout", "30s", id}, env_,
                      std::chrono::seconds(40));
    auto doc = done.json();
    EXPECT_TRUE(doc.is_object() && !doc.value("timed_out", true))
        << done.out << done.err;
    return Status(id, env_);
  }

  // `baton kill` of an agent that is asking. Checks that the task ends
  // killed with exactly one question_withdrawn event; that event, or null.
  nlohmann::json KillWhileAsking(const std::string& id) {
    Baton({"kill", "--grace", "5s", id}, env_);
    EXPECT_EQ(WaitEnd(id)["status"], "killed");
    auto withdrawn = EventsOfType(id, "question_withdrawn");
    EXPECT_EQ(withdrawn.size(), 1u) << Events(id).dump();
    return withdrawn.size() == 1 ? withdrawn[0] : nlohmann::json();
  }

  // Every text and result text of the task, one per line.
  std::string Texts(const std::string& id) {
    std::string all;
    for (const auto& event : Events(id)) {
      std::string type = event.value("type", "");
      if (type == "text" || type == "result")
        all += event.value("text", "") + "\n";
    }
    return all;
  }

  std::map<std::string, std::string> env_;
  std::string work_;
};

}  // namespace baton::testing

#endif  // BATON_TESTS_INTEGRATION_FAKE_AGENT_FIXTURE_H_
