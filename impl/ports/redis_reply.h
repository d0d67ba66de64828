// RedisReply: a RESP2 reply as a plain value, shared by the simulated Redis (sim/redis), the
// real client (harness/real) and service code (through impl/ports/redis.h).
//
// RESP3 (HELLO 3) is carried as a hint on the RESP2 shape (`resp3`), the way Redis itself writes
// one reply for both protocols (addReplyMapLen is `*2n` in RESP2 and `%n` in RESP3): a map or set
// is an array, a double or verbatim text a bulk string. Only the RESP3 encoder reads the hint;
// service code, describe() and == see the RESP2 value.
//
// Transport outcomes that are not Redis replies (a timeout, a reset connection, an unreachable
// server) are represented too, so that service code handles them as values: `kind ==
// Kind::kTransportError` with `indeterminate` telling whether the command may have executed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fl {

struct RedisReply {
  enum class Kind : uint8_t { kNil, kStatus, kError, kInteger, kBulk, kArray, kNilArray, kTransportError };
  // The RESP3 type of this value: kMap = an array of key, value, key, value...; kSet = an array of
  // members; kDouble = a bulk holding a double as Redis formats it (%.17g, inf, -inf); kVerbatim =
  // a bulk of text (INFO, CLIENT LIST); kPush = an out-of-band array (pub/sub); kBool = an integer
  // 1 or 0 (RESP3 `#t`/`#f`, a script's boolean); kBigNumber = a bulk of digits (RESP3 `(`).
  enum class Resp3 : uint8_t { kNone, kMap, kSet, kDouble, kVerbatim, kPush, kBool, kBigNumber };

  Kind kind = Kind::kNil;
  int64_t integer = 0;               // kInteger
  std::string str;                   // kStatus, kError, kBulk, kTransportError (reason)
  std::vector<RedisReply> elements;  // kArray
  bool indeterminate = false;        // kTransportError: the command may or may not have run
  Resp3 resp3 = Resp3::kNone;        // read by the RESP3 encoder only

  static RedisReply nil() { return {}; }
  static RedisReply nil_array() {
    RedisReply r;
    r.kind = Kind::kNilArray;
    return r;
  }
  static RedisReply status(std::string s) {
    RedisReply r;
    r.kind = Kind::kStatus;
    r.str = std::move(s);
    return r;
  }
  static RedisReply ok() { return status("OK"); }
  static RedisReply error(std::string s) {
    RedisReply r;
    r.kind = Kind::kError;
    r.str = std::move(s);
    return r;
  }
  static RedisReply integer_of(int64_t v) {
    RedisReply r;
    r.kind = Kind::kInteger;
    r.integer = v;
    return r;
  }
  static RedisReply bulk(std::string s) {
    RedisReply r;
    r.kind = Kind::kBulk;
    r.str = std::move(s);
    return r;
  }
  static RedisReply array(std::vector<RedisReply> e) {
    RedisReply r;
    r.kind = Kind::kArray;
    r.elements = std::move(e);
    return r;
  }
  static RedisReply transport_error(std::string why, bool maybe_executed) {
    RedisReply r;
    r.kind = Kind::kTransportError;
    r.str = std::move(why);
    r.indeterminate = maybe_executed;
    return r;
  }

  bool is_nil() const { return kind == Kind::kNil || kind == Kind::kNilArray; }
  bool is_error() const { return kind == Kind::kError; }
  bool is_transport_error() const { return kind == Kind::kTransportError; }
  bool ok_reply() const { return kind != Kind::kError && kind != Kind::kTransportError; }

  // Compares the RESP2 value; the RESP3 hint is not part of it.
  bool operator==(const RedisReply& o) const {
    return kind == o.kind && integer == o.integer && str == o.str && elements == o.elements &&
           indeterminate == o.indeterminate;
  }
  // This reply with its RESP3 type set.
  RedisReply as_resp3(Resp3 t) && {
    resp3 = t;
    return std::move(*this);
  }

  // Human-readable, stable rendering (used in traces, diffs and evidence), e.g. `(integer) 3`.
  std::string describe() const;
};

}  // namespace fl
