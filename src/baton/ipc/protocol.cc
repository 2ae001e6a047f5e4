#include "baton/ipc/protocol.h"

#include "baton/util/clock.h"

namespace baton {
namespace {

Json TimeOrNull(int64_t wall_ms) {
  return wall_ms ? Json(FormatIsoTime(wall_ms)) : Json(nullptr);
}

template <class T>
Json OptionalToJson(const std::optional<T>& value) {
  return value ? Json(*value) : Json(nullptr);
}

// Quotes an argument for a POSIX shell only when it needs it.
std::string ShellQuote(const std::string& arg) {
  if (!arg.empty() &&
      arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTU"
                            "VWXYZ0123456789-_./=:,+@%") == std::string::npos) {
    return arg;
  }
  std::string quoted = "'";
  for (char c : arg) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

}  // namespace

std::string CommandText(const TaskSpec& spec) {
  if (spec.shell_command)
    return *spec.shell_command;
  std::string text;
  for (const auto& arg : spec.argv) {
    if (!text.empty())
      text += ' ';
    text += ShellQuote(arg);
  }
  return text;
}

Json TaskToJson(const TaskRecord& task, std::optional<uint64_t> output_bytes) {
  Json json = {
      {"id", task.id.ToString()},
      {"kind", TaskKindName(task.id.kind)},
      {"status", TaskStatusName(task.status)},
      {"detail", task.detail},
      {"exit_code", OptionalToJson(task.exit_code)},
      {"signal", task.signal ? Json(SignalName(*task.signal)) : Json(nullptr)},
      {"label", task.spec.label},
      {"command", CommandText(task.spec)},
      {"argv", task.spec.shell_command ? Json(nullptr) : Json(task.spec.argv)},
      {"cwd", task.spec.cwd},
      {"env", task.spec.env_overrides},
      {"owner",
       task.spec.owner.empty() ? Json(nullptr) : Json(task.spec.owner)},
      {"pid", task.pid ? Json(task.pid) : Json(nullptr)},
      {"timeout_ms",
       task.spec.timeout ? Json(task.spec.timeout->count()) : Json(nullptr)},
      {"created_at", TimeOrNull(task.created_ms)},
      {"started_at", TimeOrNull(task.started_ms)},
      {"ended_at", TimeOrNull(task.ended_ms)},
      {"duration_ms", task.started_ms && task.ended_ms
                          ? Json(task.ended_ms - task.started_ms)
                          : Json(nullptr)},
      {"kill_reason",
       task.kill_reason.empty() ? Json(nullptr) : Json(task.kill_reason)},
      {"output_path", task.output_path},
  };
  if (output_bytes)
    json["output_bytes"] = *output_bytes;
  return json;
}

Json ErrorToJson(const Error& error) {
  return {{"code", ErrorCodeName(error.code)}, {"message", error.message}};
}

Error ErrorFromJson(const Json& error) {
  Error out;
  if (error.is_object()) {
    out.code = ErrorCodeFromName(error.value("code", "internal"));
    out.message = error.value("message", "");
  }
  return out;
}

Json MakeReply(const Json& request_id, const Json& result) {
  return {{"id", request_id},
          {"ok", true},
          {"version", kProtocolVersion},
          {"result", result}};
}

Json MakeErrorReply(const Json& request_id, const Error& error) {
  return {{"id", request_id},
          {"ok", false},
          {"version", kProtocolVersion},
          {"error", ErrorToJson(error)}};
}

}  // namespace baton
