// The `land` and `land_queue` tools: the merge queue (doc/land.md). `land`
// queues finished worktree workers' branches to land, checked, on their
// target branch (the protocol's `land`); `land_queue` lists the entries,
// each with its state, reason and resulting commit (`lands`).
#include <fmt/format.h>

#include "baton/mcp/tools/tools.h"
#include "baton/util/json_fields.h"

namespace baton::mcp {
namespace {

struct LandArguments {
  std::vector<std::string> task_ids;
  LandTargetFields target;
  template <class V>
  void Fields(V& v) {
    v("task_ids", task_ids,
      {.required = true,
       .max_bytes = kMaxNameBytes,
       .max_items = kMaxTaskIds,
       .doc = "Your agent tasks delegated with worktree: true that ended "
              "completed, in the order they land",
       .example = "[\"agent-3\", \"agent-4\"]"});
    target.Fields(v);
  }
};

struct LandQueueArguments {
  std::string task_id;
  template <class V>
  void Fields(V& v) {
    v("task_id", task_id,
      {.max_bytes = kMaxNameBytes,
       .doc = "Only the entries of this task; default: all of yours",
       .example = "\"agent-3\""});
  }
};

std::string EntryText(const LandEntry& entry) {
  std::string text =
      fmt::format("{} {} ({} onto {}): {}", entry.id, entry.task, entry.branch,
                  entry.target, EnumName(entry.state));
  if (!entry.result.empty())
    text += " at " + entry.result.substr(0, 12);
  if (!entry.reason.empty())
    text += "; " + entry.reason;
  if (!entry.output.empty())
    text += "\n" + entry.output;
  return text;
}

// The reply's fields as the protocol lists them, read back.
template <class R>
Json Structured(const R& reply) {
  auto parsed = ParseJson(EncodeObject(reply));
  return parsed ? std::move(parsed->value) : Json{{"entries", Json::array()}};
}

void HandleLand(const ToolCallPtr& call) {
  auto args = ParseArguments<LandArguments>(call->arguments());
  if (!args)
    return call->Finish(ToolResult::Error(args.error().message));
  call->Daemon(LandRequest{.tasks = args->task_ids, .target = args->target},
               [call](Result<LandReply> reply) {
                 if (!reply)
                   return call->Finish(
                       ToolResult::Error(DaemonErrorText(reply.error())));
                 std::string text;
                 for (const LandEntry& entry : reply->entries)
                   text += EntryText(entry) + "\n";
                 text += "land_queue shows how each goes.\n";
                 call->Finish({std::move(text), Structured(*reply), false});
               });
}

void HandleLandQueue(const ToolCallPtr& call) {
  auto args = ParseArguments<LandQueueArguments>(call->arguments());
  if (!args)
    return call->Finish(ToolResult::Error(args.error().message));
  call->Daemon(LandsRequest{.task = args->task_id},
               [call](Result<LandsReply> reply) {
                 if (!reply) {
                   return call->Finish(
                       ToolResult::Error(DaemonErrorText(reply.error())));
                 }
                 std::string text;
                 for (const LandEntry& entry : reply->entries)
                   text += EntryText(entry) + "\n";
                 if (reply->entries.empty())
                   text = "the merge queue is empty\n";
                 call->Finish({std::move(text), Structured(*reply), false});
               });
}

Json EntriesSchema() {
  Json entry = {
      {"type", "object"},
      {"properties",
       {{"id", {{"type", "integer"}}},
        {"task", {{"type", "string"}}},
        {"branch", {{"type", "string"}}},
        {"target", {{"type", "string"}}},
        {"state",
         {{"type", "string"},
          {"enum", {"queued", "testing", "landed", "failed"}}}},
        {"result", {{"type", "string"}}},
        {"reason", {{"type", "string"}}},
        {"output", {{"type", "string"}}},
        {"files", {{"type", "array"}, {"items", {{"type", "string"}}}}}}},
      {"required", {"id", "task", "target", "state"}}};
  return {{"type", "array"}, {"items", std::move(entry)}};
}

}  // namespace

ToolDefinition LandToolDefinition() {
  ToolDefinition tool;
  tool.name = "land";
  tool.title = "Land finished workers' branches";
  tool.description =
      "Queues the branches of your agent workers that ran in git worktrees "
      "(delegate with worktree: true) and ended completed, to land on their "
      "target branch: baton brings each onto the target's tip in a scratch "
      "worktree (rebase, or merge as the repository's git config "
      "baton.landStrategy says), runs the land check, and moves the target "
      "forward only when it is green. Several queued are tested together; a "
      "red batch is split to find the branch that broke it. A conflict or a "
      "red check fails that entry with the files or the check's output. "
      "land_queue shows each entry's state.";
  tool.input_schema = ArgumentSchema<LandArguments>();
  tool.output_schema = {{"type", "object"},
                        {"properties", {{"entries", EntriesSchema()}}},
                        {"required", {"entries"}}};
  tool.annotations = {{"title", tool.title},
                      {"readOnlyHint", false},
                      {"destructiveHint", false},
                      {"idempotentHint", false},
                      {"openWorldHint", false}};
  tool.handler = HandleLand;
  return tool;
}

ToolDefinition LandQueueToolDefinition() {
  ToolDefinition tool;
  tool.name = "land_queue";
  tool.title = "List the merge queue";
  tool.description =
      "Lists the merge queue's entries of your tasks (queued with the land "
      "tool): each one's state (queued, testing, landed, failed), the "
      "target branch, the commit it landed as, or why it failed (the "
      "conflicting files and hunks, or the check's output).";
  tool.input_schema = ArgumentSchema<LandQueueArguments>();
  tool.output_schema = {
      {"type", "object"},
      {"properties",
       {{"entries", EntriesSchema()}, {"check_runs", {{"type", "integer"}}}}},
      {"required", {"entries"}}};
  tool.annotations = {{"title", tool.title},
                      {"readOnlyHint", true},
                      {"destructiveHint", false},
                      {"idempotentHint", true},
                      {"openWorldHint", false}};
  tool.handler = HandleLandQueue;
  return tool;
}

}  // namespace baton::mcp
