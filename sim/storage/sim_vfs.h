// SimVfs: a simulated disk for SQLite — an in-memory `sqlite3_vfs` with the faults real disks have.
//
// Model (one SimVfs = the disk of one DB node)
// - Files live in memory. Each file has a `current` image (what reads see) and a `durable` image
//   (what survives a crash), sharing the 4 kB pages no write has changed since the last sync
//   (sim/storage/paged_image.h). xWrite and xTruncate change `current` and are remembered as pending
//   operations; xSync of a file makes its current image durable. File creation and deletion are
//   durable at once (a journaling file system's metadata; SQLite's commit point in
//   journal_mode=DELETE is the journal's deletion).
// - crash(lose_unsynced=true) is a power loss: every file reverts to its durable image. With
//   options.torn_writes the crash instead keeps a random subset of the pending operations, cut at
//   sector boundaries and applied in order with gaps (torn and reordered writes); the subset is
//   drawn from the Rng given at construction. crash(false) is a process kill: the OS page cache
//   survives, nothing is lost. Either way every file handle open at the crash is fenced: its reads,
//   writes, syncs and truncates fail with SQLITE_IOERR and xDelete is refused while one is open,
//   so closing the dead connection (which SQLite does on destruction) cannot touch the disk.
// - Faults: xRead, xWrite and xSync fail with SQLITE_IOERR_{READ,WRITE,FSYNC} with the configured
//   probabilities, or on one-shot triggers (fail_next). A failed xWrite changes nothing; a failed
//   xSync makes nothing durable (the data stays pending: it may or may not survive a crash in
//   torn mode, as after a real fsync error).
// - A disk that lies (options.volatile_write_cache): xSync returns SQLITE_OK once the data is in
//   the drive's volatile cache, and the data reaches the durable image only
//   options.write_cache_flush_us later (a consumer drive that ignores flush requests). A power loss
//   before then loses it like unsynced data (or keeps a torn subset), although SQLite was told it
//   was durable: such a disk voids every "an acknowledged commit survives a power loss" guarantee,
//   whatever `synchronous` says. Acknowledged data is settled onto the durable image at the next
//   xSync or crash whose time is past its flush time, so inspection sees it as of that moment.
// - Time: each xSync adds options.sync_cost_us to an accumulated cost that the SQL server charges
//   as latency (take_cost_us). xCurrentTime/xCurrentTimeInt64 read the `now_us` function given at
//   construction; xRandomness draws from the Rng; xSleep returns at once and adds its time to the
//   cost.
// - Locks: SQLite's five-level file locks and the eight WAL shared-memory locks are kept in
//   memory, per file, across all connections of this VFS (one simulated process may open several
//   connections). WAL works: xShmMap hands out zeroed in-memory regions, dropped when the last
//   connection unmaps (SQLite then rebuilds the wal-index from the WAL, as after a reboot).
// - Inspection door (inspection_vfs_name()): a second registered name for observers, such as a
//   checker sampling the DB during a run. Its connections must be invisible to the world: they read
//   the files' current images with no fault draws, no one-shot triggers, no stats and no fencing
//   by crashes; they never write, truncate, sync, delete or create a file, and never draw from the
//   Rng; their file and WAL locks are their own (they never block the service; only a SHARED lock
//   is refused while the service holds PENDING or EXCLUSIVE, as for any reader). Their WAL shared
//   memory is a private copy of the service's, refreshed by refresh_inspection() (call it before
//   each read: the observer then sees the service's wal-index of that instant, or rebuilds its own
//   from the WAL when no service connection has one, as a fresh reader would).
// - Registration: the constructor registers the VFS with SQLite under a unique name (vfs_name(),
//   never the default VFS); the destructor unregisters it. REQUIRES at destruction: no file of this
//   VFS is open, through either name. Several SimVfs (one per world or per node) coexist.
// - Single-threaded, like the world that owns it. No global state besides SQLite's VFS list and,
//   set once by the first SimVfs of the process (before SQLite initializes), no memory statistics
//   (SQLITE_CONFIG_MEMSTATUS off: cost only). Connections on it are one thread's: open them with
//   kSimConnectionFlags (SQLITE_OPEN_NOMUTEX: no per-call connection mutex).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <sqlite3.h>

#include "sim/rng.h"

namespace fl::sim::storage {

// Added to the open flags of every connection through a SimVfs (see the contract above).
inline constexpr int kSimConnectionFlags = SQLITE_OPEN_NOMUTEX;

struct SimVfsOptions {
  std::string name = "faultline-sim";  // prefix of the registered VFS name
  int64_t sync_cost_us = 2000;         // simulated time of one xSync (an fsync on an SSD)
  int sector_size = 4096;              // xSectorSize; also the granularity of torn writes
  // Crash behaviour.
  bool torn_writes = false;            // a crash keeps a random subset of unsynced sectors
  double torn_keep_probability = 0.5;  // per pending sector, when torn_writes
  // A disk that lies about fsync (see the model above).
  bool volatile_write_cache = false;
  int64_t write_cache_flush_us = 1'000'000;  // how long acknowledged data stays in the volatile cache
  // Random I/O errors (per call).
  double read_error_probability = 0;
  double write_error_probability = 0;
  double sync_error_probability = 0;

