// Fuzzes the model spec (core/model_spec.h): any text parses or fails with
// an error, and what parses prints back as a spec that parses to the same.
#include <cstdint>
#include <string_view>

#include "baton/core/model_spec.h"
#include "fuzz/fuzz_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto spec = baton::ParseModelSpec(text);
  if (!spec) {
    FUZZ_CHECK(spec.error().code == baton::ErrorCode::kInvalidModel,
               "a bad model spec fails with invalid_model");
    FUZZ_CHECK(!spec.error().message.empty(), "the error says what is wrong");
    return 0;
  }
  std::string printed = spec->ToString();
  auto again = baton::ParseModelSpec(printed);
  FUZZ_CHECK(again.has_value(), "a parsed spec prints as a valid spec");
  FUZZ_CHECK(again->provider == spec->provider && again->model == spec->model &&
                 again->effort == spec->effort,
             "a spec survives printing and parsing again");
  return 0;
}
