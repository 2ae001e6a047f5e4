#include "baton/ipc/protocol.h"

#include <fmt/format.h>

#include <iterator>

#include "baton/core/task_extra.h"
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

// Fields only some tasks have: agent, agent_session, checks, evidence.
void AddTaskExtras(Json& json, const TaskRecord& task) {
  if (task.spec.agent)
    json["agent"] = AgentSpecToJson(*task.spec.agent);
  if (!task.agent_session.empty())
    json["agent_session"] = task.agent_session;
  if (!task.spec.checks.empty())
    json["checks"] = task.spec.checks;
  if (task.evidence)
    json["evidence"] = EvidenceToJson(*task.evidence);
}

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
  AddTaskExtras(json, task);
  return json;
}

void AppendJsonString(std::string& out, std::string_view text) {
  out.push_back('"');
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          fmt::format_to(std::back_inserter(out), "\\u{:04x}",
                         static_cast<unsigned>(c));
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

namespace {

// Writes `"key":` (with a leading comma unless first).
class ObjectWriter {
 public:
  explicit ObjectWriter(std::string& out) : out_(out) { out_.push_back('{'); }
  ObjectWriter& Key(std::string_view key) {
    if (!first_)
      out_.push_back(',');
    first_ = false;
    AppendJsonString(out_, key);
    out_.push_back(':');
    return *this;
  }
  void String(std::string_view key, std::string_view value) {
    Key(key);
    AppendJsonString(out_, value);
  }
  void StringOrNull(std::string_view key, std::string_view value) {
    if (value.empty())
      return Null(key);
    String(key, value);
  }
  void Int(std::string_view key, int64_t value) {
    Key(key);
    fmt::format_to(std::back_inserter(out_), "{}", value);
  }
  void Null(std::string_view key) {
    Key(key);
    out_ += "null";
  }
  void Time(std::string_view key, int64_t wall_ms) {
    if (wall_ms == 0)
      return Null(key);
    String(key, FormatIsoTime(wall_ms));
  }
  void End() { out_.push_back('}'); }

 private:
  std::string& out_;
  bool first_ = true;
};

void AppendBriefFields(ObjectWriter& w, const TaskRecord& task) {
  w.String("id", task.id.ToString());
  w.String("kind", TaskKindName(task.id.kind));
  w.String("status", TaskStatusName(task.status));
  w.String("detail", task.detail);
  if (task.exit_code) {
    w.Int("exit_code", *task.exit_code);
  } else {
    w.Null("exit_code");
  }
  if (task.signal) {
    w.String("signal", SignalName(*task.signal));
  } else {
    w.Null("signal");
  }
  w.String("label", task.spec.label);
  w.String("command", CommandText(task.spec));
}

}  // namespace

void AppendTaskBriefJson(std::string& out, const TaskRecord& task) {
  ObjectWriter w(out);
  AppendBriefFields(w, task);
  w.End();
}

void AppendTaskJson(std::string& out, const TaskRecord& task,
                    std::optional<uint64_t> output_bytes) {
  ObjectWriter w(out);
  AppendBriefFields(w, task);
  if (task.spec.shell_command) {
    w.Null("argv");
  } else {
    w.Key("argv");
    out.push_back('[');
    for (size_t i = 0; i < task.spec.argv.size(); ++i) {
      if (i)
        out.push_back(',');
      AppendJsonString(out, task.spec.argv[i]);
    }
    out.push_back(']');
  }
  w.String("cwd", task.spec.cwd);
  w.Key("env");
  out.push_back('{');
  bool first = true;
  for (const auto& [name, value] : task.spec.env_overrides) {
    if (!first)
      out.push_back(',');
    first = false;
    AppendJsonString(out, name);
    out.push_back(':');
    AppendJsonString(out, value);
  }
  out.push_back('}');
  w.StringOrNull("owner", task.spec.owner);
  if (task.pid) {
    w.Int("pid", task.pid);
  } else {
    w.Null("pid");
  }
  if (task.spec.timeout) {
    w.Int("timeout_ms", task.spec.timeout->count());
  } else {
    w.Null("timeout_ms");
  }
  w.Time("created_at", task.created_ms);
  w.Time("started_at", task.started_ms);
  w.Time("ended_at", task.ended_ms);
  if (task.started_ms && task.ended_ms) {
    w.Int("duration_ms", task.ended_ms - task.started_ms);
  } else {
    w.Null("duration_ms");
  }
  w.StringOrNull("kill_reason", task.kill_reason);
  w.String("output_path", task.output_path);
  if (output_bytes)
    w.Int("output_bytes", static_cast<int64_t>(*output_bytes));
  // The optional parts are small: written through the tree.
  Json extras = Json::object();
  AddTaskExtras(extras, task);
  for (auto& [key, value] : extras.items()) {
    w.Key(key);
    out += value.dump(-1, ' ', false, Json::error_handler_t::replace);
  }
  w.End();
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

Json MakeErrorReply(const Json& request_id, const Error& error) {
  return {{"id", request_id},
          {"ok", false},
          {"version", kProtocolVersion},
          {"error", ErrorToJson(error)}};
}

}  // namespace baton
