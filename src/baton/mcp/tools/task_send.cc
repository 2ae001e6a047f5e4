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

void HandleTaskSend(const ToolCallPtr& call) {
  const Json& args = call->arguments();
  if (auto known = CheckKnownArguments(
          args, {"task_id", "message", "mode", "replace", "withdraw"});
      !known) {
    return call->Finish(ToolResult::Error(known.error().message));
  }
  auto id = RequiredString(args, "task_id", "\"agent-1\"");
  if (!id)
    return call->Finish(ToolResult::Error(id.error().message));
  auto replace = OptionalString(args, "replace");
  if (!replace)
    return call->Finish(ToolResult::Error(replace.error().message));
  auto withdraw = OptionalString(args, "withdraw");
  if (!withdraw)
    return call->Finish(ToolResult::Error(withdraw.error().message));
  if (!replace->empty() && !withdraw->empty()) {
    return call->Finish(ToolResult::Error(
        "give either 'replace' or 'withdraw' (a queued message's id), not "
        "both"));
  }
  if ((!replace->empty() || !withdraw->empty()) && args.contains("mode")) {
    return call->Finish(ToolResult::Error(
        "argument 'mode' is for a new message; 'replace' keeps the queued "
        "message's place (a follow-up)"));
  }
  if (!withdraw->empty()) {
    if (args.contains("message")) {
      return call->Finish(ToolResult::Error(
          "argument 'message' goes with 'replace', not 'withdraw'"));
    }
    return ChangeQueued(call, {.task = *id, .withdraw = *withdraw});
  }
  auto message = RequiredString(args, "message", "\"Also update the docs\"");
  if (!message)
    return call->Finish(ToolResult::Error(message.error().message));
  auto mode = OptionalString(args, "mode");
  if (!mode)
    return call->Finish(ToolResult::Error(mode.error().message));
  if (!replace->empty()) {
    return ChangeQueued(
        call, {.task = *id, .replace = *replace, .message = *message});
  }
  if (mode->empty())
    *mode = "followup";
  if (*mode != "followup" && *mode != "steer") {
    return call->Finish(ToolResult::Error(fmt::format(
        "argument 'mode' must be \"followup\" (after the current turn) or "
        "\"steer\" (into the running turn) (got \"{}\")",
        *mode)));
  }
  SendRequest request{
      .task = *id,
      .message = *message,
      .mode = *mode == "steer" ? SendMode::kSteer : SendMode::kFollowup};
  call->Daemon(
      request, [call, id = *id, mode = *mode](Result<SendReply> reply) {
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
  tool.input_schema = {
      {"type", "object"},
      {"properties",
       {
           {"task_id",
            {{"type", "string"},
             {"description", "The agent task id, e.g. agent-1"}}},
           {"message",
            {{"type", "string"},
             {"description",
              "What to tell the agent (with replace: the new text)"}}},
           {"mode",
            {{"type", "string"},
             {"enum", {"followup", "steer"}},
             {"default", "followup"},
             {"description",
              "steer: into the running turn; followup: after it"}}},
           {"replace",
            {{"type", "string"},
             {"description",
              "The id (m-3) of a queued follow-up whose text message "
              "replaces, before it is delivered"}}},
           {"withdraw",
            {{"type", "string"},
             {"description",
              "The id (m-3) of a queued follow-up to withdraw, before it "
              "is delivered (no message)"}}},
       }},
      {"required", {"task_id"}},
      {"additionalProperties", false},
  };
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
