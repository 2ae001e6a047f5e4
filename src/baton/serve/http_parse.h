// How a connection of `baton serve` reads a request with Boost.Beast's
// parser, apart from the connection (http_server.cc), so that the fuzz
// target (fuzz/http_request_fuzz.cc) drives the same limits and the same
// conversion to an HttpRequest without a socket.
#ifndef BATON_SERVE_HTTP_PARSE_H_
#define BATON_SERVE_HTTP_PARSE_H_

#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/system/error_code.hpp>

#include "baton/serve/http_message.h"
#include "baton/serve/http_server.h"

namespace baton::serve {

using RequestParser =
    boost::beast::http::request_parser<boost::beast::http::string_body>;

// Applies `limits` to a fresh parser: its header and body sizes, and eager
// parsing (a body is read as far as it came, so a refusal on the head can
// be answered before the rest arrives).
void LimitRequestParser(RequestParser& parser, const HttpLimits& limits);

// A request's method, target and headers, without its body.
HttpRequest HeadOf(const RequestParser::value_type& message);

// The status a request that failed to parse is answered with: 413 past the
// body limit, 431 past the header limit, 400 otherwise.
int StatusOfParseError(const boost::system::error_code& error);

}  // namespace baton::serve

#endif  // BATON_SERVE_HTTP_PARSE_H_
