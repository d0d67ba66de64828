#include "impl/combo/stream_reply.h"

namespace fl::combo {

namespace {

std::vector<StreamEntry> parse_entries(const RedisReply& list) {
  std::vector<StreamEntry> out;
  if (list.kind != RedisReply::Kind::kArray) return out;
  for (const RedisReply& e : list.elements) {
    if (e.kind != RedisReply::Kind::kArray || e.elements.size() != 2) continue;  // deleted: nil
    StreamEntry entry;
    entry.id = e.elements[0].str;
    const RedisReply& kv = e.elements[1];
    for (size_t i = 0; i + 1 < kv.elements.size(); i += 2) entry.fields[kv.elements[i].str] = kv.elements[i + 1].str;
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace

std::vector<StreamEntry> parse_xreadgroup(const RedisReply& r) {
  std::vector<StreamEntry> out;
  if (r.kind != RedisReply::Kind::kArray) return out;
  for (const RedisReply& stream : r.elements) {
    if (stream.kind != RedisReply::Kind::kArray || stream.elements.size() != 2) continue;
    for (StreamEntry& e : parse_entries(stream.elements[1])) out.push_back(std::move(e));
  }
  return out;
}

std::vector<StreamEntry> parse_xautoclaim(const RedisReply& r) {
  if (r.kind != RedisReply::Kind::kArray || r.elements.size() < 2) return {};
  return parse_entries(r.elements[1]);
}

std::map<std::string, std::string> parse_hash(const RedisReply& r) {
  std::map<std::string, std::string> out;
  if (r.kind != RedisReply::Kind::kArray) return out;
  for (size_t i = 0; i + 1 < r.elements.size(); i += 2) out[r.elements[i].str] = r.elements[i + 1].str;
  return out;
}

}  // namespace fl::combo
