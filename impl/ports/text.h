// Text building without temporaries: services encode state, checkpoints and descriptions into
// strings on their hot paths (a ranking checkpoint is rebuilt on every flush), and
// std::to_string / std::ostringstream allocate per number.
#pragma once

#include <cassert>
#include <charconv>
#include <cstdint>
#include <string>
#include <system_error>

namespace fl {

// Appends `v` in decimal, exactly as std::to_string(v) writes it.
inline void append_decimal(std::string& out, int64_t v) {
  char buf[24];  // 20 digits and a sign
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  assert(ec == std::errc());
  (void)ec;
  out.append(buf, end);
}

}  // namespace fl
