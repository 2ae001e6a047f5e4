#include "baton/mcp/tool.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "baton/util/byte_size.h"

namespace baton::mcp {
namespace {

std::unexpected<Error> Bad(std::string message) {
  return std::unexpected(
      Error{ErrorCode::kInvalidArgument, std::move(message)});
}

}  // namespace

const Json* FindArgument(const Json& args, std::string_view name) {
  if (!args.is_object())
    return nullptr;
  auto it = args.find(name);
  if (it == args.end() || it->is_null())
    return nullptr;
  return &*it;
}

std::optional<std::vector<std::string>> NonEmptyStrings(const Json& value) {
  if (!value.is_array())
    return std::nullopt;
  std::vector<std::string> strings;
  strings.reserve(value.size());
  for (const auto& item : value) {
    const auto* text = item.get_ptr<const std::string*>();
    if (!text || text->empty())
      return std::nullopt;
    strings.push_back(*text);
  }
  return strings;
}

Result<std::vector<std::string>> ChecksArgument(const Json& args) {
  const Json* checks = FindArgument(args, "checks");
  if (!checks)
    return std::vector<std::string>{};
  auto commands = NonEmptyStrings(*checks);
  if (!commands) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("argument 'checks' must be a list of shell "
                                 "commands, e.g. {{\"checks\": [\"make "
                                 "test\"]}} (got {})",
                                 checks->dump()));
  }
  return std::move(*commands);
}

Result<ScheduleFields> ScheduleArguments(const Json& args) {
  ScheduleFields schedule;
  auto queue = OptionalString(args, "queue");
  if (!queue)
    return std::unexpected(queue.error());
  schedule.queue = std::move(*queue);
  if (const Json* priority = FindArgument(args, "priority")) {
    // An integer (JSON parsers keep a positive one unsigned); the daemon
    // checks the range and names the field.
    const auto* negative = priority->get_ptr<const Json::number_integer_t*>();
    const auto* positive = priority->get_ptr<const Json::number_unsigned_t*>();
    if (!negative && !(positive && *positive <= 1'000'000)) {
      return Bad(fmt::format(
          "argument 'priority' must be an integer from -1000000 to 1000000, "
          "higher starts first, e.g. {{\"priority\": 5}} (got {})",
          priority->dump()));
    }
    schedule.priority = negative ? *negative : static_cast<int64_t>(*positive);
  }
  if (const Json* after = FindArgument(args, "after")) {
    auto ids = NonEmptyStrings(*after);
    if (!ids) {
      return Bad(fmt::format(
          "argument 'after' must be a list of task ids, e.g. {{\"after\": "
          "[\"shell-3\"]}} (got {})",
          after->dump()));
    }
    schedule.after = std::move(*ids);
  }
  auto any = OptionalBool(args, "after_any", false);
  if (!any)
    return std::unexpected(any.error());
  schedule.after_any = *any;
  return schedule;
}

Result<RetryFields> RetryArguments(const Json& args) {
  RetryFields retry;
  if (const Json* retries = FindArgument(args, "retries")) {
    const auto* count = retries->get_ptr<const Json::number_unsigned_t*>();
    if (!count || *count > static_cast<uint64_t>(kMaxRetries)) {
      return Bad(fmt::format(
          "argument 'retries' must be a whole number from 0 to {}, e.g. "
          "{{\"retries\": 3}} (got {})",
          kMaxRetries, retries->dump()));
    }
    retry.retries = static_cast<int64_t>(*count);
  }
  auto delay = OptionalNumber(args, "retry_delay_s", 0);
  if (!delay)
    return std::unexpected(delay.error());
  if (*delay) {
    if (**delay * 1000 > static_cast<double>(kMaxRetryBackoffMs)) {
      return Bad(fmt::format(
          "argument 'retry_delay_s' must be at most 600 (10 minutes), e.g. "
          "{{\"retry_delay_s\": 5}} (got {})",
          **delay));
    }
    retry.retry_delay_ms = static_cast<int64_t>(**delay * 1000);
  }
  return retry;
}

void AddRetryProperties(Json& properties) {
  properties["retries"] = {
      {"type", "integer"},
      {"minimum", 0},
      {"maximum", kMaxRetries},
      {"description",
       "Run it again, up to this many times, when it fails or times out (not "
       "when killed): one task id, each attempt's exit and output recorded "
       "in task_status; waits see only the last end. An agent starts again "
       "from its brief"}};
  properties["retry_delay_s"] = {
      {"type", "number"},
      {"minimum", 0},
      {"description",
       "Seconds before the first retry, doubled for each next one (at most "
       "600); default 5"}};
}

