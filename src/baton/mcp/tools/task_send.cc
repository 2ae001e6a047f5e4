// The `task_send` tool: a message to a running agent task, either steering
// the running turn or as a follow-up after it; says how it was delivered
// and its id. With `replace` or `withdraw`, changes a follow-up still
// queued instead.
#include <fmt/format.h>

#include "baton/mcp/tools/tools.h"

namespace baton::mcp {
namespace {

// `replace` (with `message`) or `withdraw` of a queued follow-up.
void ChangeQueued(const ToolCallPtr& call, QueuedRequest request) {
  call->Daemon(request, [call](Result<QueuedReply> reply) {
    if (!reply) {
      return call->Finish(ToolResult::Error(DaemonErrorText(reply.error()) +
                                            " (nothing was changed)"));
    }
    bool replaced = !call->arguments().contains("withdraw");
    std::string text =
        fmt::format("{}: {} {}\n", reply->task, reply->changed,
                    replaced ? "replaced: it goes in when the current turn "
                               "ends"
                             : "withdrawn: it will not be sent");
    Json queued = Json::array();
    for (const QueuedMessage& message : reply->queued) {
      text += fmt::format("still queued: {} {}\n", message.id, message.text);
      queued.push_back({{"id", message.id}, {"text", message.text}});
    }
    call->Finish({std::move(text),
                  {{"task_id", reply->task},
                   {"message_id", reply->changed},
                   {"delivery", replaced ? "replaced" : "withdrawn"},
                   {"queued", std::move(queued)}},
                  false});
  });
}

struct TaskSendArguments {
  TaskIdArgument task;
  std::string message;
  std::optional<SendMode> mode;
  std::string replace;
  std::string withdraw;
  template <class V>
  void Fields(V& v) {
    task.Fields(v);
    v("message", message,
      {.max_bytes = kMaxTextBytes,
       .doc = "What to tell the agent (with replace: the new text)",
       .example = "\"Also update the docs\""});
    v("mode", mode,
      {.doc = "steer: into the running turn; followup (the default): after "
              "it"});
    v("replace", replace,
      {.max_bytes = kMaxNameBytes,
       .doc = "The id (m-3) of a queued follow-up whose text message "
              "replaces, before it is delivered"});
    v("withdraw", withdraw,
      {.max_bytes = kMaxNameBytes,
       .doc = "The id (m-3) of a queued follow-up to withdraw, before it is "
              "delivered (no message)"});
  }
};

void HandleTaskSend(const ToolCallPtr& call) {
  auto args = ParseArguments<TaskSendArguments>(call->arguments());
  if (!args)
    return call->Finish(ToolResult::Error(args.error().message));
  const std::string& id = args->task.task_id;
  if (!args->replace.empty() && !args->withdraw.empty()) {
    return call->Finish(ToolResult::Error(
        "give either 'replace' or 'withdraw' (a queued message's id), not "
        "both"));
  }
  if ((!args->replace.empty() || !args->withdraw.empty()) && args->mode) {
    return call->Finish(ToolResult::Error(
        "argument 'mode' is for a new message; 'replace' keeps the queued "
        "message's place (a follow-up)"));
  }
  if (!args->withdraw.empty()) {
    if (!args->message.empty()) {
      return call->Finish(ToolResult::Error(
          "argument 'message' goes with 'replace', not 'withdraw'"));
    }
    return ChangeQueued(call, {.task = id, .withdraw = args->withdraw});
  }
  if (args->message.empty()) {
    return call->Finish(ToolResult::Error(
        "missing argument 'message', e.g. {\"message\": \"Also update the "
        "docs\"}"));
  }
  if (!args->replace.empty()) {
    return ChangeQueued(
        call, {.task = id, .replace = args->replace, .message = args->message});
  }
  SendRequest request{.task = id,
                      .message = args->message,
                      .mode = args->mode.value_or(SendMode::kFollowup)};
  std::string mode(WireName(request.mode));
  call->Daemon(request, [call, id, mode](Result<SendReply> reply) {
    if (!reply) {
      return call->Finish(ToolResult::Error(
          DaemonErrorText(reply.error()) +
          " (nothing was sent; an ended agent task can be continued "
          "with delegate and resume_from)"));
    }
    std::string text = fmt::format(
        "{} ({}): message {} {}\nYou will be told when it ends or asks; "
        "task_output with wait: true returns then.\n",
        id, mode, reply->id, reply->delivery);
    if (reply->delivery.starts_with("queued")) {
      text += fmt::format(
          "Until it is delivered, task_send with replace: \"{}\" (and "
          "a message) or withdraw: \"{}\" changes it.\n",
          reply->id, reply->id);
    }
    call->Finish({std::move(text),
                  {{"task_id", id},
                   {"mode", mode},
                   {"message_id", reply->id},
                   {"delivery", reply->delivery}},
                  false});
  });
}

}  // namespace

ToolDefinition TaskSendToolDefinition() {
  ToolDefinition tool;
  tool.name = "task_send";
  tool.title = "Send a message to an agent task";
  tool.description =
      "Direct a running agent task (from delegate): mode \"steer\" puts the "
      "message into its running turn (where its CLI supports that; else it "
      "is queued, and the answer says so), \"followup\" (default) sends it "
      "as the next turn once the current one ends. Answers how it was "
      "delivered, and the message's id (m-3). A follow-up still queued can "
      "be changed: replace (its id, with a new message) or withdraw (its "
      "id); once delivered, that is refused with already_delivered. To "
      "answer a question use task_answer; to continue an ended task, "
      "delegate with resume_from.";
  tool.input_schema = ArgumentSchema<TaskSendArguments>();
  tool.output_schema = {
      {"type", "object"},
      {"properties",
       {
           {"task_id", {{"type", "string"}}},
           {"mode", {{"type", "string"}, {"enum", {"followup", "steer"}}}},
           {"message_id",
            {{"type", "string"},
             {"description",
              "the message sent (or replaced, withdrawn), e.g. m-3"}}},
           {"delivery",
            {{"type", "string"},
             {"description",
              "how it was delivered, e.g. \"steered\" or \"queued until "
              "the current turn ends\"; \"replaced\" or \"withdrawn\" "
              "for a change"}}},
           {"queued",
            {{"type", "array"},
             {"description",
              "after a replace or withdraw: the follow-ups still queued"},
             {"items",
              {{"type", "object"},
               {"properties",
                {{"id", {{"type", "string"}}},
                 {"text", {{"type", "string"}}}}}}}}},
       }},
      {"required", {"task_id", "message_id", "delivery"}},
  };
  tool.annotations = {{"title", tool.title},
                      {"readOnlyHint", false},
                      {"destructiveHint", false},
                      {"idempotentHint", false},
                      {"openWorldHint", false}};
  tool.handler = HandleTaskSend;
  return tool;
}

}  // namespace baton::mcp
