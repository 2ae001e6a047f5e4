#include "baton/supervisor/protocol.h"

#include <fmt/format.h>

#include "baton/util/environment.h"

namespace baton {
namespace {

// The op a line names: read first, to pick the message to decode.
struct Envelope {
  std::string op;
  template <class V>
  void Fields(V& v) {
    v("op", op, {.required = true, .non_empty = true});
  }
};

// `message`'s fields after its op: {"op":"spawn","task":...}.
template <class T>
std::string Encode(std::string_view op, const T& message) {
  std::string fields = EncodeObject(message);  // "{...}"
  std::string out = "{\"op\":";
  AppendJsonString(out, op);
  if (fields.size() > 2)
    out += ',';
  out.append(fields, 1);
  return out;
}

// Decodes `json` as a T; `what` names it in errors ("supervisor spawn").
// Fields a newer side added are ignored.
template <class T, class Variant>
Result<Variant> As(const Json& json, std::string_view op) {
  auto message = DecodeObject<T>(json, fmt::format("supervisor {}", op), false);
  if (!message)
    return std::unexpected(message.error());
  return Variant(std::move(*message));
}

// Parses `line` and decodes the message its op names with `decode`; an op
// `decode` does not know is kNotFound.
template <class Variant, class Decode>
Result<Variant> Parse(std::string_view line, Decode decode) {
  auto parsed = ParseJson(line);
  if (!parsed) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "bad supervisor message: " + parsed.error().message);
  }
  auto envelope =
      DecodeObject<Envelope>(parsed->value, "supervisor message", false);
  if (!envelope)
    return std::unexpected(envelope.error());
  return decode(parsed->value, envelope->op);
}

Result<SupervisorRequest> RequestFromJson(const Json& json,
                                          const std::string& op) {
  using R = SupervisorRequest;
  if (op == "hello")
    return As<SupervisorHello, R>(json, op);
  if (op == "spawn")
    return As<SpawnRequest, R>(json, op);
  if (op == "close_stdin")
    return As<CloseStdinRequest, R>(json, op);
  if (op == "ack")
    return As<AckRequest, R>(json, op);
  if (op == "env")
    return As<EnvRequest, R>(json, op);
  if (op == "kill")
    return As<SupervisorKill, R>(json, op);
  return MakeError(ErrorCode::kNotFound, "unknown op " + op);
}

Result<SupervisorEvent> EventFromJson(const Json& json, const std::string& op) {
  using E = SupervisorEvent;
  if (op == "hello") {
    // Protocol 1 sent no version: 1, not ours, is what its absence means.
    auto hello = As<SupervisorHelloReply, E>(json, op);
    if (hello && !json.contains("version"))
      std::get<SupervisorHelloReply>(*hello).version = 1;
    return hello;
  }
  if (op == "spawned")
    return As<SpawnedReply, E>(json, op);
  if (op == "spawn_failed")
    return As<SpawnFailedReply, E>(json, op);
  if (op == "exited")
    return As<ExitedEvent, E>(json, op);
  return MakeError(ErrorCode::kNotFound, "unknown op " + op);
}

}  // namespace

std::string EncodeMessage(const SupervisorHello& m) {
  return Encode("hello", m);
}
std::string EncodeMessage(const SpawnRequest& m) {
  return Encode("spawn", m);
}
std::string EncodeMessage(const CloseStdinRequest& m) {
  return Encode("close_stdin", m);
}
std::string EncodeMessage(const AckRequest& m) {
  return Encode("ack", m);
}
std::string EncodeMessage(const EnvRequest& m) {
  return Encode("env", m);
}
std::string EncodeMessage(const SupervisorKill& m) {
  return Encode("kill", m);
}
std::string EncodeMessage(const SupervisorHelloReply& m) {
  return Encode("hello", m);
}
std::string EncodeMessage(const SpawnedReply& m) {
  return Encode("spawned", m);
}
std::string EncodeMessage(const SpawnFailedReply& m) {
  return Encode("spawn_failed", m);
}
std::string EncodeMessage(const ExitedEvent& m) {
  return Encode("exited", m);
}

Result<SupervisorRequest> ParseSupervisorRequest(std::string_view line) {
  return Parse<SupervisorRequest>(line, RequestFromJson);
}

Result<SupervisorEvent> ParseSupervisorEvent(std::string_view line) {
  return Parse<SupervisorEvent>(line, EventFromJson);
}

std::vector<std::string> SpawnEnvironment(const SpawnRequest& request) {
  if (!request.base_env)
    return request.env;
  return SetEnvironmentEntries(*request.base_env, request.env);
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
  exit.out_of_memory = event.out_of_memory;
  return exit;
}

std::string_view ExitCauseName(ExitCause cause) {
  for (const auto& [known, name] : JsonEnum<ExitCause>::kNames) {
    if (known == cause)
      return name;
  }
  return "natural";
}

std::optional<ExitCause> ParseExitCause(std::string_view name) {
  for (const auto& [known, text] : JsonEnum<ExitCause>::kNames) {
    if (text == name)
      return known;
  }
  return std::nullopt;
}

}  // namespace baton
