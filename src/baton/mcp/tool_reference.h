// The reference part of doc/mcp.md, written from the tools' own definitions
// (tools/*.cc: names, descriptions, schemas, annotations) and the
// initialize result's instructions, so that the page cannot lag the tools.
// A unit test compares the page with it; BATON_UPDATE_DOCS=1 rewrites it.
#ifndef BATON_MCP_TOOL_REFERENCE_H_
#define BATON_MCP_TOOL_REFERENCE_H_

#include <string>

namespace baton::mcp {

// Markdown: a section per tool (its description, annotations, arguments
// and structuredContent fields, each with its type and description), then
// the instructions as a quote.
std::string ToolReference();

}  // namespace baton::mcp

#endif  // BATON_MCP_TOOL_REFERENCE_H_
