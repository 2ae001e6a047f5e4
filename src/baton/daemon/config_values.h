// The readers of baton's TOML config values (toml++, parsed without
// exceptions): each checks one value's type and bounds and records the
// first problem, with the file, line, column and key, in a Checker.
#ifndef BATON_DAEMON_CONFIG_VALUES_H_
#define BATON_DAEMON_CONFIG_VALUES_H_

#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "baton/util/result.h"

// toml++ as a header-only library (not Debian's libtomlplusplus.so: the
// binary carries no extra shared library), with parse errors as values,
// not exceptions (HOUSE-STYLE: our code does not throw).
#define TOML_HEADER_ONLY 1
#define TOML_EXCEPTIONS 0
#include <toml++/toml.h>

namespace baton::config_values {

// Collects the first problem; everything after it is skipped.
class Checker {
 public:
  explicit Checker(const std::string& path) : path_(path) {}

  bool failed() const { return error_.has_value(); }
  const Error& error() const { return *error_; }

  void Fail(const toml::source_region& where, std::string_view key,
            std::string_view what, ErrorCode code = ErrorCode::kInvalidConfig) {
    if (error_)
      return;
    error_ =
        Error{code, fmt::format("{}:{}:{}: {}: {}", path_, where.begin.line,
                                where.begin.column, key, what)};
  }

  std::string Line(const toml::source_region& where) const {
    return fmt::format("{}:{}", path_, where.begin.line);
  }

 private:
  const std::string& path_;
  std::optional<Error> error_;
};

std::string TypeName(const toml::node& node);
std::optional<std::string> String(Checker& check, const toml::node& node,
                                  const std::string& key);
std::optional<bool> Bool(Checker& check, const toml::node& node,
                         const std::string& key);
// A count of at least 1.
std::optional<int64_t> Count(Checker& check, const toml::node& node,
                             const std::string& key);
// A TOML number, whole or not (2 or 2.5); nullopt for anything else.
std::optional<double> AnyNumber(const toml::node& node);
// An amount of US dollars above 0 (2 or 2.5).
std::optional<double> Dollars(Checker& check, const toml::node& node,
                              const std::string& key);
// A share of CPUs: 0.01 to 65536, as thousandths (1.5 = 1500).
std::optional<int64_t> CpuMillis(Checker& check, const toml::node& node,
                                 const std::string& key);
// A list of strings; a lone string is a list of one.
std::optional<std::vector<std::string>> StringList(Checker& check,
                                                   const toml::node& node,
                                                   const std::string& key);
// "30m", "1h30m", or a number of seconds.
std::optional<std::chrono::milliseconds> Duration(Checker& check,
                                                  const toml::node& node,
                                                  const std::string& key);

}  // namespace baton::config_values

#endif  // BATON_DAEMON_CONFIG_VALUES_H_
