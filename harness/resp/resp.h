// RESP2 and RESP3 wire format for `faultline redis-serve`: an incremental request parser (multi-bulk and
// inline commands, as redis-server accepts them) and a reply encoder.
//
// Contract
// - RequestParser::feed appends raw bytes; next() extracts complete commands one at a time, in
//   order. A protocol error is terminal: next() keeps returning kError with the message Redis
//   would send ("Protocol error: ..."), after which the server replies and closes the connection.
// - Empty commands (`*0`, `*-1`, a blank inline line) are skipped, as Redis does.
// - encode() writes RESP2: kNil -> `$-1`, kNilArray -> `*-1`, status/error strings have any CR/LF
//   replaced by spaces (RESP2 cannot carry them). A kTransportError (never produced by an
//   executor) is encoded as an error.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "impl/ports/redis_reply.h"

namespace fl::resp {

class RequestParser {
 public:
  enum class Status { kNeedMore, kCommand, kError };

  // Limits mirror redis.conf defaults: 1M arguments, 512 MB per bulk, 64 KB per inline line.
  static constexpr long long kMaxMultibulk = 1024 * 1024;
  static constexpr long long kMaxBulkBytes = 512LL * 1024 * 1024;
  static constexpr size_t kMaxInlineBytes = 64 * 1024;

  void feed(std::string_view bytes);
  // On kCommand fills *argv (non-empty). On kError fills *error (without the leading '-').
  Status next(std::vector<std::string>* argv, std::string* error);
  // Bytes received but not yet consumed as commands.
  size_t buffered() const { return buf_.size() - pos_; }

 private:
  Status parse_multibulk(std::vector<std::string>* argv, std::string* error);
  Status parse_inline(std::vector<std::string>* argv, std::string* error);
  Status fail(std::string message, std::string* error);
  void compact();

  std::string buf_;
  size_t pos_ = 0;
  std::string error_;  // set once a protocol error happened
};

// Splits an inline command line like redis's sdssplitargs (quotes, \x escapes). Returns false on
// unbalanced quotes.
bool split_inline_args(std::string_view line, std::vector<std::string>* out);

void encode(const RedisReply& reply, std::string* out);
std::string encode(const RedisReply& reply);
// encode() for a connection's protocol (HELLO 2|3). RESP3 writes nil as `_` and the types the
// reply's RedisReply::resp3 hint names: `%` maps, `~` sets, `,` doubles, `=` verbatim text, `>`
// pushes; with protocol 2 the hint is ignored.
void encode(const RedisReply& reply, int protocol, std::string* out);

// Incremental *reply* parser (the client side), used by tests and benchmarks that need to read
// raw server output. RESP3 types decode to their RESP2 shape with the RedisReply::resp3 hint set
// (a boolean to 1 / nil, as RESP2 would say it). Returns true and fills *reply when a complete reply is at the front of
// `bytes`, advancing *consumed; false when more bytes are needed. Malformed input: returns true
// with a kTransportError reply.
bool decode_reply(std::string_view bytes, size_t* consumed, RedisReply* reply);

}  // namespace fl::resp
