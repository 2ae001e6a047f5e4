#include "baton/serve/http_message.h"

#include <cctype>

namespace baton::serve {

bool HeaderNameIs(std::string_view a, std::string_view b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

const std::string* HttpRequest::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (HeaderNameIs(key, name))
      return &value;
  }
  return nullptr;
}

size_t HttpRequest::HeaderCount(std::string_view name) const {
  size_t count = 0;
  for (const auto& [key, value] : headers)
    count += HeaderNameIs(key, name) ? 1 : 0;
  return count;
}

std::string_view HttpRequest::path() const {
  std::string_view path = target;
  return path.substr(0, path.find('?'));
}

bool HttpRequest::HasJsonBody() const {
  const std::string* type = Header("Content-Type");
  if (!type)
    return false;
  std::string_view value = *type;
  value = value.substr(0, value.find(';'));
  while (!value.empty() && value.back() == ' ')
    value.remove_suffix(1);
  return HeaderNameIs(value, "application/json");
}

}  // namespace baton::serve
