// Small helpers shared by the adapters that speak JSON-RPC-like protocols
// (codex app-server, ACP): the request ids we
// make, which name their method and a per-adapter random prefix
// ("turn/start#1a2b3c4d.3"), so that replies are matched even across a
// rebuild of the adapter after a batond restart.
#ifndef BATON_AGENT_JSON_RPC_UTIL_H_
#define BATON_AGENT_JSON_RPC_UTIL_H_

#include <nlohmann/json.hpp>
#include <string>

#include "baton/util/json_fields.h"  // StringAt, ObjectAt: tolerant access.

namespace baton {

// The method a request id of ours names, or "" for ids we did not make.
std::string MethodOfId(const nlohmann::json& id);
// A fresh random prefix for request ids (8 hex digits).
std::string RequestIdPrefix();

}  // namespace baton

#endif  // BATON_AGENT_JSON_RPC_UTIL_H_
