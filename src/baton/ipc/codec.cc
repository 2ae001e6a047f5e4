#include "baton/ipc/codec.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "baton/util/version.h"

namespace baton {
namespace {

Status Invalid(std::string message) {
  return MakeError(ErrorCode::kInvalidArgument, std::move(message));
}

// The entries of a client's environment: each NAME=value with a name.
Status CheckEnvironment(const std::vector<std::string>& entries,
                        std::string_view field) {
  size_t bytes = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    size_t eq = entries[i].find('=');
    if (eq == std::string::npos || eq == 0) {
      return Invalid(fmt::format(
          "'{}[{}]' must be NAME=value with a non-empty NAME, not '{}'", field,
          i, entries[i].substr(0, 64)));
    }
    bytes += entries[i].size() + 1;
  }
  if (bytes > kMaxEnvBytes) {
    return Invalid(fmt::format("'{}' holds {} bytes; at most {} are allowed",
                               field, bytes, kMaxEnvBytes));
  }
  return {};
}

Status CheckEnvOverrides(const std::map<std::string, std::string>& env) {
  size_t bytes = 0;
  for (const auto& [name, value] : env) {
    if (name.empty() || name.find('=') != std::string::npos) {
      return Invalid(fmt::format(
          "'env' names a variable '{}': a name must be non-empty and "
          "without '='",
          name));
    }
    bytes += name.size() + value.size() + 2;
  }
  if (bytes > kMaxEnvBytes) {
    return Invalid(fmt::format("'env' holds {} bytes; at most {} are allowed",
                               bytes, kMaxEnvBytes));
  }
  return {};
}

Status CheckAbsolute(const std::string& path, std::string_view field) {
  if (!path.empty() && path[0] != '/') {
    return Invalid(
        fmt::format("'{}' must be an absolute path, not '{}'", field, path));
  }
  return {};
}

}  // namespace

// ---- errors ---------------------------------------------------------------

WireError ToWire(const Error& error) {
  return {std::string(ErrorCodeName(error.code)), error.message};
}

Error FromWire(const WireError& error) {
  return {ErrorCodeFromName(error.code), error.message};
}

// ---- requests --------------------------------------------------------------

namespace {

// `on`, and Slurm's fields only with `on` slurm.
Status CheckSlurmFields(const SlurmFields& slurm) {
  if (!slurm.on.empty() && slurm.on != "local" && !slurm.OnSlurm()) {
    return Invalid(
        fmt::format("'on' is \"{}\"; a task runs \"local\" (the default) or on "
                    "\"slurm\"",
                    slurm.on));
  }
  if (slurm.OnSlurm())
    return {};
  for (auto [set, name] :
       {std::pair(!slurm.partition.empty(), "partition"),
        std::pair(!slurm.account.empty(), "account"),
        std::pair(slurm.time_limit_s.has_value(), "time_limit_s"),
        std::pair(!slurm.mem.empty(), "mem"),
        std::pair(!slurm.gres.empty(), "gres"),
        std::pair(!slurm.sbatch_args.empty(), "sbatch_args")}) {
    if (set) {
      return Invalid(
          fmt::format("'{}' is for a Slurm job; give 'on': \"slurm\"", name));
    }
  }
  return {};
}

// A CPU share a task may be held to (LimitFields, QueueSetRequest).
bool ValidCpus(double cpus) {
  return std::isfinite(cpus) && cpus >= 0.01 && cpus <= 65536;
}

// The limits' own bounds, and what of them a Slurm job can take.
Status CheckLimitFields(const LimitFields& limits, const SlurmFields& slurm) {
  if (limits.cpus && !ValidCpus(*limits.cpus)) {
    return Invalid(
        "'cpus' must be a number of CPUs from 0.01 to 65536, e.g. 1.5");
  }
  if (!slurm.OnSlurm())
    return {};
  if (limits.cpus && *limits.cpus != std::floor(*limits.cpus)) {
    return Invalid(
        fmt::format("'cpus' is {} but a Slurm job asks for whole CPUs, e.g. 2",
                    *limits.cpus));
  }
  if (limits.pids) {
    return Invalid(
        "'pids' is a limit on this machine; a Slurm job is held by the "
        "cluster's own limits (leave 'pids' out, or run it here)");
  }
  if (limits.memory_bytes && !slurm.mem.empty()) {
    return Invalid(
        "give the job's memory once: 'memory_bytes' or 'mem', not both");
  }
  return {};
}

}  // namespace

