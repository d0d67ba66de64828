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

const char* journal_mode_name(JournalMode m);                          // "DELETE", "TRUNCATE", ...
const char* synchronous_name(Synchronous s);                           // "OFF", "NORMAL", ...
std::optional<JournalMode> parse_journal_mode(std::string_view name);  // case-insensitive
std::optional<Synchronous> parse_synchronous(std::string_view name);   // case-insensitive

// "PRAGMA journal_mode=...; PRAGMA synchronous=...; PRAGMA temp_store=MEMORY;"
std::string durability_pragmas(JournalMode m, Synchronous s);

// Whether SQLite leaves the integrity of the file to chance across a power loss with these
// settings (https://sqlite.org/pragma.html#pragma_synchronous): with OFF "the database might
// become corrupted if the operating system crashes or the computer loses power"; with NORMAL
// outside WAL "a very small (though non-zero) chance that a power failure at just the wrong time
// could corrupt the database"; WAL with NORMAL or better, and FULL, keep the file intact. No
// journal (OFF, MEMORY) or a disk that lies about fsync voids every promise.
bool db_may_corrupt_after_power_loss(Synchronous s, JournalMode m, bool volatile_write_cache);

}  // namespace fl::sim::storage