void AddScheduleProperties(Json& properties) {
  properties["queue"] = {
      {"type", "string"},
      {"description",
       "A queue to wait in for a free slot (made with `baton queue add NAME "
       "--max N`); default: the default queue, which has no limit unless "
       "set"}};
  properties["priority"] = {
      {"type", "integer"},
      {"description", "Higher starts first within its queue; default 0"}};
  properties["after"] = {
      {"type", "array"},
      {"items", {{"type", "string"}}},
      {"description",
       "Task ids to start after: once all of them completed. If one fails, "
       "is killed or interrupted, this task fails without running"}};
  properties["after_any"] = {
      {"type", "boolean"},
      {"description",
       "With after: start at the first end of any of them, however it "
       "ended"}};
}

Result<SlurmFields> SlurmArguments(const Json& args) {
  SlurmFields fields;
  for (auto [name, out] :
       {std::pair("on", &fields.on), std::pair("partition", &fields.partition),
        std::pair("mem", &fields.mem), std::pair("gres", &fields.gres)}) {
    auto text = OptionalString(args, name);
    if (!text)
      return std::unexpected(text.error());
    *out = std::move(*text);
  }
  auto time = OptionalNumber(args, "time_limit_s", 1);
  if (!time)
    return std::unexpected(time.error());
  if (*time) {
    auto ms = TimeoutArgument(**time);
    if (!ms)
      return std::unexpected(ms.error());
    fields.time_limit_s = (ms->count() + 999) / 1000;
  }
  if (const Json* args_value = FindArgument(args, "sbatch_args")) {
    auto list = NonEmptyStrings(*args_value);
    if (!list) {
      return Bad(
          "argument 'sbatch_args' must be a list of sbatch options, each one "
          "string, e.g. {\"sbatch_args\": [\"--qos=high\"]}");
    }
    fields.sbatch_args = std::move(*list);
  }
  return fields;
}

void AddSlurmProperties(Json& properties) {
  properties["on"] = {
      {"type", "string"},
      {"enum", {"local", "slurm"}},
      {"description",
       "Where it runs: \"local\" (this machine, the default) or \"slurm\" "
       "(a job on the Slurm cluster; the task is queued while Slurm holds it "
       "pending)"}};
  properties["partition"] = {
      {"type", "string"},
      {"description",
       "With on: slurm, the partition; default: the config's "
       "or the cluster's"}};
  properties["time_limit_s"] = {
      {"type", "number"},
      {"exclusiveMinimum", 0},
      {"description",
       "With on: slurm, the job's time limit in seconds, rounded up to whole "
       "minutes; past it Slurm ends it (killed, timed out)"}};
  properties["mem"] = {
      {"type", "string"},
      {"description", "With on: slurm, memory for it, e.g. \"4G\""}};
  properties["gres"] = {
      {"type", "string"},
      {"description", "With on: slurm, generic resources, e.g. \"gpu:1\""}};
  properties["sbatch_args"] = {
      {"type", "array"},
      {"items", {{"type", "string"}}},
      {"description",
       "With on: slurm, more sbatch options, e.g. [\"--qos=high\"]"}};
}

Result<LimitFields> LimitArguments(const Json& args) {
  LimitFields fields;
  auto memory = OptionalString(args, "memory");
  if (!memory)
    return std::unexpected(memory.error());
  if (!memory->empty()) {
    auto bytes = ParseByteSize(*memory);
    if (!bytes) {
      return Bad(
          fmt::format("argument 'memory': {}, e.g. {{\"memory\": "
                      "\"2G\"}}",
                      bytes.error().message));
    }
    fields.memory_bytes = *bytes;
  }
  auto cpus = OptionalNumber(args, "cpus", 0);
  if (!cpus)
    return std::unexpected(cpus.error());
  fields.cpus = *cpus;
  auto pids = OptionalCount(args, "pids");
  if (!pids)
    return std::unexpected(pids.error());
  fields.pids = *pids;
  return fields;
}

void AddLimitProperties(Json& properties) {
  properties["memory"] = {
      {"type", "string"},
      {"description",
       "Memory for all its processes together, e.g. \"2G\" (at least "
       "1M); past it they are killed and the task fails, out of memory. "
       "With on: slurm, the job's memory"}};
  properties["cpus"] = {
      {"type", "number"},
      {"exclusiveMinimum", 0},
      {"description",
       "CPU time it may use, in CPUs, e.g. 1.5. With on: slurm, whole CPUs "
       "for the job"}};
  properties["pids"] = {
      {"type", "integer"},
      {"minimum", 1},
      {"description", "Processes and threads it may have at once"}};
}

Result<std::string> RequiredString(const Json& args, std::string_view name,
                                   std::string_view example) {
  const Json* value = FindArgument(args, name);
  if (!value) {
    return Bad(
        fmt::format("missing argument '{}': give it as a string, e.g. "
                    "{{\"{}\": {}}}",
                    name, name, example));
  }
  const auto* text = value->get_ptr<const std::string*>();
  if (!text || text->empty()) {
    return Bad(
        fmt::format("argument '{}' must be a non-empty string, e.g. "
                    "{{\"{}\": {}}} (got {})",
                    name, name, example, value->dump()));
  }
  return *text;
}