Status RunRequest::Validate() const {
  if (command && !argv.empty()) {
    return Invalid(
        "run request: give either 'command' (a shell line) or 'argv' (a "
        "list), not both");
  }
  if ((!command || command->empty()) && argv.empty()) {
    return Invalid(
        "run request: empty command; give 'command' (a shell line) or "
        "'argv', e.g. baton run -- make");
  }
  size_t argv_bytes = std::accumulate(
      argv.begin(), argv.end(), size_t{0},
      [](size_t sum, const std::string& arg) { return sum + arg.size() + 1; });
  if (argv_bytes > kMaxArgvBytes) {
    return Invalid(fmt::format(
        "run request: 'argv' holds {} bytes; at most {} are allowed",
        argv_bytes, kMaxArgvBytes));
  }
  if (cwd.empty())
    return Invalid("run request: 'cwd' must not be empty");
  for (const Status& ok :
       {CheckAbsolute(cwd, "cwd"), CheckEnvOverrides(env),
        base_env ? CheckEnvironment(*base_env, "base_env") : Status(),
        CheckSlurmFields(slurm), CheckLimitFields(limits, slurm)}) {
    if (!ok)
      return Invalid("run request: " + ok.error().message);
  }
  return {};
}

Status DelegateRequest::Validate() const {
  if (brief.find_first_not_of(" \t\r\n") == std::string::npos)
    return Invalid(
        "delegate request: empty brief; say what the agent should do");
  if (max_cost_usd && !IsCostBudget(*max_cost_usd)) {
    return Invalid(fmt::format("delegate request: 'max_cost_usd' must be {}",
                               kCostBudgetRule));
  }
  for (const Status& ok :
       {CheckAbsolute(cwd, "cwd"),
        base_env ? CheckEnvironment(*base_env, "base_env") : Status(),
        CheckSlurmFields(slurm), CheckLimitFields(limits, slurm)}) {
    if (!ok)
      return Invalid("delegate request: " + ok.error().message);
  }
  return {};
}

Status RemoveRequest::Validate() const {
  if (tasks.empty() == !ended) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "remove request: give 'tasks' (ids) or 'ended': true "
                     "(every ended task), one of the two");
  }
  return {};
}

Status QueueSetRequest::Validate() const {
  if (memory_bytes && *memory_bytes != 0 && *memory_bytes < (1 << 20)) {
    return Invalid(
        "queue_set request: 'memory_bytes' must be 0 (none) or at least 1 "
        "MiB (1048576)");
  }
  if (cpus && *cpus != 0 && !ValidCpus(*cpus)) {
    return Invalid(
        "queue_set request: 'cpus' must be 0 (none) or a number of CPUs "
        "from 0.01 to 65536, e.g. 1.5");
  }
  return {};
}

Status ListRequest::Validate() const {
  if (!view) {
    if (!filter.IsDefault()) {
      return Invalid(
          "list request: 'owner', 'unowned', 'kind', 'status', 'label', "
          "'search' and 'ended_*' shape a view: give 'view': true with them");
    }
    return {};
  }
  if (!filter.owner.empty() && filter.unowned) {
    return Invalid(
        "list request: 'owner' names a session and 'unowned' asks for no "
        "session's tasks; give one of them");
  }
  if (!filter.kind.empty() && !ParseTaskKind(filter.kind)) {
    return Invalid(
        "list request: 'kind' must be shell or agent, or left out for both");
  }
  if (!filter.status.empty() && !ParseTaskStatus(filter.status)) {
    return Invalid(fmt::format(
        "list request: 'status' must be one of {}, or left out for all",
        TaskStatusNames()));
  }
  return {};
}

