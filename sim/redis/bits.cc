// Single bits of a string, as Redis 7.0's bitops.c serves them: SETBIT and GETBIT. Bit 0 is the
// most significant bit of the first byte; SETBIT grows the string with zero bytes.
#include "sim/redis/commands.h"

namespace fl::sim::redis {

namespace {

constexpr int64_t kMaxBitOffset = 512LL * 1024 * 1024 * 8;  // proto-max-bulk-len's default, in bits

// getBitOffsetFromArgument: a non-negative integer below the largest string's bit count.
std::optional<int64_t> parse_bit_offset(const std::string& s) {
  const std::optional<int64_t> v = parse_int64(s);
  if (!v || *v < 0 || *v >= kMaxBitOffset) return std::nullopt;
  return v;
}

RedisReply err_bit_offset() { return RedisReply::error("ERR bit offset is not an integer or out of range"); }

int bit_at(const std::string& s, int64_t offset) {
  const auto byte = static_cast<size_t>(offset >> 3);
  if (byte >= s.size()) return 0;
  return (static_cast<unsigned char>(s[byte]) >> (7 - (offset & 7))) & 1;
}

}  // namespace

// SETBIT key offset 0|1: the bit's previous value.
RedisReply cmd_setbit(Ctx& c) {
  const std::optional<int64_t> offset = parse_bit_offset(c.arg(2));
  if (!offset) return err_bit_offset();
  if (c.arg(3) != "0" && c.arg(3) != "1") return RedisReply::error("ERR bit is not an integer or out of range");
  std::string* s = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &s, &error)) return error;
  if (!s) s = &std::get<std::string>(c.ks.put(c.arg(1), std::string()).value);
  const auto byte = static_cast<size_t>(*offset >> 3);
  if (s->size() <= byte) s->resize(byte + 1, '\0');
  const int previous = bit_at(*s, *offset);
  const auto mask = static_cast<unsigned char>(1u << (7 - (*offset & 7)));
  auto& ch = reinterpret_cast<unsigned char&>((*s)[byte]);
  ch = c.arg(3) == "1" ? static_cast<unsigned char>(ch | mask) : static_cast<unsigned char>(ch & ~mask);
  c.find(c.arg(1))->big_encoding = true;  // a raw sds string (dbUnshareStringValue), as SETRANGE's
  return RedisReply::integer_of(previous);
}

// GETBIT key offset: 0 past the end of the string (or of a missing key).
RedisReply cmd_getbit(Ctx& c) {
  const std::optional<int64_t> offset = parse_bit_offset(c.arg(2));
  if (!offset) return err_bit_offset();
  std::string* s = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &s, &error)) return error;
  return RedisReply::integer_of(s ? bit_at(*s, *offset) : 0);
}

}  // namespace fl::sim::redis
