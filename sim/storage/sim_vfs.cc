#include "sim/storage/sim_vfs.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "sim/hash.h"
#include "sim/storage/paged_image.h"
#include "impl/ports/assert.h"

namespace fl::sim::storage {

namespace {
constexpr int kShmLocks = SQLITE_SHM_NLOCK;            // 8
constexpr int64_t kJulianEpochMs = 210866760000000LL;  // Unix epoch as a Julian day, in ms
}  // namespace

// A pending (unsynced) change to a file, kept so a torn crash can replay a subset of it.
// The written bytes themselves are kept only when something may replay a subset of the pending
// writes (torn writes, a lying disk's cache); otherwise a sync makes exactly `current` durable
// (sharing the pages the writes touched) and a power loss drops all of them, so the range is
// enough (no copy per xWrite).
struct PendingOp {
  bool truncate = false;
  int64_t offset = 0;  // write offset, or the new size for a truncate
  size_t size = 0;     // bytes written (writes)
  std::string data;    // those bytes, when the VFS keeps them (see keeps_written_bytes)
};

namespace {
bool keeps_written_bytes(const SimVfsOptions& o) { return o.torn_writes || o.volatile_write_cache; }
}  // namespace

// The two images share every page a write has not changed since the last sync (PagedImage).
struct SimVfs::File {
  PagedImage current;
  PagedImage durable;
  std::vector<PendingOp> pending;
  // Lying disk: xSync acknowledged the first `ops` entries of `pending` (cumulative counts, in
  // order), to become durable at `due_us`. Empty unless options.volatile_write_cache.
  struct CachedBatch {
    int64_t due_us = 0;
    size_t ops = 0;
  };
  std::vector<CachedBatch> cached;
  // File locks: number of SHARED holders and the one handle at RESERVED or above.
  int shared_holders = 0;
  Handle* writer = nullptr;
  int writer_level = SQLITE_LOCK_NONE;
  // WAL shared memory.
  std::vector<std::unique_ptr<char[]>> shm_regions;
  int shm_region_bytes = 0;
  int shm_refs = 0;
  int shm_shared[kShmLocks] = {};
  Handle* shm_exclusive[kShmLocks] = {};
};

// The sqlite3_file SQLite allocates for us (szOsFile bytes); `methods` must come first.
struct SimVfs::Handle {
  sqlite3_file base;
  SimVfs* vfs;
  std::shared_ptr<File>* file;  // heap-held: SQLite's buffer is raw memory
  std::string* name;
  uint64_t epoch;
  int lock_level;
  bool delete_on_close;
  bool shm_mapped;
  uint8_t shm_shared_mask;
  uint8_t shm_exclusive_mask;

  File& f() { return **file; }
  bool fenced() const { return epoch != vfs->epoch_; }
};

// The C entry points. A struct (not a namespace) so it can be a friend of SimVfs.
struct SimVfsGlue {
  using Handle = SimVfs::Handle;
  using File = SimVfs::File;

  static SimVfs* of(sqlite3_vfs* v) { return static_cast<SimVfs*>(v->pAppData); }
  static Handle* of(sqlite3_file* f) { return reinterpret_cast<Handle*>(f); }

  // ---- sqlite3_io_methods.
  static int close(sqlite3_file* pf) {
    Handle* h = of(pf);
    SimVfs* vfs = h->vfs;
    ++vfs->changes_;
    shm_unmap(pf, 0);
    unlock(pf, SQLITE_LOCK_NONE);
    if (h->fenced()) {
      FL_ASSERT(vfs->fenced_handles_open_ > 0);
      --vfs->fenced_handles_open_;
    }
    if (h->delete_on_close) {
      auto it = vfs->files_.find(*h->name);
      if (it != vfs->files_.end() && it->second == *h->file) vfs->files_.erase(it);
    }
    delete h->file;
    delete h->name;
    h->file = nullptr;
    h->name = nullptr;
    FL_ASSERT(vfs->open_handles_ > 0);
    --vfs->open_handles_;
    return SQLITE_OK;
  }

  static int read(sqlite3_file* pf, void* buf, int amount, sqlite3_int64 offset) {
    Handle* h = of(pf);
    SimVfs* vfs = h->vfs;
    FL_ASSERT(amount >= 0 && offset >= 0);
    if (h->fenced()) return fenced(vfs, SQLITE_IOERR_READ);
    ++vfs->stats_.reads;
    if (vfs->draw_fault(SimIoOp::kRead)) return SQLITE_IOERR_READ;
    return copy_out(h->f().current, buf, amount, offset);
  }

  // xRead's answer from an image: its bytes at `offset`, zero-filled past its end.
  static int copy_out(const PagedImage& data, void* buf, int amount, sqlite3_int64 offset) {
    const int64_t size = static_cast<int64_t>(data.size());
    const int64_t available = std::clamp<int64_t>(size - offset, 0, amount);
    if (available > 0) data.read(static_cast<size_t>(offset), static_cast<char*>(buf), static_cast<size_t>(available));
    if (available < amount) {
      // SQLite requires the unread tail to be zero-filled on a short read.
      std::memset(static_cast<char*>(buf) + available, 0, static_cast<size_t>(amount - available));
      return SQLITE_IOERR_SHORT_READ;
    }
    return SQLITE_OK;
  }

