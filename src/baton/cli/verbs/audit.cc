// `baton audit`: the audit trail (doc/audit.md), each control action on
// tasks and on batond with who did it, when, what and why; every
// session's, oldest first.
#include <fmt/format.h>

#include <cstdio>
#include <ctime>

#include "baton/cli/format.h"
#include "baton/cli/verbs.h"
#include "baton/util/clock.h"
#include "baton/util/duration.h"
#include "baton/util/terminal_text.h"

namespace baton {
namespace {

struct AuditArgs {
  std::string task, since;
  int64_t limit = 100;
};

// A local date and time as people type it: "2026-12-03",
// "2026-12-03 14:00", "2026-12-03T14:00:30".
std::optional<int64_t> ParseLocalTime(const std::string& text) {
  for (const char* format : {"%Y-%m-%d", "%Y-%m-%d %H:%M", "%Y-%m-%d %H:%M:%S",
                             "%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S"}) {
    struct tm local {};
    const char* end = ::strptime(text.c_str(), format, &local);
    if (end == nullptr || *end != '\0')
      continue;
    local.tm_isdst = -1;  // Whatever daylight saving time says that day.
    time_t seconds = std::mktime(&local);
    if (seconds == -1)
      return std::nullopt;
    return static_cast<int64_t>(seconds) * 1000;
  }
  return std::nullopt;
}

// --since: how long ago (a duration), or when (local, or UTC as --json
// prints it), in ms since the epoch.
Result<int64_t> SinceMillis(const std::string& text) {
  if (auto ago = ParseDuration(text); ago)
    return std::max<int64_t>(WallMillis() - ago->count(), 0);
  if (auto utc = ParseIsoTime(text); utc)
    return *utc;
  if (auto local = ParseLocalTime(text); local && *local >= 0)
    return *local;
  return MakeError(ErrorCode::kInvalidArgument,
                   fmt::format("--since '{}' is neither a duration (90m, 2h) "
                               "nor a date and time (2026-12-03, "
                               "'2026-12-03 14:00', local; or "
                               "2026-12-03T14:00:00Z, UTC)",
                               text));
}

// "2026-12-03 14:02:11  kill          shell-3    mcp, session build (uid
// 1000, pid 4242): SIGTERM, then SIGKILL after 5s; why: stuck"
std::string RecordLine(const AuditRecord& record) {
  std::string who = record.client.empty() ? "a client" : record.client;
  if (!record.session.empty())
    who += ", session " + record.session;
  // What a client sent (its session's name, a reason, a label in the
  // detail) is shown with its control characters written out.
  who += fmt::format(" (uid {}, pid {})", record.uid, record.pid);
  std::string line =
      fmt::format("{}  {:<13} {:<10} {}",
                  LocalDateTime(record.at_ms, /*zone=*/false), record.action,
                  record.task.empty() ? "-" : record.task, TerminalSafe(who));
  if (!record.detail.empty())
    line += ": " + TerminalSafe(record.detail);
  if (!record.reason.empty())
    line += "; why: " + TerminalSafe(record.reason);
  return line + "\n";
}

int DoAudit(const Context& ctx, const AuditArgs& args) {
  AuditRequest request{.task = args.task, .limit = args.limit};
  if (!args.since.empty()) {
    auto since = SinceMillis(args.since);
    if (!since)
      return ReportError(ctx, since.error());
    request.since_ms = *since;
  }
  return CallAndPrint(ctx, request, [&](const AuditReply& reply) {
    if (reply.records.empty()) {
      std::puts(args.task.empty() && args.since.empty()
                    ? "no actions recorded yet"
                    : "no actions match");
    }
    for (const AuditRecord& record : reply.records)
      std::fputs(RecordLine(record).c_str(), stdout);
    return kExitOk;
  });
}

}  // namespace

void DefineAudit(CLI::App& command, const Context& ctx, Action& action) {
  auto args = std::make_shared<AuditArgs>();
  command.add_option("--task", args->task, "Only this task's actions");
  command.add_option("--since", args->since,
                     "Only actions since then: a duration ago (2h) or a "
                     "date and time (2026-12-03, '2026-12-03 14:00')");
  command
      .add_option("--limit", args->limit,
                  "At most the newest N matching actions (default 100)")
      ->check(WholeNumber(1, kMaxAuditLimit));
  command.callback([&ctx, &action, args] {
    action = [&ctx, args] { return DoAudit(ctx, *args); };
  });
}

}  // namespace baton