  std::string describe() const;
};

enum class SimIoOp : uint8_t { kRead, kWrite, kSync };
const char* sim_io_op_name(SimIoOp op);

struct SimVfsStats {
  uint64_t opens = 0, reads = 0, writes = 0, syncs = 0, truncates = 0, deletes = 0;
  uint64_t bytes_written = 0;
  uint64_t injected_read_errors = 0, injected_write_errors = 0, injected_sync_errors = 0;
  uint64_t fenced_calls = 0;  // I/O attempted through a handle that outlived a crash
  uint64_t crashes = 0;
  uint64_t pending_ops_dropped = 0;  // write/truncate pieces lost by crashes
  uint64_t pending_ops_kept = 0;     // pieces a torn crash kept anyway
  uint64_t lied_syncs = 0;           // xSync acknowledged with the data only in the volatile cache
  uint64_t acked_ops_lost = 0;       // acknowledged (synced) operations a power loss dropped or tore
};

class SimVfs {
 public:
  // `rng` drives fault draws, torn-write subsets and xRandomness; `now_us` is the simulated time
  // (world time or the DB node's local clock) in microseconds since the Unix epoch.
  SimVfs(SimVfsOptions options, Rng rng, std::function<int64_t()> now_us);
  ~SimVfs();
  SimVfs(const SimVfs&) = delete;
  SimVfs& operator=(const SimVfs&) = delete;

  // The name to pass to sqlite3_open_v2 as zVfs.
  const char* vfs_name() const { return name_.c_str(); }
  // The inspection door's name (see the model above), for read-only observer connections.
  const char* inspection_vfs_name() const { return inspect_name_.c_str(); }
  // Copies the service's WAL shared memory into every open observer connection's private copy.
  void refresh_inspection();
  const SimVfsOptions& options() const { return options_; }
  // Fault settings may change during a run (a scenario switching faults on and off).
  void set_options(const SimVfsOptions& options);

  // One-shot trigger: after `skip` further calls of `op` succeed, the next `count` calls fail.
  // Triggers of the same op replace each other.
  void fail_next(SimIoOp op, uint32_t count = 1, uint32_t skip = 0);

  // Called for every injected I/O error, as it is injected (the world's fault log records them so
  // judges can excuse the outcomes they cause). Never changes behaviour.
  void set_fault_observer(std::function<void(SimIoOp)> observer) { fault_observer_ = std::move(observer); }

  // A crash of the node (see the model above). Fences every currently open handle.
  void crash(bool lose_unsynced = true);

  // SQLite's own PRNG (WAL salts, journal nonces, random(), temp names) is process-global and
  // seeded from the *default* VFS, never from this one. Call this before every batch of work on a
  // connection of this VFS: it reseeds that PRNG from this VFS's Rng, so runs are reproducible.
  // Caveat: worlds running concurrently in several threads race on that global PRNG.
  void reseed_sqlite_prng();

  // Simulated time spent in xSync/xSleep since the last call; resets it.
  int64_t take_cost_us();

  // ---- Inspection (tests, checkers, determinism fingerprints).
  std::vector<std::string> file_names() const;
  bool exists(std::string_view name) const;
  // The bytes a read would see now, or that would survive a power loss now.
  std::optional<std::string> file_bytes(std::string_view name) const;
  std::optional<std::string> durable_bytes(std::string_view name) const;
  // Bytes written but not yet synced, over all files.
  uint64_t unsynced_ops() const;
  // Counts every change a reader could see: writes and truncates (attempted), file creations and
  // deletions, lock changes, WAL shared memory mapped or dropped, crashes. Equal counts at two
  // instants mean a reader would read the same thing at both (observers skip re-reading).
  uint64_t change_count() const { return changes_; }
  // Stable hash of every file's name and durable bytes.
  uint64_t durable_fingerprint() const;
  const SimVfsStats& stats() const { return stats_; }
  size_t open_handles() const { return open_handles_; }

 private:
  struct File;
  struct Handle;
  struct InspectHandle;
  friend struct SimVfsGlue;
  friend struct SimVfsInspectGlue;

  bool draw_fault(SimIoOp op);
  // Moves acknowledged data whose flush time has come from the volatile cache to the durable image.
  void settle_write_cache(File& f, int64_t now_us);
  std::string temp_name();
  void register_inspection();

  SimVfsOptions options_;
  Rng rng_;
  std::function<int64_t()> now_us_;
  std::string name_;
  sqlite3_vfs vfs_{};
  std::string inspect_name_;
  sqlite3_vfs inspect_vfs_{};
  std::vector<InspectHandle*> inspect_handles_;  // open observer handles, in opening order
  std::map<std::string, std::shared_ptr<File>, std::less<>> files_;
  uint64_t epoch_ = 0;  // bumped by crash(); handles from older epochs are fenced
  size_t open_handles_ = 0;
  size_t fenced_handles_open_ = 0;
  uint64_t temp_counter_ = 0;
  int64_t cost_us_ = 0;
  uint64_t changes_ = 0;
  struct Trigger {
    uint32_t skip = 0;
    uint32_t count = 0;
  };
  Trigger triggers_[3];
  SimVfsStats stats_;
  std::function<void(SimIoOp)> fault_observer_;
};

}  // namespace fl::sim::storage