  static int write(sqlite3_file* pf, const void* buf, int amount, sqlite3_int64 offset) {
    Handle* h = of(pf);
    SimVfs* vfs = h->vfs;
    FL_ASSERT(amount >= 0 && offset >= 0);
    if (h->fenced()) return fenced(vfs, SQLITE_IOERR_WRITE);
    ++vfs->stats_.writes;
    ++vfs->changes_;
    if (vfs->draw_fault(SimIoOp::kWrite)) return SQLITE_IOERR_WRITE;
    File& f = h->f();
    f.current.write(static_cast<size_t>(offset), static_cast<const char*>(buf), static_cast<size_t>(amount));
    f.pending.push_back(PendingOp{false, offset, static_cast<size_t>(amount),
                                  keeps_written_bytes(vfs->options_)
                                      ? std::string(static_cast<const char*>(buf), static_cast<size_t>(amount))
                                      : std::string()});
    vfs->stats_.bytes_written += static_cast<uint64_t>(amount);
    return SQLITE_OK;
  }

  static int truncate(sqlite3_file* pf, sqlite3_int64 size) {
    Handle* h = of(pf);
    SimVfs* vfs = h->vfs;
    if (h->fenced()) return fenced(vfs, SQLITE_IOERR_TRUNCATE);
    ++vfs->stats_.truncates;
    ++vfs->changes_;
    File& f = h->f();
    f.current.resize(static_cast<size_t>(size));
    f.pending.push_back(PendingOp{true, size, 0, {}});
    return SQLITE_OK;
  }

  static int sync(sqlite3_file* pf, int /*flags*/) {
    Handle* h = of(pf);
    SimVfs* vfs = h->vfs;
    if (h->fenced()) return fenced(vfs, SQLITE_IOERR_FSYNC);
    ++vfs->stats_.syncs;
    vfs->cost_us_ += vfs->options_.sync_cost_us;
    if (vfs->draw_fault(SimIoOp::kSync)) return SQLITE_IOERR_FSYNC;
    File& f = h->f();
    if (vfs->options_.volatile_write_cache) {
      // The drive acknowledges with the data only in its cache (see the header).
      const int64_t now_us = vfs->now_us_();
      vfs->settle_write_cache(f, now_us);
      ++vfs->stats_.lied_syncs;
      if (!f.pending.empty()) f.cached.push_back({now_us + vfs->options_.write_cache_flush_us, f.pending.size()});
      return SQLITE_OK;
    }
    make_durable(f);
    f.pending.clear();
    f.cached.clear();
    FL_ASSERT(f.durable.size() == f.current.size());
    return SQLITE_OK;
  }

  // A sync: the durable image becomes the current one (durable + pending ops = current). Only the
  // pages the pending operations touched can differ, so those are shared: a write's range, and
  // everything from a truncate's new size on (it may have cut a page and the file grown again).
  // O(pages touched), not O(file size).
  static void make_durable(File& f) {
    const size_t size = f.current.size();
    f.durable.resize(size);
    for (const PendingOp& op : f.pending) {
      const size_t begin = static_cast<size_t>(op.offset);
      f.durable.share_pages_of(f.current, begin, op.truncate ? size : begin + op.size);
    }
  }

  // Replays one pending operation kept with its bytes onto `image` (a lying disk's settled cache).
  static void apply(PagedImage& image, const PendingOp& op) {
    if (op.truncate) {
      image.resize(static_cast<size_t>(op.offset));
      return;
    }
    image.write(static_cast<size_t>(op.offset), op.data.data(), op.data.size());
  }

  // Switching torn writes or the lying cache on mid-run: pending writes kept without their bytes
  // get them from the current image (exact unless a later pending write overlaps them).
  static void keep_pending_bytes(SimVfs& vfs) {
    for (auto& [name, file] : vfs.files_) {
      for (PendingOp& op : file->pending) {
        if (op.truncate || op.data.size() == op.size) continue;
        op.data.assign(op.size, '\0');
        const PagedImage& current = file->current;
        const size_t from = std::min(static_cast<size_t>(op.offset), current.size());
        const size_t n = std::min(static_cast<size_t>(op.offset) + op.size, current.size()) - from;
        if (n > 0) current.read(from, op.data.data() + (from - static_cast<size_t>(op.offset)), n);
      }
    }
  }

  static int file_size(sqlite3_file* pf, sqlite3_int64* size) {
    Handle* h = of(pf);
    if (h->fenced()) return fenced(h->vfs, SQLITE_IOERR_FSTAT);
    *size = static_cast<sqlite3_int64>(h->f().current.size());
    return SQLITE_OK;
  }

