#include "baton/serve/http_parse.h"

#include <boost/beast/http/error.hpp>

namespace baton::serve {

namespace http = boost::beast::http;

void LimitRequestParser(RequestParser& parser, const HttpLimits& limits) {
  parser.header_limit(static_cast<uint32_t>(limits.max_header_bytes));
  parser.body_limit(static_cast<uint64_t>(limits.max_body_bytes));
  parser.eager(true);
}

HttpRequest HeadOf(const RequestParser::value_type& message) {
  HttpRequest request;
  request.method = std::string(message.method_string());
  request.target = std::string(message.target());
  for (const auto& field : message) {
    request.headers.emplace_back(std::string(field.name_string()),
                                 std::string(field.value()));
  }
  return request;
}

int StatusOfParseError(const boost::system::error_code& error) {
  if (error == http::error::body_limit)
    return 413;
  if (error == http::error::header_limit)
    return 431;
  return 400;
}

}  // namespace baton::serve
