// The `worktrees` tool: the git worktrees this session's agent workers ran
// in (delegate with worktree: true), as git tells them now, and with clean,
// the removal of those that lose nothing (doc/agents.md, "Worktrees"). The
// protocol's `worktrees` request; batond runs git off its loop.
#include <fmt/format.h>

#include "baton/mcp/tools/tools.h"
#include "baton/util/environment.h"
#include "baton/util/json_fields.h"

namespace baton::mcp {
namespace {

struct WorktreesArguments {
  std::vector<std::string> task_ids;
  bool clean = false;
  bool force = false;
  template <class V>
  void Fields(V& v) {
    v("task_ids", task_ids,
      {.max_bytes = kMaxNameBytes,
       .max_items = kMaxTaskIds,
       .doc = "Only these agent tasks' worktrees; default: all of this "
              "session's. With clean, a task named here loses its worktree "
              "even when its branch is not merged (the branch stays)",
       .example = "[\"agent-3\"]"});
    v("clean", clean,
      {.doc = "Remove the worktrees of ended tasks whose branches are merged "
              "into the repository's HEAD (and those branches), and of the "
              "tasks named; never a running task's, never uncommitted work "
              "without force. Default false: only list"});
    v("force", force,
      {.doc = "With clean: discard uncommitted changes in them too"});
  }
};

void HandleWorktrees(const ToolCallPtr& call) {
  auto args = ParseArguments<WorktreesArguments>(call->arguments());
  if (!args)
    return call->Finish(ToolResult::Error(args.error().message));
  WorktreesRequest request{.tasks = args->task_ids,
                           .clean = args->clean,
                           .force = args->force,
                           .base_env = ProcessEnvironment()};
  call->Daemon(request, [call](Result<WorktreesReply> reply) {
    if (!reply) {
      return call->Finish(ToolResult::Error(DaemonErrorText(reply.error()) +
                                            " (nothing was removed)"));
    }
    std::string text;
    for (const WorktreeInfo& info : reply->worktrees) {
      text += fmt::format("{} [{}] {} {}: {}", info.task, info.status,
                          info.branch, info.path, info.state);
      if (!info.outcome.empty())
        text += fmt::format("; {}", info.outcome);
      if (!info.note.empty())
        text += fmt::format(": {}", info.note);
      text += "\n";
    }
    if (reply->worktrees.empty())
      text = "no worktrees (delegate with worktree: true makes one)\n";
    // The fields as WorktreesReply lists them, read back as a value.
    Json structured = {{"worktrees", Json::array()}};
    if (auto parsed = ParseJson(EncodeObject(*reply)))
      structured = std::move(parsed->value);
    call->Finish({std::move(text), std::move(structured), false});
  });
}

}  // namespace

ToolDefinition WorktreesToolDefinition() {
  ToolDefinition tool;
  tool.name = "worktrees";
  tool.title = "List or clean agents' worktrees";
  tool.description =
      "The git worktrees this session's agent tasks worked in (delegate "
      "with worktree: true), each with its branch and its state as git "
      "tells it now: merged, commits not merged, uncommitted changes, or "
      "its task still running. With clean: true, removes those that lose "
      "nothing (merged, ended, committed) and those of the tasks named in "
      "task_ids (keeping their branches); a running task's worktree and "
      "uncommitted work (without force) are never removed.";
  tool.input_schema = ArgumentSchema<WorktreesArguments>();
  Json entry = {
      {"type", "object"},
      {"properties",
       {{"task", {{"type", "string"}}},
        {"status", {{"type", "string"}}},
        {"repo", {{"type", "string"}}},
        {"path", {{"type", "string"}}},
        {"branch", {{"type", "string"}}},
        {"base", {{"type", "string"}}},
        {"exists", {{"type", "boolean"}}},
        {"branch_exists", {{"type", "boolean"}}},
        {"merged", {{"type", "boolean"}}},
        {"commits_not_merged", {{"type", "integer"}}},
        {"uncommitted", {{"type", "boolean"}}},
        {"state", {{"type", "string"}, {"description", "for people"}}},
        {"outcome",
         {{"type", "string"},
          {"enum", {"removed", "kept"}},
          {"description", "with clean"}}},
        {"note",
         {{"type", "string"},
          {"description",
           "with clean: why it was kept, or what became of its branch"}}}}},
      {"required", {"task", "path", "branch", "state"}}};
  tool.output_schema = {
      {"type", "object"},
      {"properties",
       {{"worktrees", {{"type", "array"}, {"items", std::move(entry)}}}}},
      {"required", {"worktrees"}}};
  // clean removes folders (never uncommitted work without force).
  tool.annotations = {{"title", tool.title},
                      {"readOnlyHint", false},
                      {"destructiveHint", true},
                      {"idempotentHint", true},
                      {"openWorldHint", false}};
  tool.handler = HandleWorktrees;
  return tool;
}

}  // namespace baton::mcp
