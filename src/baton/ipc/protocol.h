// The client protocol of batond (doc/protocol.md): one JSON object a line
// each way over the Unix socket. Requests carry "id", "op" and "session";
// replies carry the same "id", "ok", "version", then "result" or "error",
// and the session's pending "notices". This header holds the names and the
// JSON forms shared by the daemon and its clients.
#ifndef BATON_IPC_PROTOCOL_H_
#define BATON_IPC_PROTOCOL_H_

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "baton/core/task.h"
#include "baton/util/result.h"

namespace baton {

using Json = nlohmann::json;

// Bumped on incompatible changes; every reply carries it.
inline constexpr int kProtocolVersion = 1;

// The task as clients see it (field names are stable; doc/cli.md, "JSON
// output").
// `output_bytes` is included when known.
Json TaskToJson(const TaskRecord& task,
                std::optional<uint64_t> output_bytes = std::nullopt);

// TaskToJson's document as text, written directly (no JSON tree): the
// daemon's hot path for `list` and `wait` replies. Same fields and values.
void AppendTaskJson(std::string& out, const TaskRecord& task,
                    std::optional<uint64_t> output_bytes);
// The short form for tasks a `wait` still waits on: id, kind, status,
// detail, label, command, exit_code, signal.
void AppendTaskBriefJson(std::string& out, const TaskRecord& task);
// `text` as a JSON string literal, quotes included.
void AppendJsonString(std::string& out, std::string_view text);

// The command line as one string, for people ("make -j4").
std::string CommandText(const TaskSpec& spec);

Json ErrorToJson(const Error& error);
Error ErrorFromJson(const Json& error);

Json MakeErrorReply(const Json& request_id, const Error& error);

}  // namespace baton

#endif  // BATON_IPC_PROTOCOL_H_