  // Locks follow SQLite's protocol (see os_unix.c's unixLock): SHARED is shared, RESERVED is held
  // by one writer next to readers, PENDING stops new readers, EXCLUSIVE needs every reader gone.
  static int lock(sqlite3_file* pf, int level) {
    Handle* h = of(pf);
    File& f = h->f();
    if (h->lock_level >= level) return SQLITE_OK;
    if (level == SQLITE_LOCK_SHARED) {
      FL_ASSERT(h->lock_level == SQLITE_LOCK_NONE);
      if (f.writer != nullptr && f.writer != h && f.writer_level >= SQLITE_LOCK_PENDING) return SQLITE_BUSY;
      ++f.shared_holders;
      h->lock_level = SQLITE_LOCK_SHARED;
      ++h->vfs->changes_;
      return SQLITE_OK;
    }
    FL_ASSERT(h->lock_level >= SQLITE_LOCK_SHARED);
    if (f.writer != nullptr && f.writer != h) return SQLITE_BUSY;
    if (level == SQLITE_LOCK_RESERVED) {
      f.writer = h;
      f.writer_level = h->lock_level = SQLITE_LOCK_RESERVED;
      ++h->vfs->changes_;
      return SQLITE_OK;
    }
    FL_ASSERT(level == SQLITE_LOCK_EXCLUSIVE);
    f.writer = h;
    if (f.shared_holders > 1) {  // other readers remain: hold PENDING so no new one comes in
      f.writer_level = h->lock_level = SQLITE_LOCK_PENDING;
      ++h->vfs->changes_;
      return SQLITE_BUSY;
    }
    f.writer_level = h->lock_level = SQLITE_LOCK_EXCLUSIVE;
    ++h->vfs->changes_;
    return SQLITE_OK;
  }

  static int unlock(sqlite3_file* pf, int level) {
    Handle* h = of(pf);
    File& f = h->f();
    if (h->lock_level <= level) return SQLITE_OK;
    if (h->lock_level > SQLITE_LOCK_SHARED && f.writer == h) {
      f.writer = nullptr;
      f.writer_level = SQLITE_LOCK_NONE;
    }
    if (level == SQLITE_LOCK_NONE && h->lock_level >= SQLITE_LOCK_SHARED) {
      FL_ASSERT(f.shared_holders > 0);
      --f.shared_holders;
    }
    h->lock_level = level;
    ++h->vfs->changes_;
    return SQLITE_OK;
  }

  static int check_reserved(sqlite3_file* pf, int* out) {
    Handle* h = of(pf);
    *out = h->f().writer != nullptr ? 1 : 0;
    return SQLITE_OK;
  }

  static int file_control(sqlite3_file*, int, void*) { return SQLITE_NOTFOUND; }
  static int sector_size(sqlite3_file* pf) { return of(pf)->vfs->options_.sector_size; }
  // No atomic-write or safe-append promises: SQLite must journal defensively, as on a plain disk.
  // Nor power-safe overwrite, although a torn crash never changes a byte outside a write (the
  // device modelled is power-safe; SimVfs.TornCrashChangesNoByteOutsideTheWrites): declaring it
  // would drop the padding frame of each WAL commit, as the real unix VFS does, and change the
  // DB's I/O in every run and every fingerprint (docs/performance.md, "Why the SQL port stays below half of plain SQLite").
  static int device_characteristics(sqlite3_file*) { return 0; }

  static int shm_map(sqlite3_file* pf, int region, int region_bytes, int extend, void volatile** out) {
    Handle* h = of(pf);
    File& f = h->f();
    if (!h->shm_mapped) {
      h->shm_mapped = true;
      ++f.shm_refs;
    }
    if (f.shm_regions.empty()) f.shm_region_bytes = region_bytes;
    FL_ASSERT(f.shm_region_bytes == region_bytes);
    if (static_cast<size_t>(region) >= f.shm_regions.size()) {
      if (!extend) {
        *out = nullptr;
        return SQLITE_OK;
      }
      while (f.shm_regions.size() <= static_cast<size_t>(region)) {
        auto block = std::make_unique<char[]>(static_cast<size_t>(region_bytes));
        std::memset(block.get(), 0, static_cast<size_t>(region_bytes));
        f.shm_regions.push_back(std::move(block));
        ++h->vfs->changes_;
      }
    }
    *out = f.shm_regions[static_cast<size_t>(region)].get();
    return SQLITE_OK;
  }

