// SQLite durability settings shared by the simulated server and real mode.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fl::sim::storage {

// PRAGMA journal_mode. Every mode works on SimVfs, WAL included.
enum class JournalMode : uint8_t { kDelete, kTruncate, kPersist, kMemory, kWal, kOff };
// PRAGMA synchronous.
enum class Synchronous : uint8_t { kOff, kNormal, kFull, kExtra };

const char* journal_mode_name(JournalMode m);  // "DELETE", "TRUNCATE", ...
const char* synchronous_name(Synchronous s);   // "OFF", "NORMAL", ...
std::optional<JournalMode> parse_journal_mode(std::string_view name);  // case-insensitive
std::optional<Synchronous> parse_synchronous(std::string_view name);   // case-insensitive

// "PRAGMA journal_mode=...; PRAGMA synchronous=...; PRAGMA temp_store=MEMORY;"
std::string durability_pragmas(JournalMode m, Synchronous s);

}  // namespace fl::sim::storage
