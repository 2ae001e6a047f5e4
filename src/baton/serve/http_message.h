// The HTTP requests and responses of `baton serve` as plain values, so that
// routes and checks know nothing of the HTTP library: http_server.cc fills
// an HttpRequest from Boost.Beast's parser and writes an HttpResponse with
// Beast's serializer.
#ifndef BATON_SERVE_HTTP_MESSAGE_H_
#define BATON_SERVE_HTTP_MESSAGE_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace baton::serve {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

// Header names compare without regard to case (RFC 9110).
bool HeaderNameIs(std::string_view a, std::string_view b);

struct HttpRequest {
  std::string method;  // As sent: "POST", "GET", ...
  std::string target;  // "/mcp", with any query.
  HeaderList headers;
  std::string body;

  // The first value of header `name`, or nullptr when absent.
  const std::string* Header(std::string_view name) const;
  // How many times the header `name` came.
  size_t HeaderCount(std::string_view name) const;
  // The target without its query.
  std::string_view path() const;
  // Its Content-Type is application/json (parameters such as charset
  // aside).
  bool HasJsonBody() const;
};

struct HttpResponse {
  int status = 200;
  HeaderList headers;
  std::string body;

  HttpResponse& With(std::string name, std::string value) {
    headers.emplace_back(std::move(name), std::move(value));
    return *this;
  }
};

}  // namespace baton::serve

#endif  // BATON_SERVE_HTTP_MESSAGE_H_
