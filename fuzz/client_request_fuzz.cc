// Fuzzes the client protocol's decoder (ipc/codec.h), as batond meets it on
// its socket: the input is what a client wrote, cut into lines at '\n'
// (batond's LineChannel does the same, doc/protocol.md). Each line decodes
// without a throw to a typed request or to an error with a message; the
// reply batond would send for it is one line of JSON; and a request that
// decoded, encoded again, decodes again to the same op: what batond acts
// on is what a client can say.
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "baton/ipc/codec.h"
#include "fuzz/fuzz_checks.h"

namespace {

void CheckLine(std::string_view line) {
  auto decoded = baton::DecodeRequestLine(line);
  if (!decoded) {
    const baton::BadRequest& bad = decoded.error();
    FUZZ_CHECK(!bad.error.message.empty(), "a refused line says why");
    FUZZ_CHECK(baton::fuzz::IsOneJsonLine(bad.id_json),
               "the id of a refused line is JSON");
    std::string reply =
        baton::EncodeReplyLine(bad.id_json, std::unexpected(bad.error), "");
    FUZZ_CHECK(baton::fuzz::IsOneJsonLine(reply), "a reply is one JSON line");
    return;
  }
  FUZZ_CHECK(baton::fuzz::IsOneJsonLine(decoded->id_json),
             "a request's id is JSON");
  std::string_view op = baton::OpOf(decoded->request);
  std::string again = std::visit(
      [&](const auto& request) {
        return baton::EncodeRequestLine(7, decoded->session, request);
      },
      decoded->request);
  FUZZ_CHECK(baton::fuzz::IsOneJsonLine(again), "a request encodes as a line");
  auto redecoded = baton::DecodeRequestLine(again);
  FUZZ_CHECK(redecoded.has_value(), "a decoded request decodes again");
  FUZZ_CHECK(baton::OpOf(redecoded->request) == op,
             "a decoded request keeps its op");
  FUZZ_CHECK(redecoded->session == decoded->session,
             "a decoded request keeps its session");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  size_t start = 0;
  while (start < input.size()) {
    size_t end = input.find('\n', start);
    if (end == std::string_view::npos)
      end = input.size();
    CheckLine(input.substr(start, end - start));
    start = end + 1;
  }
  return 0;
}
