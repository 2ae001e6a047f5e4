// Small helpers shared by the adapters that speak JSON-RPC-like protocols
// (codex app-server, ACP): tolerant field access and the request ids we
// make, which name their method and a per-adapter random prefix
// ("turn/start#1a2b3c4d.3"), so that replies are matched even across a
// rebuild of the adapter after a batond restart.
#ifndef BATON_AGENT_JSON_RPC_UTIL_H_
#define BATON_AGENT_JSON_RPC_UTIL_H_

#include <nlohmann/json.hpp>
#include <string>

namespace baton {

// The string at `key`, or "" when `object` is no object or the value no
// string.
std::string StringAt(const nlohmann::json& object, const char* key);
// The object at `key`, or an empty object.
const nlohmann::json& ObjectAt(const nlohmann::json& object, const char* key);
// The method a request id of ours names, or "" for ids we did not make.
std::string MethodOfId(const nlohmann::json& id);
// A fresh random prefix for request ids (8 hex digits).
std::string RequestIdPrefix();

}  // namespace baton

#endif  // BATON_AGENT_JSON_RPC_UTIL_H_