Status WorktreesRequest::Validate() const {
  if (force && !clean) {
    return Invalid(
        "worktrees request: 'force' goes with 'clean' (it discards "
        "uncommitted changes while cleaning)");
  }
  return {};
}

Status LandRequest::Validate() const {
  if (tasks.empty())
    return Invalid(
        "land request: 'tasks' names no task; give the ids of "
        "ended worktree workers (baton worktree ls lists them)");
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (std::find(tasks.begin(), tasks.begin() + i, tasks[i]) !=
        tasks.begin() + i) {
      return Invalid(fmt::format(
          "land request: '{}' is named twice; name each task once", tasks[i]));
    }
  }
  // A branch name as git takes one: not an option, no space or control.
  bool bad_onto =
      target.onto.starts_with('-') || target.onto.starts_with("refs/") ||
      std::any_of(target.onto.begin(), target.onto.end(), [](unsigned char c) {
        return c <= ' ' || c == 0x7f || c == '~' || c == '^' || c == ':' ||
               c == '?' || c == '*' || c == '[' || c == '\\';
      });
  if (bad_onto) {
    return Invalid(fmt::format(
        "land request: 'onto' is '{}'; it is a branch's short name, e.g. "
        "main",
        target.onto));
  }
  return {};
}

Status BudgetRequest::Validate() const {
  if (clear && (max_turns || max_tokens || max_cost_usd)) {
    return Invalid(
        "budget request: 'clear' removes the whole budget; give it alone, "
        "or set a limit to 0 to remove only that one");
  }
  return {};
}

namespace {

template <class R>
Status ValidateRequest(const R& request) {
  if constexpr (requires { request.Validate(); }) {
    return request.Validate();
  } else {
    return {};
  }
}

template <size_t I = 0>
Result<Request> DecodeOp(std::string_view op, const Json& object) {
  if constexpr (I == std::variant_size_v<Request>) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        fmt::format("unknown request '{}'; this batond speaks protocol {} "
                    "and is older than the client: replace it with the "
                    "client's with 'baton daemon upgrade' (tasks keep "
                    "running)",
                    op.substr(0, 64), kProtocolVersion));
  } else {
    using R = std::variant_alternative_t<I, Request>;
    if (R::kOp != op)
      return DecodeOp<I + 1>(op, object);
    R request{};
    JsonDecoder decoder(object, fmt::format("{} request", R::kOp));
    decoder.Known("id");
    decoder.Known("op");
    decoder.Known("session");
    request.Fields(decoder);
    if (auto ok = decoder.Finish(/*reject_unknown=*/true); !ok) {
      Error error = ok.error();
      // A field this batond does not know comes, most likely, from a
      // client newer than it: say which batond, and the remedy.
      if (error.message.find(": unknown field '") != std::string::npos) {
        error.message += fmt::format(
            "; this batond is baton {}: if the client is newer, replace "
            "batond with the client's with 'baton daemon upgrade' (tasks "
            "keep running)",
            kBatonVersion);
      }
      return std::unexpected(std::move(error));
    }
    if (auto ok = ValidateRequest(request); !ok)
      return std::unexpected(ok.error());
    return Request(std::move(request));
  }
}

// The id as JSON text, exactly as it came; nullopt for an id that is not
// a number, a string or null.
std::optional<std::string> IdJson(const ParsedJson& parsed) {
  auto it = parsed.value.find("id");
  if (it == parsed.value.end() || it->is_null())
    return "null";
  if (it->is_number_float()) {
    // Beyond 64 bits, or a fraction: the text as sent, never a rounding.
    if (auto raw = parsed.raw_numbers.find("id");
        raw != parsed.raw_numbers.end()) {
      return raw->second;
    }
  }
  if (it->is_number()) {
    return it->dump();
  }
  if (it->is_string()) {
    std::string text;
    AppendJsonString(text, it->get_ref<const std::string&>());
    return text;
  }
  return std::nullopt;
}

}  // namespace