  static int shm_lock(sqlite3_file* pf, int offset, int n, int flags) {
    Handle* h = of(pf);
    File& f = h->f();
    FL_ASSERT(offset >= 0 && n >= 1 && offset + n <= kShmLocks);
    const bool unlock_request = (flags & SQLITE_SHM_UNLOCK) != 0;
    const bool exclusive = (flags & SQLITE_SHM_EXCLUSIVE) != 0;
    if (unlock_request) {
      for (int i = offset; i < offset + n; ++i) release_shm_slot(h, f, i);
      return SQLITE_OK;
    }
    for (int i = offset; i < offset + n; ++i) {
      const bool mine_shared = (h->shm_shared_mask >> i) & 1;
      if (f.shm_exclusive[i] != nullptr && f.shm_exclusive[i] != h) return SQLITE_BUSY;
      if (exclusive && f.shm_shared[i] - (mine_shared ? 1 : 0) > 0) return SQLITE_BUSY;
    }
    for (int i = offset; i < offset + n; ++i) {
      if (exclusive) {
        f.shm_exclusive[i] = h;
        h->shm_exclusive_mask |= static_cast<uint8_t>(1u << i);
      } else if (!((h->shm_shared_mask >> i) & 1)) {
        ++f.shm_shared[i];
        h->shm_shared_mask |= static_cast<uint8_t>(1u << i);
      }
    }
    return SQLITE_OK;
  }

  static void release_shm_slot(Handle* h, File& f, int i) {
    if ((h->shm_shared_mask >> i) & 1) {
      FL_ASSERT(f.shm_shared[i] > 0);
      --f.shm_shared[i];
      h->shm_shared_mask &= static_cast<uint8_t>(~(1u << i));
    }
    if ((h->shm_exclusive_mask >> i) & 1) {
      FL_ASSERT(f.shm_exclusive[i] == h);
      f.shm_exclusive[i] = nullptr;
      h->shm_exclusive_mask &= static_cast<uint8_t>(~(1u << i));
    }
  }

  static void shm_barrier(sqlite3_file*) {}

  static int shm_unmap(sqlite3_file* pf, int /*delete_flag*/) {
    Handle* h = of(pf);
    if (!h->shm_mapped) return SQLITE_OK;
    File& f = h->f();
    for (int i = 0; i < kShmLocks; ++i) release_shm_slot(h, f, i);
    h->shm_mapped = false;
    FL_ASSERT(f.shm_refs > 0);
    // The last connection gone: the wal-index is rebuilt from the WAL by the next one.
    if (--f.shm_refs == 0) f.shm_regions.clear();
    ++h->vfs->changes_;
    return SQLITE_OK;
  }

  static int fenced(SimVfs* vfs, int code) {
    ++vfs->stats_.fenced_calls;
    return code;
  }

  // ---- sqlite3_vfs.
  static int open(sqlite3_vfs* pv, const char* zname, sqlite3_file* pf, int flags, int* out_flags) {
    SimVfs* vfs = of(pv);
    Handle* h = of(pf);
    h->base.pMethods = nullptr;  // SQLite must not call xClose if we fail
    std::string name = zname ? std::string(zname) : vfs->temp_name();
    auto it = vfs->files_.find(name);
    if (it == vfs->files_.end()) {
      if (!(flags & SQLITE_OPEN_CREATE)) return SQLITE_CANTOPEN;
      it = vfs->files_.emplace(name, std::make_shared<File>()).first;
      ++vfs->changes_;
    } else if ((flags & SQLITE_OPEN_EXCLUSIVE) && (flags & SQLITE_OPEN_CREATE)) {
      return SQLITE_CANTOPEN;
    }
    h->vfs = vfs;
    h->file = new std::shared_ptr<File>(it->second);
    h->name = new std::string(std::move(name));
    h->epoch = vfs->epoch_;
    h->lock_level = SQLITE_LOCK_NONE;
    h->delete_on_close = (flags & SQLITE_OPEN_DELETEONCLOSE) != 0 || zname == nullptr;
    h->shm_mapped = false;
    h->shm_shared_mask = 0;
    h->shm_exclusive_mask = 0;
    h->base.pMethods = &kMethods;
    if (out_flags) *out_flags = flags;
    ++vfs->open_handles_;
    ++vfs->stats_.opens;
    return SQLITE_OK;
  }

  static int remove(sqlite3_vfs* pv, const char* zname, int /*sync_dir*/) {
    SimVfs* vfs = of(pv);
    // A dead connection being torn down after a crash must not delete its journal or WAL.
    if (vfs->fenced_handles_open_ > 0) return SQLITE_IOERR_DELETE;
    auto it = vfs->files_.find(std::string_view(zname));
    if (it == vfs->files_.end()) return SQLITE_IOERR_DELETE_NOENT;
    vfs->files_.erase(it);
    ++vfs->stats_.deletes;
    ++vfs->changes_;
    return SQLITE_OK;
  }

  static int access(sqlite3_vfs* pv, const char* zname, int /*flags*/, int* out) {
    *out = of(pv)->files_.count(std::string_view(zname)) ? 1 : 0;
    return SQLITE_OK;
  }

  static int full_pathname(sqlite3_vfs*, const char* zname, int n_out, char* out) {
    const int written = std::snprintf(out, static_cast<size_t>(n_out), "%s", zname);
    return written < n_out ? SQLITE_OK : SQLITE_CANTOPEN;
  }

  static int randomness(sqlite3_vfs* pv, int n, char* out) {
    SimVfs* vfs = of(pv);
    for (int i = 0; i < n; ++i) out[i] = static_cast<char>(vfs->rng_.next_u64());
    return n;
  }

