#include "baton/serve/http_checks.h"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <cctype>
#include <charconv>

namespace baton::serve {
namespace {

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t'))
    text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t'))
    text.remove_suffix(1);
  return text;
}

bool IsIpLiteral(const std::string& host) {
  in_addr v4{};
  in6_addr v6{};
  return ::inet_pton(AF_INET, host.c_str(), &v4) == 1 ||
         ::inet_pton(AF_INET6, host.c_str(), &v6) == 1;
}

}  // namespace

Result<ListenAddress> ParseListenAddress(std::string_view text) {
  auto usage = [&](std::string_view why) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("--listen {}: {} (give HOST:PORT, e.g. "
                                 "127.0.0.1:7420, [::1]:7420, or port 0 "
                                 "for any free port)",
                                 text, why));
  };
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos)
    return usage("no port");
  std::string_view host = text.substr(0, colon);
  std::string_view port_text = text.substr(colon + 1);
  unsigned port = 0;
  auto [end, error] = std::from_chars(
      port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || error != std::errc() ||
      end != port_text.data() + port_text.size() || port > 65535) {
    return usage("the port is not a number from 0 to 65535");
  }
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  ListenAddress address;
  address.host = host == "localhost" ? "127.0.0.1" : std::string(host);
  address.port = static_cast<uint16_t>(port);
  if (address.host.empty() || !IsIpLiteral(address.host))
    return usage("the host is not an IP address");
  return address;
}

bool IsLoopbackHost(std::string_view host) {
  std::string text(host);
  in_addr v4{};
  if (::inet_pton(AF_INET, text.c_str(), &v4) == 1)
    return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (::inet_pton(AF_INET6, text.c_str(), &v6) == 1)
    return IN6_IS_ADDR_LOOPBACK(&v6);
  return host == "localhost";
}

std::string Authority(std::string_view host, uint16_t port) {
  if (host.find(':') != std::string_view::npos)
    return fmt::format("[{}]:{}", host, port);
  return fmt::format("{}:{}", host, port);
}

HostPolicy::HostPolicy(const ListenAddress& listen, uint16_t bound_port,
                       const std::vector<std::string>& extra_hosts) {
  std::vector<std::string> hosts = {"localhost", "127.0.0.1", "::1",
                                    listen.host};
  hosts.insert(hosts.end(), extra_hosts.begin(), extra_hosts.end());
  for (const auto& host : hosts) {
    authorities_.insert(Lower(Authority(host, bound_port)));
    // A client may leave out the default port.
    if (bound_port == 80)
      authorities_.insert(
          Lower(host.find(':') == std::string::npos ? host : "[" + host + "]"));
  }
}

bool HostPolicy::HostAllowed(std::string_view host) const {
  return authorities_.count(Lower(Trim(host))) > 0;
}

bool HostPolicy::OriginAllowed(const std::string* origin) const {
  if (!origin)
    return true;
  std::string_view value = Trim(*origin);
  constexpr std::string_view kScheme = "http://";
  if (value.size() <= kScheme.size() ||
      Lower(value.substr(0, kScheme.size())) != kScheme) {
    return false;
  }
  return HostAllowed(value.substr(kScheme.size()));
}

bool TokenEquals(std::string_view given, std::string_view token) {
  if (token.empty())
    return false;
  // Constant time in the token's length: no early exit on a wrong byte.
  unsigned char diff = given.size() == token.size() ? 0 : 1;
  for (size_t i = 0; i < token.size(); ++i) {
    char c = i < given.size() ? given[i] : '\0';
    diff |= static_cast<unsigned char>(c ^ token[i]);
  }
  return diff == 0;
}

bool BearerTokenMatches(const std::string* authorization,
                        std::string_view token) {
  if (!authorization)
    return false;
  std::string_view value = Trim(*authorization);
  constexpr std::string_view kScheme = "bearer ";
  if (value.size() < kScheme.size() ||
      Lower(value.substr(0, kScheme.size())) != kScheme) {
    return false;
  }
  return TokenEquals(Trim(value.substr(kScheme.size())), token);
}

std::optional<std::string> CookieValue(const std::string* cookie,
                                       std::string_view name) {
  if (!cookie)
    return std::nullopt;
  std::string_view rest = *cookie;
  while (!rest.empty()) {
    size_t semicolon = rest.find(';');
    std::string_view item = Trim(rest.substr(0, semicolon));
    rest = semicolon == std::string_view::npos ? std::string_view()
                                               : rest.substr(semicolon + 1);
    size_t equals = item.find('=');
    if (equals != std::string_view::npos &&
        Trim(item.substr(0, equals)) == name)
      return std::string(Trim(item.substr(equals + 1)));
  }
  return std::nullopt;
}

std::optional<std::string> QueryValue(std::string_view target,
                                      std::string_view name) {
  size_t question = target.find('?');
  if (question == std::string_view::npos)
    return std::nullopt;
  std::string_view rest = target.substr(question + 1);
  rest = rest.substr(0, rest.find('#'));
  while (!rest.empty()) {
    size_t amp = rest.find('&');
    std::string_view item = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view()
                                         : rest.substr(amp + 1);
    size_t equals = item.find('=');
    if (item.substr(0, equals) != name)
      continue;
    std::string_view raw = equals == std::string_view::npos
                               ? std::string_view()
                               : item.substr(equals + 1);
    std::string out;
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '+') {
        out.push_back(' ');
      } else if (raw[i] == '%') {
        unsigned value = 0;
        if (i + 2 >= raw.size())
          return std::nullopt;
        auto [end, error] =
            std::from_chars(raw.data() + i + 1, raw.data() + i + 3, value, 16);
        if (error != std::errc() || end != raw.data() + i + 3)
          return std::nullopt;
        out.push_back(static_cast<char>(value));
        i += 2;
      } else {
        out.push_back(raw[i]);
      }
    }
    return out;
  }
  return std::nullopt;
}

std::string_view TrimHeaderValue(std::string_view value) {
  return Trim(value);
}

bool Accepts(const std::string* accept, std::string_view media_type) {
  if (!accept)
    return true;
  std::string wanted = Lower(media_type);
  std::string wanted_any = wanted.substr(0, wanted.find('/')) + "/*";
  std::string_view rest = *accept;
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view()
                                           : rest.substr(comma + 1);
    std::string type = Lower(Trim(item.substr(0, item.find(';'))));
    if (type == wanted || type == wanted_any || type == "*/*")
      return true;
  }
  return false;
}

}  // namespace baton::serve