Result<std::string> OptionalString(const Json& args, std::string_view name) {
  const Json* value = FindArgument(args, name);
  if (!value)
    return std::string();
  const auto* text = value->get_ptr<const std::string*>();
  if (!text) {
    return Bad(fmt::format("argument '{}' must be a string (got {})", name,
                           value->dump()));
  }
  return *text;
}

Result<bool> OptionalBool(const Json& args, std::string_view name,
                          bool fallback) {
  const Json* value = FindArgument(args, name);
  if (!value)
    return fallback;
  const auto* flag = value->get_ptr<const bool*>();
  if (!flag) {
    return Bad(fmt::format("argument '{}' must be true or false (got {})", name,
                           value->dump()));
  }
  return *flag;
}

Result<std::optional<double>> OptionalNumber(const Json& args,
                                             std::string_view name,
                                             double minimum) {
  const Json* value = FindArgument(args, name);
  if (!value)
    return std::optional<double>();
  double number = 0;
  if (!DecodeValue(*value, number, {}, name) || !std::isfinite(number) ||
      number < minimum) {
    return Bad(fmt::format("argument '{}' must be a number >= {} (got {})",
                           name, minimum, value->dump()));
  }
  return std::optional(number);
}

Result<std::optional<int64_t>> OptionalCount(const Json& args,
                                             std::string_view name,
                                             int64_t minimum) {
  const Json* value = FindArgument(args, name);
  if (!value)
    return std::optional<int64_t>();
  int64_t count = 0;
  if (!DecodeValue(*value, count, {.min = minimum}, name)) {
    return Bad(fmt::format(
        "argument '{}' must be a whole number >= {}, e.g. {{\"{}\": 20}} "
        "(got {})",
        name, minimum, name, value->dump()));
  }
  return std::optional(count);
}

Result<std::optional<double>> TimeoutSeconds(const Json& args,
                                             std::string_view when_absent) {
  const Json* value = FindArgument(args, "timeout_s");
  if (!value)
    return std::optional<double>();
  double seconds = 0;
  if (!DecodeValue(*value, seconds, {}, "timeout_s") ||
      !std::isfinite(seconds) || seconds <= 0) {
    return Bad(fmt::format(
        "argument 'timeout_s' must be a number of seconds > 0 (got {}); "
        "leave it out for {}",
        value->dump(), when_absent));
  }
  return std::optional(seconds);
}

Result<std::chrono::milliseconds> TimeoutArgument(double seconds) {
  constexpr double kMaxSeconds = static_cast<double>(kMaxTimeoutMs) / 1000;
  if (!(seconds <= kMaxSeconds)) {
    return Bad(fmt::format(
        "argument 'timeout_s' must be at most {:.0f} seconds (366 days)",
        kMaxSeconds));
  }
  return std::chrono::milliseconds(
      std::max<int64_t>(1, std::llround(seconds * 1000.0)));
}

Result<std::vector<std::string>> TaskIdsArgument(const Json& args) {
  std::vector<std::string> ids;
  auto add = [&ids](const std::string& id) {
    if (std::find(ids.begin(), ids.end(), id) == ids.end())
      ids.push_back(id);
  };
  if (const Json* id = FindArgument(args, "task_id")) {
    const auto* text = id->get_ptr<const std::string*>();
    if (!text || text->empty()) {
      return Bad(fmt::format(
          "argument 'task_id' must be a task id string such as \"shell-1\" "
          "(got {})",
          id->dump()));
    }
    add(*text);
  }
  if (const Json* list = FindArgument(args, "task_ids")) {
    if (!list->is_array()) {
      return Bad(
          fmt::format("argument 'task_ids' must be a list of task ids, e.g. "
                      "[\"shell-1\", \"shell-2\"] (got {})",
                      list->dump()));
    }
    for (const auto& id : *list) {
      const auto* text = id.get_ptr<const std::string*>();
      if (!text || text->empty()) {
        return Bad(fmt::format(
            "every entry of 'task_ids' must be a task id string such as "
            "\"shell-1\" (got {})",
            id.dump()));
      }
      add(*text);
    }
  }
  if (ids.empty()) {
    return Bad(
        "give the task: {\"task_id\": \"shell-1\"} or several with "
        "{\"task_ids\": [\"shell-1\", \"shell-2\"]}; task_list shows your "
        "tasks");
  }
  return ids;
}

Status CheckKnownArguments(const Json& args,
                           const std::vector<std::string_view>& known) {
  if (!args.is_object())
    return {};
  for (const auto& [key, value] : args.items()) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      std::string names;
      for (auto name : known)
        names += fmt::format("{}{}", names.empty() ? "" : ", ", name);
      return Bad(fmt::format("unknown argument '{}'; this tool takes: {}", key,
                             names));
    }
  }
  return {};
}

}  // namespace baton::mcp
