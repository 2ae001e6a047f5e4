// How an agent task's events read as text: the one renderer for every
// reader. An event is the JSON object batond appends to
// tasks/<id>/events.jsonl and the `events` op returns (doc/agents.md): a
// "type" (text, tool, session, question, answer, question_withdrawn,
// message, delivered, result, error, note), a "seq", and the type's fields.
// Pure functions. Any shape is taken: a field that is missing or of another
// type reads as empty (0, false), never as an exception.
#ifndef BATON_IPC_EVENT_TEXT_H_
#define BATON_IPC_EVENT_TEXT_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "baton/ipc/messages.h"

namespace baton {

// One line for `baton events`, without the newline: the seq right-aligned
// in 4, the type left-aligned in 9, then what the event says
// ("  12 result    ok: turn ended — Done"). A type without a form of its
// own shows its other fields as JSON.
std::string EventLine(const nlohmann::json& event);

// An answer as batond records it (one entry per item: "skip", the labels
// chosen, or the text typed) in words: "Postgres", "a, b; skipped" (the
// board's page reads them the same way).
std::string AnswersText(const nlohmann::json& answers);

// What the event adds to the transcript batond writes to the task's
// output.log, newline included ("" for the types it leaves out: session).
std::string TranscriptText(const nlohmann::json& event);

// The items of a question that `asker` (a task id) asks, for a reader who
// answers it: per item "<asker> asks (<header>): <prompt>", its options
// numbered from 1 ("  [1] label — description"), and a line when several
// may be chosen.
std::string AskedItemsText(std::string_view asker,
                           const std::vector<QuestionItem>& items);

}  // namespace baton

#endif  // BATON_IPC_EVENT_TEXT_H_
