#include "sim/storage/sqlite_settings.h"

#include <algorithm>
#include <cctype>

namespace fl::sim::storage {

namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

const char* journal_mode_name(JournalMode m) {
  switch (m) {
    case JournalMode::kDelete:
      return "DELETE";
    case JournalMode::kTruncate:
      return "TRUNCATE";
    case JournalMode::kPersist:
      return "PERSIST";
    case JournalMode::kMemory:
      return "MEMORY";
    case JournalMode::kWal:
      return "WAL";
    case JournalMode::kOff:
      return "OFF";
  }
  return "?";
}

const char* synchronous_name(Synchronous s) {
  switch (s) {
    case Synchronous::kOff:
      return "OFF";
    case Synchronous::kNormal:
      return "NORMAL";
    case Synchronous::kFull:
      return "FULL";
    case Synchronous::kExtra:
      return "EXTRA";
  }
  return "?";
}

std::optional<JournalMode> parse_journal_mode(std::string_view name) {
  for (JournalMode m : {JournalMode::kDelete, JournalMode::kTruncate, JournalMode::kPersist, JournalMode::kMemory,
                        JournalMode::kWal, JournalMode::kOff}) {
    if (iequals(name, journal_mode_name(m))) return m;
  }
  return std::nullopt;
}

std::optional<Synchronous> parse_synchronous(std::string_view name) {
  for (Synchronous s : {Synchronous::kOff, Synchronous::kNormal, Synchronous::kFull, Synchronous::kExtra}) {
    if (iequals(name, synchronous_name(s))) return s;
  }
  return std::nullopt;
}

std::string durability_pragmas(JournalMode m, Synchronous s) {
  return std::string("PRAGMA journal_mode=") + journal_mode_name(m) + "; PRAGMA synchronous=" + synchronous_name(s) +
         "; PRAGMA temp_store=MEMORY;";
}

bool db_may_corrupt_after_power_loss(Synchronous s, JournalMode m, bool volatile_write_cache) {
  if (volatile_write_cache || m == JournalMode::kOff || m == JournalMode::kMemory) return true;
  if (s == Synchronous::kOff) return true;
  return s == Synchronous::kNormal && m != JournalMode::kWal;
}

}  // namespace fl::sim::storage
