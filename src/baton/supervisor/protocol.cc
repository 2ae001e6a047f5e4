#include "baton/supervisor/protocol.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "baton/util/environment.h"

namespace baton {
namespace {

using Json = nlohmann::json;

// Strings reaching us went through batond's JSON protocol, so they are
// UTF-8; replacing invalid bytes keeps dump() from throwing regardless.
std::string Dump(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

template <class T>
Json Nullable(const std::optional<T>& value) {
  return value ? Json(*value) : Json(nullptr);
}

template <class T>
std::optional<T> OptionalField(const Json& json, const char* key) {
  auto it = json.find(key);
  if (it == json.end() || it->is_null())
    return std::nullopt;
  return it->get<T>();
}

// Indexed by ExitCause.
constexpr std::string_view kCauseNames[] = {"natural", "killed", "timeout",
                                            "lost"};

std::chrono::milliseconds Millis(const Json& json, const char* key) {
  return std::chrono::milliseconds(json.at(key).get<int64_t>());
}

// Runs `parse` on the object in `line`; nlohmann's exceptions (bad JSON, a
// missing or mistyped field) stop here and become kInvalidArgument.
template <class R, class F>
Result<R> ParseWith(std::string_view line, F parse) {
  try {
    Json json = Json::parse(line);
    if (!json.is_object()) {
      return MakeError(ErrorCode::kInvalidArgument, "not a JSON object");
    }
    return parse(json, json.at("op").get<std::string>());
  } catch (const Json::exception& e) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("bad supervisor message: {}", e.what()));
  }
}

Result<SupervisorRequest> RequestFromJson(const Json& json,
                                          const std::string& op) {
  if (op == "hello")
    return SupervisorHello{};
  if (op == "spawn") {
    SpawnRequest spawn;
    spawn.task = json.at("task").get<std::string>();
    spawn.argv = json.at("argv").get<std::vector<std::string>>();
    spawn.env = json.at("env").get<std::vector<std::string>>();
    spawn.env_id = OptionalField<uint64_t>(json, "env_id");
    spawn.cwd = json.value("cwd", "");
    spawn.log = json.at("log").get<std::string>();
    spawn.exit_file = json.at("exit_file").get<std::string>();
    if (auto timeout = OptionalField<int64_t>(json, "timeout_ms")) {
      spawn.timeout = std::chrono::milliseconds(*timeout);
    }
    spawn.grace = Millis(json, "grace_ms");
    spawn.stderr_path = json.value("stderr", "");
    spawn.stdin_path = json.value("stdin", "");
    spawn.stdin_fifo = json.value("stdin_fifo", false);
    return spawn;
  }
  if (op == "close_stdin")
    return CloseStdinRequest{json.at("task").get<std::string>()};
  if (op == "ack")
    return AckRequest{json.at("tasks").get<std::vector<std::string>>()};
  if (op == "env") {
    return EnvRequest{json.at("id").get<uint64_t>(),
                      json.at("env").get<std::vector<std::string>>()};
  }
  if (op == "kill") {
    return SupervisorKill{json.at("task").get<std::string>(),
                          Millis(json, "grace_ms")};
  }
  return MakeError(ErrorCode::kNotFound, "unknown op " + op);
}

Result<SupervisorEvent> EventFromJson(const Json& json, const std::string& op) {
  if (op == "hello") {
    SupervisorHelloReply hello;
    hello.pid = json.at("pid").get<int64_t>();
    hello.version = json.value("version", 1);
    for (const Json& live : json.at("live")) {
      hello.live.push_back({live.at("task").get<std::string>(),
                            live.at("pid").get<int64_t>(),
                            live.value("started_ms", int64_t{0})});
    }
    if (auto unknown = json.find("unknown_ends"); unknown != json.end()) {
      hello.unknown_ends = unknown->get<std::vector<std::string>>();
    }
    return hello;
  }
  if (op == "spawned") {
    return SpawnedReply{json.at("task").get<std::string>(),
                        json.at("pid").get<int64_t>(),
                        json.at("started_ms").get<int64_t>()};
  }
  if (op == "spawn_failed") {
    return SpawnFailedReply{json.at("task").get<std::string>(),
                            json.at("error").get<std::string>(),
                            json.value("already_started", false)};
  }
  if (op == "exited") {
    ExitedEvent exited;
    exited.task = json.at("task").get<std::string>();
    exited.pid = json.at("pid").get<int64_t>();
    exited.exit_code = OptionalField<int>(json, "exit_code");
    exited.signal = OptionalField<int>(json, "signal");
    auto cause = ParseExitCause(json.at("cause").get<std::string>());
    if (!cause)
      return MakeError(ErrorCode::kInvalidArgument, "bad cause");
    exited.cause = *cause;
    exited.ended_ms = json.at("ended_ms").get<int64_t>();
    exited.disk_full = json.value("disk_full", false);
    exited.started_ms = json.value("started_ms", int64_t{0});
    exited.leftovers = json.value("leftovers", 0);
    return exited;
  }
  return MakeError(ErrorCode::kNotFound, "unknown op " + op);
}

}  // namespace