std::expected<RequestLine, BadRequest> DecodeRequestLine(
    std::string_view line) {
  auto bad = [](std::string id_json, std::string message) {
    return std::unexpected(BadRequest{
        std::move(id_json), {ErrorCode::kInvalidArgument, std::move(message)}});
  };
  auto parsed = ParseJson(line);
  if (!parsed)
    return bad("null", "malformed request: " + parsed.error().message);
  if (!parsed->value.is_object())
    return bad("null", "malformed request: not a JSON object");
  auto id = IdJson(*parsed);
  if (!id) {
    return bad("null",
               "malformed request: 'id' must be a number, a string or null");
  }
  const Json& object = parsed->value;
  auto op = object.find("op");
  if (op == object.end() || !op->is_string()) {
    return bad(*id,
               "malformed request: 'op' must be a string naming the request, "
               "e.g. \"run\" (doc/protocol.md)");
  }
  RequestLine out;
  out.id_json = std::move(*id);
  if (auto session = object.find("session");
      session != object.end() && !session->is_null()) {
    if (auto ok = DecodeValue(*session, out.session,
                              {.max_bytes = kMaxNameBytes}, "session");
        !ok) {
      return bad(out.id_json, ok.error().message);
    }
  }
  auto request = DecodeOp(op->get_ref<const std::string&>(), object);
  if (!request)
    return bad(out.id_json, request.error().message);
  out.request = std::move(*request);
  return out;
}

std::string_view OpOf(const Request& request) {
  return std::visit([](const auto& r) { return r.kOp; }, request);
}

// ---- replies ----------------------------------------------------------------

std::string EncodeReplyLine(std::string_view id_json,
                            const Result<std::string>& result_json,
                            std::string_view notices_json) {
  std::string line = "{\"id\":";
  line += id_json;
  line += ",\"version\":";
  line += std::to_string(kProtocolVersion);
  if (result_json) {
    line += ",\"ok\":true,\"result\":";
    line += *result_json;
  } else {
    line += ",\"ok\":false,\"error\":";
    EncodeValue(line, ToWire(result_json.error()));
  }
  if (!notices_json.empty()) {
    line += ",\"notices\":";
    line += notices_json;
  }
  line += '}';
  return line;
}

Result<ReplyLine> DecodeReplyLine(std::string_view line) {
  auto parsed = ParseJson(line, {.max_depth = 128});
  auto malformed = [](std::string why) {
    return MakeError(ErrorCode::kIncompatible,
                     "batond sent a reply this baton cannot read (" + why +
                         "); is batond of another version? restart it: "
                         "baton daemon stop");
  };
  if (!parsed)
    return malformed(parsed.error().message);
  Json& object = parsed->value;
  if (!object.is_object())
    return malformed("not an object");
  ReplyLine reply;
  if (auto id = object.find("id");
      id != object.end() && id->is_number_integer())
    reply.id = id->get<int64_t>();
  auto ok = object.find("ok");
  if (ok == object.end() || !ok->is_boolean())
    return malformed("no 'ok'");
  reply.ok = ok->get<bool>();
  if (reply.ok) {
    if (auto result = object.find("result"); result != object.end())
      reply.result = std::move(*result);
    else
      reply.result = Json::object();
  } else {
    WireError error;
    auto it = object.find("error");
    if (it == object.end())
      return malformed("an error reply without 'error'");
    if (auto decoded = DecodeValue(*it, error, {}, "error"); !decoded)
      return malformed(decoded.error().message);
    reply.error = FromWire(error);
  }
  if (auto notices = object.find("notices"); notices != object.end()) {
    if (auto decoded = DecodeValue(*notices, reply.notices, {}, "notices");
        !decoded) {
      return malformed(decoded.error().message);
    }
  }
  return reply;
}

std::string WithNotices(std::string object_json,
                        const std::vector<Notice>& notices) {
  if (notices.empty() || object_json.size() < 2 || object_json.back() != '}')
    return object_json;
  object_json.pop_back();
  if (object_json.size() > 1)
    object_json += ',';
  object_json += "\"notices\":";
  EncodeValue(object_json, notices);
  object_json += '}';
  return object_json;
}

}  // namespace baton