  static int sleep(sqlite3_vfs* pv, int microseconds) {
    of(pv)->cost_us_ += microseconds;  // simulated: costs time, takes none
    return microseconds;
  }

  static int current_time_int64(sqlite3_vfs* pv, sqlite3_int64* out) {
    *out = kJulianEpochMs + of(pv)->now_us_() / 1000;
    return SQLITE_OK;
  }

  static int current_time(sqlite3_vfs* pv, double* out) {
    sqlite3_int64 ms = 0;
    current_time_int64(pv, &ms);
    *out = static_cast<double>(ms) / 86400000.0;
    return SQLITE_OK;
  }

  static int last_error(sqlite3_vfs*, int, char*) { return 0; }

  static const sqlite3_io_methods kMethods;
};

const sqlite3_io_methods SimVfsGlue::kMethods = {
    2,  // iVersion: WAL shared memory, no memory-mapped I/O
    &SimVfsGlue::close,
    &SimVfsGlue::read,
    &SimVfsGlue::write,
    &SimVfsGlue::truncate,
    &SimVfsGlue::sync,
    &SimVfsGlue::file_size,
    &SimVfsGlue::lock,
    &SimVfsGlue::unlock,
    &SimVfsGlue::check_reserved,
    &SimVfsGlue::file_control,
    &SimVfsGlue::sector_size,
    &SimVfsGlue::device_characteristics,
    &SimVfsGlue::shm_map,
    &SimVfsGlue::shm_lock,
    &SimVfsGlue::shm_barrier,
    &SimVfsGlue::shm_unmap,
    nullptr,
    nullptr,
};

// ---- The inspection door (see the header): observer connections that leave no trace.

// An observer's file handle. It names its file instead of holding it, so a file the service
// deletes and creates again (a WAL) is seen as a fresh reader would see it.
struct SimVfs::InspectHandle {
  sqlite3_file base;
  SimVfs* vfs;
  std::string* name;
  int lock_level;
  std::vector<std::unique_ptr<char[]>>* shm;  // private copy of the wal-index, once mapped
  int shm_region_bytes;
};

struct SimVfsInspectGlue {
  using Handle = SimVfs::InspectHandle;
  using File = SimVfs::File;

  static Handle* of(sqlite3_file* f) { return reinterpret_cast<Handle*>(f); }
  static const File* file_of(const Handle* h) {
    auto it = h->vfs->files_.find(*h->name);
    return it == h->vfs->files_.end() ? nullptr : it->second.get();
  }

  static int close(sqlite3_file* pf) {
    Handle* h = of(pf);
    auto& open = h->vfs->inspect_handles_;
    open.erase(std::find(open.begin(), open.end(), h));
    delete h->shm;
    delete h->name;
    h->shm = nullptr;
    h->name = nullptr;
    return SQLITE_OK;
  }

  static int read(sqlite3_file* pf, void* buf, int amount, sqlite3_int64 offset) {
    static const PagedImage kMissing;
    const File* f = file_of(of(pf));
    return SimVfsGlue::copy_out(f ? f->current : kMissing, buf, amount, offset);
  }

  // An observer changes nothing on the disk.
  static int write(sqlite3_file*, const void*, int, sqlite3_int64) { return SQLITE_IOERR_WRITE; }
  static int truncate(sqlite3_file*, sqlite3_int64) { return SQLITE_IOERR_TRUNCATE; }
  static int sync(sqlite3_file*, int) { return SQLITE_IOERR_FSYNC; }

  static int file_size(sqlite3_file* pf, sqlite3_int64* size) {
    const File* f = file_of(of(pf));
    *size = f ? static_cast<sqlite3_int64>(f->current.size()) : 0;
    return SQLITE_OK;
  }

  // SHARED only, and refused while the service is committing in rollback mode (PENDING or
  // EXCLUSIVE), as for any reader; the service never sees this lock.
  static int lock(sqlite3_file* pf, int level) {
    Handle* h = of(pf);
    if (h->lock_level >= level) return SQLITE_OK;
    if (level != SQLITE_LOCK_SHARED) return SQLITE_BUSY;
    const File* f = file_of(h);
    if (f != nullptr && f->writer != nullptr && f->writer_level >= SQLITE_LOCK_PENDING) return SQLITE_BUSY;
    h->lock_level = SQLITE_LOCK_SHARED;
    return SQLITE_OK;
  }

  static int unlock(sqlite3_file* pf, int level) {
    Handle* h = of(pf);
    h->lock_level = std::min(h->lock_level, level);
    return SQLITE_OK;
  }

  // The service's RESERVED lock is visible, so a hot journal is recognised as it would be.
  static int check_reserved(sqlite3_file* pf, int* out) {
    const File* f = file_of(of(pf));
    *out = f != nullptr && f->writer != nullptr ? 1 : 0;
    return SQLITE_OK;
  }

  static int sector_size(sqlite3_file* pf) { return of(pf)->vfs->options_.sector_size; }

