#include "sim/coverage.h"

#include <cctype>

#include "sim/hash.h"

namespace fl::sim {

namespace {

// The command of a message text "service: COMMAND args..." (or of a bare command): the service and
// the first word after it, without the arguments that differ from call to call.
std::string site_of(std::string_view what) {
  const size_t colon = what.find(": ");
  std::string_view service = colon == std::string_view::npos ? std::string_view() : what.substr(0, colon);
  std::string_view rest = colon == std::string_view::npos ? what : what.substr(colon + 2);
  size_t n = 0;
  while (n < rest.size() && (std::isalpha(static_cast<unsigned char>(rest[n])) || rest[n] == '_' || rest[n] == '.'))
    ++n;
  return std::string(service) + ":" + std::string(rest.substr(0, n));
}

uint64_t feature(std::initializer_list<std::string_view> parts) {
  StableHasher h;
  for (std::string_view p : parts) {
    h += p;
    h += '\x1f';
  }
  return h.finish();
}

}  // namespace

std::string_view Coverage::role_of(std::string_view process) {
  size_t end = process.size();
  while (end > 0 && std::isdigit(static_cast<unsigned char>(process[end - 1]))) --end;
  if (end > 0 && end < process.size() && (process[end - 1] == '-' || process[end - 1] == '_')) --end;
  return end == 0 ? process : process.substr(0, end);
}

std::string Coverage::pattern_of(std::string_view key) {
  std::string out;
  out.reserve(key.size());
  for (size_t i = 0; i < key.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(key[i]))) {
      out += '#';
      while (i + 1 < key.size() && std::isdigit(static_cast<unsigned char>(key[i + 1]))) ++i;
    } else {
      out += key[i];
    }
  }
  return out;
}

void Coverage::interruption(std::string_view kind, std::string_view process, std::string_view what,
                            std::string_view peer) {
  if (!enabled_) return;
  const uint64_t f = feature({"interrupt", kind, role_of(process), site_of(what), role_of(peer)});
  if (features_.insert(f).second) ++interruptions_;
}

void Coverage::access(std::string_view store, std::string_view key, std::string_view process,
                      std::string_view command) {
  if (!enabled_) return;
  std::string slot = std::string(store) + '\x1f' + std::string(key);
  auto it = last_.find(slot);
  if (it == last_.end()) {
    last_.emplace(std::move(slot), Last{std::string(process), std::string(command)});
    return;
  }
  if (it->second.process != process) {
    const uint64_t f = feature(
        {"order", store, pattern_of(key), role_of(it->second.process), it->second.command, role_of(process), command});
    if (features_.insert(f).second) ++orderings_;
    it->second.process = std::string(process);
  }
  it->second.command = std::string(command);
}

}  // namespace fl::sim
