// Request lines for testing the client protocol's decoder and batond: a
// valid line for every request type, and, from each type's own field list
// (ipc/messages.h), lines that each break one field: missing, of the wrong
// type, over its size, out of its range, or holding a NUL byte.
#ifndef BATON_TESTS_SUPPORT_REQUEST_CASES_H_
#define BATON_TESTS_SUPPORT_REQUEST_CASES_H_

#include <string>
#include <vector>

namespace baton::testing {

struct RequestCase {
  std::string op;
  std::string field;   // The field it breaks ("" for a valid sample).
  std::string how;     // "missing", "mistyped", "oversized", ...
  std::string line;    // The request line, with "id" and "op".
  bool valid = false;  // Must decode (a missing optional field).
};

// One valid line per request type (the smallest that decodes).
std::vector<RequestCase> ValidRequests();
// Each field of each request type, broken one way at a time.
std::vector<RequestCase> BrokenRequests();

}  // namespace baton::testing

#endif  // BATON_TESTS_SUPPORT_REQUEST_CASES_H_
