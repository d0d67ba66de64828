// Parsing of XREADGROUP / XAUTOCLAIM replies (RESP2 shapes) into entries.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "impl/ports/redis_reply.h"

namespace fl::combo {

struct StreamEntry {
  std::string id;
  std::map<std::string, std::string> fields;
  std::string field(const std::string& k) const {
    auto it = fields.find(k);
    return it == fields.end() ? std::string() : it->second;
  }
};

// XREADGROUP: [[stream, [[id, [f, v, ...]], ...]], ...]; nil-array -> empty.
std::vector<StreamEntry> parse_xreadgroup(const RedisReply& r);
// XAUTOCLAIM (7.0): [cursor, [[id, [f, v...]], ...], [deleted...]].
std::vector<StreamEntry> parse_xautoclaim(const RedisReply& r);
// HGETALL: [f, v, f, v...] -> map.
std::map<std::string, std::string> parse_hash(const RedisReply& r);

}  // namespace fl::combo