  static int shm_map(sqlite3_file* pf, int region, int region_bytes, int extend, void volatile** out) {
    Handle* h = of(pf);
    if (h->shm == nullptr) {
      h->shm = new std::vector<std::unique_ptr<char[]>>();
      h->shm_region_bytes = region_bytes;
    }
    FL_ASSERT(h->shm_region_bytes == region_bytes);
    auto& regions = *h->shm;
    const size_t i = static_cast<size_t>(region);
    if (i >= regions.size()) {
      const File* f = file_of(h);
      const bool service_has = f != nullptr && i < f->shm_regions.size();
      if (!extend && !service_has) {
        *out = nullptr;
        return SQLITE_OK;
      }
      while (regions.size() <= i) {
        regions.push_back(std::make_unique<char[]>(static_cast<size_t>(region_bytes)));
        copy_region(h, f, regions.size() - 1);
      }
    }
    *out = regions[i].get();
    return SQLITE_OK;
  }

  // Region i of the private copy := the service's region i, or zeros when it has none.
  static void copy_region(Handle* h, const File* f, size_t i) {
    char* to = (*h->shm)[i].get();
    const size_t n = static_cast<size_t>(h->shm_region_bytes);
    if (f != nullptr && i < f->shm_regions.size() && f->shm_region_bytes == h->shm_region_bytes) {
      std::memcpy(to, f->shm_regions[i].get(), n);
    } else {
      std::memset(to, 0, n);
    }
  }

  static void refresh(Handle* h) {
    if (h->shm == nullptr) return;
    const File* f = file_of(h);
    for (size_t i = 0; i < h->shm->size(); ++i) copy_region(h, f, i);
  }

  // The wal-index copy is private: every lock is granted at once.
  static int shm_lock(sqlite3_file*, int, int, int) { return SQLITE_OK; }

  static int shm_unmap(sqlite3_file* pf, int /*delete_flag*/) {
    Handle* h = of(pf);
    delete h->shm;
    h->shm = nullptr;
    return SQLITE_OK;
  }

  static int open(sqlite3_vfs* pv, const char* zname, sqlite3_file* pf, int flags, int* out_flags) {
    SimVfs* vfs = SimVfsGlue::of(pv);
    Handle* h = of(pf);
    h->base.pMethods = nullptr;  // SQLite must not call xClose if we fail
    // No temporary files (an observer connection keeps temp_store in memory), and no database
    // that does not exist yet: opening creates nothing.
    if (zname == nullptr) return SQLITE_CANTOPEN;
    if ((flags & SQLITE_OPEN_MAIN_DB) && !vfs->exists(zname)) return SQLITE_CANTOPEN;
    h->vfs = vfs;
    h->name = new std::string(zname);
    h->lock_level = SQLITE_LOCK_NONE;
    h->shm = nullptr;
    h->shm_region_bytes = 0;
    h->base.pMethods = &kMethods;
    vfs->inspect_handles_.push_back(h);
    if (out_flags) *out_flags = (flags & ~(SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)) | SQLITE_OPEN_READONLY;
    return SQLITE_OK;
  }

  static int remove(sqlite3_vfs*, const char*, int) { return SQLITE_IOERR_DELETE; }
  // Not the VFS's Rng: an observer must not move the world's randomness.
  static int randomness(sqlite3_vfs*, int n, char* out) {
    std::memset(out, 0, static_cast<size_t>(n));
    return n;
  }
  static int sleep(sqlite3_vfs*, int microseconds) { return microseconds; }  // costs the service nothing

