#include "impl/ports/redis_script.h"
#include "impl/ports/assert.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>

namespace fl {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

uint32_t rotl(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

// One 64-byte block of FIPS 180-4 SHA-1.
void sha1_block(std::array<uint32_t, 5>& h, const unsigned char* block) {
  uint32_t w[80];
  for (int i = 0; i < 16; ++i) {
    w[i] = (uint32_t{block[4 * i]} << 24) | (uint32_t{block[4 * i + 1]} << 16) | (uint32_t{block[4 * i + 2]} << 8) |
           uint32_t{block[4 * i + 3]};
  }
  for (int i = 16; i < 80; ++i) w[i] = rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
  for (int i = 0; i < 80; ++i) {
    uint32_t f, k;
    if (i < 20) {
      f = (b & c) | (~b & d);
      k = 0x5A827999;
    } else if (i < 40) {
      f = b ^ c ^ d;
      k = 0x6ED9EBA1;
    } else if (i < 60) {
      f = (b & c) | (b & d) | (c & d);
      k = 0x8F1BBCDC;
    } else {
      f = b ^ c ^ d;
      k = 0xCA62C1D6;
    }
    const uint32_t t = rotl(a, 5) + f + e + k + w[i];
    e = d;
    d = c;
    c = rotl(b, 30);
    b = a;
    a = t;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
}

}  // namespace

std::string sha1_hex(std::string_view data) {
  std::array<uint32_t, 5> h{0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
  std::string msg(data);
  const uint64_t bit_len = static_cast<uint64_t>(data.size()) * 8;
  msg.push_back(static_cast<char>(0x80));
  while (msg.size() % 64 != 56) msg.push_back('\0');
  for (int i = 7; i >= 0; --i) msg.push_back(static_cast<char>((bit_len >> (8 * i)) & 0xff));
  for (size_t off = 0; off < msg.size(); off += 64) {
    sha1_block(h, reinterpret_cast<const unsigned char*>(msg.data() + off));
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(40);
  for (uint32_t word : h) {
    for (int i = 7; i >= 0; --i) out.push_back(kHex[(word >> (4 * i)) & 0xf]);
  }
  return out;
}

void ScriptRegistry::add(RedisScript script) {
  FL_ASSERT(!by_name(script.name) && "script names are unique");
  std::string sha = sha1_hex(script.lua);
  FL_ASSERT(!sha_to_name_.count(sha) && "two scripts with the same Lua text");
  sha_to_name_.emplace(std::move(sha), script.name);
  std::string name = script.name;
  scripts_.emplace(std::move(name), std::move(script));
}

const RedisScript* ScriptRegistry::by_name(std::string_view name) const {
  auto it = scripts_.find(name);
  return it == scripts_.end() ? nullptr : &it->second;
}

const RedisScript* ScriptRegistry::by_sha1(std::string_view sha1) const {
  // Callers mostly pass the lower-case hex already (the simulated EVALSHA folds it): look that
  // up as it is, without a folded copy.
  const bool folded = std::none_of(sha1.begin(), sha1.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
  auto it = folded ? sha_to_name_.find(sha1) : sha_to_name_.find(lower(sha1));
  return it == sha_to_name_.end() ? nullptr : by_name(it->second);
}

const RedisScript* ScriptRegistry::by_lua(std::string_view lua) const { return by_sha1(sha1_hex(lua)); }

const std::string& ScriptRegistry::sha1_of(std::string_view name) const {
  for (const auto& [sha, n] : sha_to_name_) {
    if (n == name) return sha;
  }
  FL_ASSERT(false && "sha1_of: unknown script name");
  static const std::string kNone;
  return kNone;
}

std::vector<std::string> ScriptRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& [name, script] : scripts_) out.push_back(name);
  return out;
}

}  // namespace fl
