// The CDN and its edge risk filter (004:L117, L237, L280-285; C28, F11): a simulated CDN node
// ("edge") caches full ranking responses under the seed's cache key for a short TTL; after a
// cache hit it still filters the response with its own epoch'd denylist (pushed by the risk
// control over the high-priority channel, 004:L235), and when that denylist is behind the latest
// risk epochs it bypasses the cache and asks the origin (the query layer: Redis pointer, snapshot
// and denylists). Purges of the affected scopes' objects may fail (param purge_fail_percent).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "impl/ports/history.h"
#include "impl/ports/redis.h"
#include "impl/ports/rpc.h"
#include "impl/ports/runtime.h"
#include "impl/ports/sql.h"
#include "impl/ports/task.h"

namespace fl::ranking {

struct EdgeGet {  // GET /rankings/hot-search?scopeType&channelId&regionId&language&snapshot=latest
  std::string scope_type, channel_id, region_id, language;
  std::string if_none_match;  // the validator of the response the client kept ("": unconditional)
  std::string describe() const {
    return "edge-get " + scope_type + "/" + channel_id + "/" + region_id + "/" + language +
           (if_none_match.empty() ? "" : " if-none-match=" + if_none_match);
  }
};
struct EdgeReply {
  // "snap=<id> deny=<scope epoch>/<global epoch> items=<t,...> src=hit|origin[ etag=<validator>]",
  // "not-modified etag=<validator>" (the client's kept response is current), or "error".
  std::string result;
  std::string describe() const { return result; }
};
struct EdgeDeny {  // the emergency channel's push of one scope's denylist
  std::string scope_id;
  int64_t epoch = 0;
  std::string topics;  // "t_a,t_b"
  std::string describe() const { return "edge-deny " + scope_id + "@" + std::to_string(epoch); }
};
struct EdgePurge {  // purge the cached objects of these scopes
  std::vector<std::string> scopes;
  std::string describe() const { return "edge-purge"; }
};
struct EdgeAck {
  bool ok = false;
  std::string describe() const { return ok ? "ok" : "failed"; }
};

// The seed's key: canonical path, the four dimensions, the snapshot and the cache policy version.
// 004:L284: "CDN cache key = canonical path + scopeType + channelId + regionId + language".
std::string cdn_cache_key(const EdgeGet& g, const std::string& cache_policy_version);

struct EdgeOptions {
  int64_t ttl_us = 5'000'000;  // the CDN's short cache (the maximum safe TTL)
  int purge_fail_percent = 0;  // purges that fail (C28)
  std::string cache_policy_version = "cp-1";
  // 004:L279: "客户端使用 ETag 或 snapshot_id 做条件请求". With `etag` each answer carries a validator and
  // a request whose If-None-Match equals the answer's validator gets "not-modified". spec's validator
  // is the snapshot_id; RK-ETAG-RISK-EPOCHS (`etag_risk_epochs`) adds the denylist epochs the answer
  // applied, since a block changes what a scope shows without changing its snapshot.
  bool etag = false;
  bool etag_risk_epochs = false;
};
// Serves "edge" (EdgeGet), "edge-deny" and "edge-purge". A miss asks the origin (origin_view);
// `db` (RK-DENYLIST-BYPASS; else null) is the origin query layer's DB for a missing denylist.
Task<void> run_edge(Runtime& rt, Rpc& rpc, Redis& redis, EdgeOptions o, Sql* db = nullptr);

// The origin's answer for one scope (what the query layer shows): the cached pointer's snapshot
// minus the scope's and the global denylist; "" when Redis did not answer. `db`
// (RK-DENYLIST-BYPASS; else null): a missing denylist sends the query layer to the DB's blocks.
Task<std::string> origin_view(Redis& redis, const std::string& scope, Sql* db = nullptr);

// Pushes a scope's denylist to the edge (004:L235) and purges the affected scopes' objects
// (004:L237: a global action expands to every scope); both may fail, nothing retries them.
Task<void> push_to_edge(Rpc& rpc, const std::string& scope, int64_t epoch, const std::string& topics,
                        std::vector<std::string> purge_scopes);

// The validator of an answer (004:L279): its snapshot_id, with `risk_epochs` also the denylist
// epochs it applied ("<snapshot>@<scope epoch>/<global epoch>").
std::string edge_etag(const std::string& answer, bool risk_epochs);

// A viewer through the CDN: like run_viewer, but each view is an EdgeGet to "edge". With
// `conditional` it keeps the last answer per scope and sends its validator as If-None-Match; on
// "not-modified" it shows the kept answer again, recorded with src=not-modified (what it displayed).
// With `shared_cache` the client keeps one answer for every scope (a cache keyed by the path and
// snapshot=latest alone, which 004:L285 forbids the CDN): only the server's validator keeps scopes apart.
Task<void> run_edge_viewer(Runtime& rt, Rpc& rpc, Recorder& history, std::vector<std::string> scopes,
                           int64_t interval_us, int64_t stop_at_us, bool conditional = false,
                           bool shared_cache = false);

}  // namespace fl::ranking
