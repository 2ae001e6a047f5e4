// doc/protocol.md's reference part, written from the messages themselves
// (ipc/messages.h, ipc/codec.h): every request with its fields and its
// reply's, the task object, the limits. A unit test keeps the page equal
// to it (BATON_UPDATE_DOCS=1 rewrites the page).
#ifndef BATON_IPC_PROTOCOL_DOC_H_
#define BATON_IPC_PROTOCOL_DOC_H_

#include <string>
#include <string_view>

namespace baton {

// Markdown, from "## Requests" to the end of "## Limits".
std::string ProtocolReference();

// `text` as one cell of a Markdown table: bars escaped, line breaks as
// spaces. Also for the other generated references (mcp/tool_reference.h).
std::string MarkdownCell(std::string_view text);

}  // namespace baton

#endif  // BATON_IPC_PROTOCOL_DOC_H_