  static const sqlite3_io_methods kMethods;
};

const sqlite3_io_methods SimVfsInspectGlue::kMethods = {
    2,
    &SimVfsInspectGlue::close,
    &SimVfsInspectGlue::read,
    &SimVfsInspectGlue::write,
    &SimVfsInspectGlue::truncate,
    &SimVfsInspectGlue::sync,
    &SimVfsInspectGlue::file_size,
    &SimVfsInspectGlue::lock,
    &SimVfsInspectGlue::unlock,
    &SimVfsInspectGlue::check_reserved,
    &SimVfsGlue::file_control,
    &SimVfsInspectGlue::sector_size,
    &SimVfsGlue::device_characteristics,
    &SimVfsInspectGlue::shm_map,
    &SimVfsInspectGlue::shm_lock,
    &SimVfsGlue::shm_barrier,
    &SimVfsInspectGlue::shm_unmap,
    nullptr,
    nullptr,
};

// ---------------------------------------------------------------------------------------------

std::string SimVfsOptions::describe() const {
  char buf[256];
  std::snprintf(buf, sizeof buf, "sync_cost_us=%lld sector=%d torn=%d keep=%.3f p_read=%.4f p_write=%.4f p_sync=%.4f",
                static_cast<long long>(sync_cost_us), sector_size, torn_writes ? 1 : 0, torn_keep_probability,
                read_error_probability, write_error_probability, sync_error_probability);
  std::string out = buf;
  // Only a lying disk adds to the description, so existing config digests stay as they were.
  if (volatile_write_cache) out += " volatile_cache_flush_us=" + std::to_string(write_cache_flush_us);
  return out;
}

const char* sim_io_op_name(SimIoOp op) {
  switch (op) {
    case SimIoOp::kRead:
      return "read";
    case SimIoOp::kWrite:
      return "write";
    case SimIoOp::kSync:
      return "sync";
  }
  return "?";
}

namespace {

// Process-wide SQLite settings that change no answer, only its cost (issue 14): no memory
// statistics (each of SQLite's allocations would take a global mutex to count it; nothing here
// reads sqlite3_memory_used() or sets a heap limit). Must precede sqlite3_initialize(), which the
// first VFS registration runs; when something initialized SQLite earlier, the default stays.
void configure_sqlite_once() {
  static const bool configured = [] {
    (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    return true;
  }();
  (void)configured;
}

}  // namespace

SimVfs::SimVfs(SimVfsOptions options, Rng rng, std::function<int64_t()> now_us)
    : options_(std::move(options)), rng_(rng), now_us_(std::move(now_us)) {
  FL_ASSERT(now_us_);
  configure_sqlite_once();
  FL_ASSERT(options_.sector_size >= 512);
  // Unique among coexisting instances; the address never reaches a trace or a decision.
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, "@%p", static_cast<void*>(this));
  name_ = options_.name + suffix;
  vfs_.iVersion = 2;
  vfs_.szOsFile = static_cast<int>(sizeof(Handle));
  vfs_.mxPathname = 512;
  vfs_.zName = name_.c_str();
  vfs_.pAppData = this;
  vfs_.xOpen = &SimVfsGlue::open;
  vfs_.xDelete = &SimVfsGlue::remove;
  vfs_.xAccess = &SimVfsGlue::access;
  vfs_.xFullPathname = &SimVfsGlue::full_pathname;
  vfs_.xRandomness = &SimVfsGlue::randomness;
  vfs_.xSleep = &SimVfsGlue::sleep;
  vfs_.xCurrentTime = &SimVfsGlue::current_time;
  vfs_.xGetLastError = &SimVfsGlue::last_error;
  vfs_.xCurrentTimeInt64 = &SimVfsGlue::current_time_int64;
  const int rc = sqlite3_vfs_register(&vfs_, /*makeDflt=*/0);
  FL_ASSERT(rc == SQLITE_OK);
  (void)rc;
  register_inspection();
}

void SimVfs::register_inspection() {
  inspect_name_ = name_ + "-inspect";
  inspect_vfs_ = vfs_;
  inspect_vfs_.szOsFile = static_cast<int>(sizeof(InspectHandle));
  inspect_vfs_.zName = inspect_name_.c_str();
  inspect_vfs_.xOpen = &SimVfsInspectGlue::open;
  inspect_vfs_.xDelete = &SimVfsInspectGlue::remove;
  inspect_vfs_.xRandomness = &SimVfsInspectGlue::randomness;
  inspect_vfs_.xSleep = &SimVfsInspectGlue::sleep;
  const int rc = sqlite3_vfs_register(&inspect_vfs_, /*makeDflt=*/0);
  FL_ASSERT(rc == SQLITE_OK);
  (void)rc;
}

SimVfs::~SimVfs() {
  FL_ASSERT(open_handles_ == 0 && "close every connection before destroying its SimVfs");
  FL_ASSERT(inspect_handles_.empty() && "close every observer connection before destroying its SimVfs");
  sqlite3_vfs_unregister(&inspect_vfs_);
  sqlite3_vfs_unregister(&vfs_);
}

void SimVfs::refresh_inspection() {
  for (InspectHandle* h : inspect_handles_) SimVfsInspectGlue::refresh(h);
}

void SimVfs::set_options(const SimVfsOptions& options) {
  FL_ASSERT(options.sector_size >= 512);
  const std::string keep_name = options_.name;
  if (keeps_written_bytes(options) && !keeps_written_bytes(options_)) SimVfsGlue::keep_pending_bytes(*this);
  options_ = options;
  options_.name = keep_name;  // the registered name cannot change
}

void SimVfs::fail_next(SimIoOp op, uint32_t count, uint32_t skip) {
  triggers_[static_cast<int>(op)] = Trigger{skip, count};
}

bool SimVfs::draw_fault(SimIoOp op) {
  Trigger& t = triggers_[static_cast<int>(op)];
  bool fail = false;
  if (t.count > 0) {
    if (t.skip > 0) {
      --t.skip;
    } else {
      --t.count;
      fail = true;
    }
  }
  if (!fail) {
    double p = 0;
    switch (op) {
      case SimIoOp::kRead:
        p = options_.read_error_probability;
        break;
      case SimIoOp::kWrite:
        p = options_.write_error_probability;
        break;
      case SimIoOp::kSync:
        p = options_.sync_error_probability;
        break;
    }
    fail = rng_.chance(p);
  }
  if (fail) {
    switch (op) {
      case SimIoOp::kRead:
        ++stats_.injected_read_errors;
        break;
      case SimIoOp::kWrite:
        ++stats_.injected_write_errors;
        break;
      case SimIoOp::kSync:
        ++stats_.injected_sync_errors;
        break;
    }
    if (fault_observer_) fault_observer_(op);
  }
  return fail;
}

std::string SimVfs::temp_name() { return "~temp-" + std::to_string(++temp_counter_); }

void SimVfs::settle_write_cache(File& f, int64_t now_us) {
  size_t settled = 0;
  size_t batches = 0;
  for (const File::CachedBatch& b : f.cached) {
    if (b.due_us > now_us) break;
    settled = b.ops;
    ++batches;
  }
  if (batches == 0) return;
  FL_ASSERT(settled <= f.pending.size());
  for (size_t i = 0; i < settled; ++i) SimVfsGlue::apply(f.durable, f.pending[i]);
  f.pending.erase(f.pending.begin(), f.pending.begin() + static_cast<std::ptrdiff_t>(settled));
  f.cached.erase(f.cached.begin(), f.cached.begin() + static_cast<std::ptrdiff_t>(batches));
  for (File::CachedBatch& b : f.cached) b.ops -= settled;
}

void SimVfs::crash(bool lose_unsynced) {
  ++stats_.crashes;
  ++changes_;
  ++epoch_;
  fenced_handles_open_ = open_handles_;
  if (!lose_unsynced) return;
  const size_t sector = static_cast<size_t>(options_.sector_size);
  const int64_t now_us = now_us_();
  for (auto& [name, file] : files_) {
    File& f = *file;
    settle_write_cache(f, now_us);
    // Nothing unsynced: the current image is the durable one already (durable + pending ops =
    // current), so there is nothing to lose and no image to copy.
    if (f.pending.empty()) continue;
    // What the drive acknowledged but still held in its cache is lost like unsynced data.
    const size_t acked = f.cached.empty() ? 0 : f.cached.back().ops;
    // Without torn writes nothing pending survives: the durable image stays as it is.
    PagedImage image = options_.torn_writes ? f.durable : PagedImage();
    for (size_t i = 0; i < f.pending.size(); ++i) {
      const PendingOp& op = f.pending[i];
      if (i < acked) ++stats_.acked_ops_lost;
      if (op.truncate) {
        const bool keep = options_.torn_writes && rng_.chance(options_.torn_keep_probability);
        if (keep) image.resize(static_cast<size_t>(op.offset));
        ++(keep ? stats_.pending_ops_kept : stats_.pending_ops_dropped);
        continue;
      }
      // Cut the write at sector boundaries; each piece survives on its own.
      size_t pos = 0;
      while (pos < op.size) {
        const size_t abs = static_cast<size_t>(op.offset) + pos;
        const size_t piece = std::min(op.size - pos, sector - abs % sector);
        const bool keep = options_.torn_writes && rng_.chance(options_.torn_keep_probability);
        if (keep) image.write(abs, op.data.data() + pos, piece);
        ++(keep ? stats_.pending_ops_kept : stats_.pending_ops_dropped);
        pos += piece;
      }
    }
    if (options_.torn_writes) f.durable = std::move(image);
    f.current = f.durable;
    f.pending.clear();
    f.cached.clear();
  }
}

void SimVfs::reseed_sqlite_prng() {
  // A zero seed would mean "ask the default VFS", so force a non-zero one.
  const int seed = static_cast<int>(static_cast<uint32_t>(rng_.next_u64()) | 1u);
  sqlite3_test_control(SQLITE_TESTCTRL_PRNG_SEED, seed, static_cast<sqlite3*>(nullptr));
}

int64_t SimVfs::take_cost_us() {
  const int64_t c = cost_us_;
  cost_us_ = 0;
  return c;
}

std::vector<std::string> SimVfs::file_names() const {
  std::vector<std::string> out;
  for (const auto& [name, file] : files_) out.push_back(name);
  return out;
}

bool SimVfs::exists(std::string_view name) const { return files_.find(name) != files_.end(); }

std::optional<std::string> SimVfs::file_bytes(std::string_view name) const {
  auto it = files_.find(name);
  if (it == files_.end()) return std::nullopt;
  return it->second->current.to_string();
}

std::optional<std::string> SimVfs::durable_bytes(std::string_view name) const {
  auto it = files_.find(name);
  if (it == files_.end()) return std::nullopt;
  return it->second->durable.to_string();
}

uint64_t SimVfs::unsynced_ops() const {
  uint64_t n = 0;
  for (const auto& [name, file] : files_) n += file->pending.size();
  return n;
}

uint64_t SimVfs::durable_fingerprint() const {
  uint64_t h = stable_hash("sim-vfs");
  for (const auto& [name, file] : files_) {
    h = combine(h, stable_hash(name));
    h = combine(h, stable_hash(file->durable.to_string()));
  }
  return h;
}

}  // namespace fl::sim::storage
