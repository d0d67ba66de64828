#include "impl/ports/redis.h"

#include <charconv>

namespace fl {

Task<RedisReply> redis_xadd(Redis& r, std::string key, std::vector<std::pair<std::string, std::string>> fields,
                            std::optional<int64_t> approx_maxlen) {
  std::vector<std::string> argv{"XADD", std::move(key)};
  if (approx_maxlen) { argv.insert(argv.end(), {"MAXLEN", "~", std::to_string(*approx_maxlen)}); }
  argv.push_back("*");
  for (auto& [f, v] : fields) {
    argv.push_back(std::move(f));
    argv.push_back(std::move(v));
  }
  return r.command(std::move(argv));
}

Task<RedisReply> redis_xreadgroup(Redis& r, std::string group, std::string consumer, std::string key, std::string id,
                                  int64_t count, std::optional<int64_t> block_ms) {
  std::vector<std::string> argv{"XREADGROUP",        "GROUP", std::move(group),
                                std::move(consumer), "COUNT", std::to_string(count)};
  if (block_ms) argv.insert(argv.end(), {"BLOCK", std::to_string(*block_ms)});
  argv.insert(argv.end(), {"STREAMS", std::move(key), std::move(id)});
  return r.command(std::move(argv));
}

Task<RedisReply> redis_transaction(Redis& r, std::vector<std::vector<std::string>> cmds) {
  std::vector<std::vector<std::string>> batch;
  batch.reserve(cmds.size() + 2);
  batch.push_back({"MULTI"});
  for (auto& c : cmds) batch.push_back(std::move(c));
  batch.push_back({"EXEC"});
  std::vector<RedisReply> replies = co_await r.pipeline(std::move(batch));
  if (replies.empty()) co_return RedisReply::transport_error("empty pipeline reply", true);
  co_return std::move(replies.back());
}

std::optional<int64_t> reply_integer(const RedisReply& r) {
  if (r.kind != RedisReply::Kind::kInteger) return std::nullopt;
  return r.integer;
}

std::optional<std::string> reply_string(const RedisReply& r) {
  if (r.kind != RedisReply::Kind::kBulk && r.kind != RedisReply::Kind::kStatus) return std::nullopt;
  return r.str;
}

std::optional<int64_t> reply_as_int64(const RedisReply& r) {
  if (r.kind == RedisReply::Kind::kInteger) return r.integer;
  if (r.kind != RedisReply::Kind::kBulk) return std::nullopt;
  int64_t v = 0;
  const char* end = r.str.data() + r.str.size();
  auto [p, ec] = std::from_chars(r.str.data(), end, v);
  if (ec != std::errc() || p != end || r.str.empty()) return std::nullopt;
  return v;
}

}  // namespace fl