std::string EncodeMessage(const SupervisorHello&) {
  return Dump({{"op", "hello"}, {"version", kSupervisorProtocolVersion}});
}

std::string EncodeMessage(const SpawnRequest& m) {
  Json json = {{"op", "spawn"},
               {"task", m.task},
               {"argv", m.argv},
               {"env", m.env},
               {"cwd", m.cwd},
               {"log", m.log},
               {"exit_file", m.exit_file},
               {"grace_ms", m.grace.count()}};
  if (m.env_id)
    json["env_id"] = *m.env_id;
  if (m.timeout)
    json["timeout_ms"] = m.timeout->count();
  if (!m.stderr_path.empty())
    json["stderr"] = m.stderr_path;
  if (!m.stdin_path.empty()) {
    json["stdin"] = m.stdin_path;
    json["stdin_fifo"] = m.stdin_fifo;
  }
  return Dump(json);
}

std::string EncodeMessage(const CloseStdinRequest& m) {
  return Dump({{"op", "close_stdin"}, {"task", m.task}});
}

std::string EncodeMessage(const AckRequest& m) {
  return Dump({{"op", "ack"}, {"tasks", m.tasks}});
}

std::string EncodeMessage(const EnvRequest& m) {
  return Dump({{"op", "env"}, {"id", m.id}, {"env", m.env}});
}

std::vector<std::string> SpawnEnvironment(const SpawnRequest& request) {
  if (!request.base_env)
    return request.env;
  return SetEnvironmentEntries(*request.base_env, request.env);
}

std::string EncodeMessage(const SupervisorKill& m) {
  return Dump(
      {{"op", "kill"}, {"task", m.task}, {"grace_ms", m.grace.count()}});
}

std::string EncodeMessage(const SupervisorHelloReply& m) {
  Json live = Json::array();
  for (const LiveTask& task : m.live) {
    live.push_back({{"task", task.task},
                    {"pid", task.pid},
                    {"started_ms", task.started_ms}});
  }
  Json json = {
      {"op", "hello"}, {"version", m.version}, {"pid", m.pid}, {"live", live}};
  if (!m.unknown_ends.empty())
    json["unknown_ends"] = m.unknown_ends;
  return Dump(json);
}

std::string EncodeMessage(const SpawnedReply& m) {
  return Dump({{"op", "spawned"},
               {"task", m.task},
               {"pid", m.pid},
               {"started_ms", m.started_ms}});
}

std::string EncodeMessage(const SpawnFailedReply& m) {
  Json json = {{"op", "spawn_failed"}, {"task", m.task}, {"error", m.error}};
  if (m.already_started)
    json["already_started"] = true;
  return Dump(json);
}

std::string EncodeMessage(const ExitedEvent& m) {
  Json json = {{"op", "exited"},
               {"task", m.task},
               {"pid", m.pid},
               {"exit_code", Nullable(m.exit_code)},
               {"signal", Nullable(m.signal)},
               {"cause", ExitCauseName(m.cause)},
               {"ended_ms", m.ended_ms},
               {"disk_full", m.disk_full},
               {"started_ms", m.started_ms}};
  if (m.leftovers > 0)
    json["leftovers"] = m.leftovers;
  return Dump(json);
}

Result<SupervisorRequest> ParseSupervisorRequest(std::string_view line) {
  return ParseWith<SupervisorRequest>(line, RequestFromJson);
}

Result<SupervisorEvent> ParseSupervisorEvent(std::string_view line) {
  return ParseWith<SupervisorEvent>(line, EventFromJson);
}

ExitInfo ToExitInfo(const ExitedEvent& event) {
  ExitInfo exit;
  exit.cause = event.cause;
  exit.exit_code = event.exit_code;
  exit.signal = event.signal;
  exit.ended_ms = event.ended_ms;
  exit.output_disk_full = event.disk_full;
  exit.pid = event.pid;
  exit.started_ms = event.started_ms;
  exit.leftovers_stopped = event.leftovers;
  return exit;
}

std::string_view ExitCauseName(ExitCause cause) {
  return kCauseNames[static_cast<size_t>(cause)];
}

std::optional<ExitCause> ParseExitCause(std::string_view name) {
  for (size_t i = 0; i < std::size(kCauseNames); ++i) {
    if (kCauseNames[i] == name)
      return static_cast<ExitCause>(i);
  }
  return std::nullopt;
}

}  // namespace baton
