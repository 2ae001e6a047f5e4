#include "baton/daemon/agent_event_log.h"

#include <fcntl.h>
#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "baton/util/clock.h"
#include "baton/util/file_util.h"
#include "baton/util/log.h"

namespace baton {
namespace {

using Json = nlohmann::json;

std::string Seqs(int64_t from, int64_t to) {
  return from == to ? fmt::format("event {}", from)
                    : fmt::format("events {} to {}", from, to);
}

}  // namespace

std::vector<Json> ReadAgentEvents(const std::string& path) {
  std::vector<Json> events;
  auto text = ReadFile(path);
  if (!text)
    return events;
  size_t start = 0;
  for (size_t nl; (nl = text->find('\n', start)) != std::string::npos;
       start = nl + 1) {
    Json event = Json::parse(text->substr(start, nl - start), nullptr, false);
    if (event.is_object())
      events.push_back(std::move(event));
  }
  return events;
}

AgentEventLog::AgentEventLog(UniqueFd fd, int64_t last_seq, std::string name)
    : fd_(std::move(fd)), last_seq_(last_seq), name_(std::move(name)) {}

AgentEventLog AgentEventLog::Open(const std::string& path, int64_t last_seq) {
  UniqueFd fd(
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600));
  std::string open_error;
  if (!fd) {
    open_error = fmt::format("cannot open it: {}", std::strerror(errno));
    BATON_LOG_ERROR("{}: {}; the task's events are not recorded", path,
                    open_error);
  }
  AgentEventLog log(std::move(fd), last_seq, path);
  log.open_error_ = std::move(open_error);
  return log;
}

Status AgentEventLog::Write(const Json& event) {
  if (!fd_)
    return MakeError(ErrorCode::kIo, open_error_);
  // After a failure the file may end in a torn line: end it first, so the
  // next event reads whole (readers skip the torn one).
  std::string line = lost_from_ != 0 ? "\n" : "";
  line += event.dump(-1, ' ', false, Json::error_handler_t::replace);
  line += '\n';
  return WriteAll(fd_.get(), line);
}

Status AgentEventLog::Append(Json& event) {
  if (lost_from_ != 0 && fd_) {
    Json gap = {
        {"type", "error"},
        {"source", "batond"},
        {"message", fmt::format("batond could not record {} in {} "
                                "({}); they are missing here",
                                Seqs(lost_from_, lost_to_), name_, lost_why_)},
        {"lost", {lost_from_, lost_to_}}};
    gap["seq"] = ++last_seq_;
    gap["at"] = FormatIsoTime(WallMillis());
    if (Write(gap)) {
      BATON_LOG_WARN("{}: recording again; {} are missing", name_,
                     Seqs(lost_from_, lost_to_));
      lost_from_ = 0;
    } else {
      lost_to_ = last_seq_;
    }
  }
  int64_t seq = ++last_seq_;
  event["seq"] = seq;
  event["at"] = FormatIsoTime(WallMillis());
  Status written = Write(event);
  if (written)
    return {};
  lost_why_ = written.error().message;
  if (lost_from_ == 0) {
    lost_from_ = seq;
    BATON_LOG_ERROR(
        "{}: cannot record event {} ({}); events are missing "
        "until a write succeeds",
        name_, seq, lost_why_);
  }
  lost_to_ = seq;
  return MakeError(ErrorCode::kIo,
                   fmt::format("could not record event {} in {} ({})", seq,
                               name_, lost_why_),
                   written.error().sys_errno);
}

}  // namespace baton
