// Fuzzes baton's TOML config file (daemon/agent_profiles.h,
// ParseAgentConfig, the parse behind LoadAgentConfig): any text is a config
// or an invalid_config/invalid_model error that names where, and a config
// that parses gives usable profiles.
#include <cstdint>
#include <string>
#include <string_view>

#include "baton/daemon/agent_profiles.h"
#include "fuzz/fuzz_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = baton::ParseAgentConfig(text, "fuzz.toml");
  if (!config) {
    FUZZ_CHECK(config.error().code == baton::ErrorCode::kInvalidConfig ||
                   config.error().code == baton::ErrorCode::kInvalidModel,
               "a bad config fails with invalid_config or invalid_model");
    FUZZ_CHECK(config.error().message.rfind("fuzz.toml", 0) == 0,
               "the error names the file");
    return 0;
  }
  for (const auto& profile : config->profiles) {
    FUZZ_CHECK(!profile.name.empty(), "a profile has a name");
    auto found = config->Find(profile.name);
    FUZZ_CHECK(found.has_value(), "each profile can be found by its name");
    (void)found->ArgvPrefix();
  }
  (void)config->Find(config->default_agent);
  return 0;
}
