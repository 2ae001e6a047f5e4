// The generated part of a page in doc/ (between two marker lines), held
// equal to what the code writes: the protocol reference, the MCP tool
// reference. With BATON_UPDATE_DOCS=1 the page is rewritten instead.
#ifndef BATON_TESTS_SUPPORT_GENERATED_DOC_H_
#define BATON_TESTS_SUPPORT_GENERATED_DOC_H_

#include <string>
#include <string_view>

namespace baton::testing {

// Expects the lines between `begin` and `end` (each a whole line with its
// newline) in doc/`page` to be `generated`; the failure names
// `update_command`, which rewrites them.
void ExpectGeneratedPart(std::string_view page, std::string_view begin,
                         std::string_view end, const std::string& generated,
                         std::string_view update_command);

}  // namespace baton::testing

#endif  // BATON_TESTS_SUPPORT_GENERATED_DOC_H_
