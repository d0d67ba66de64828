// Text building without temporaries: services encode state, checkpoints and descriptions into
// strings on their hot paths (a ranking checkpoint is rebuilt on every flush), and
// std::to_string / std::ostringstream allocate per number.
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "impl/ports/assert.h"

namespace fl {

// Appends `v` in decimal, exactly as std::to_string(v) writes it. `Out` is std::string or
// anything with its append(first, last) (StableHasher, impl/ports/stable_hash.h).
template <typename Out>
void append_decimal(Out& out, int64_t v) {
  char buf[24];  // 20 digits and a sign
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  FL_ASSERT(ec == std::errc());
  (void)ec;
  out.append(buf, end);
}

// `text` as a whole decimal int64 (an optional '-' and digits, nothing else), or nullopt.
inline std::optional<int64_t> parse_decimal(std::string_view text) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [at, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || at != end) return std::nullopt;
  return v;
}

}  // namespace fl
