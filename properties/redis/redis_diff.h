// The Redis differential harness: runs one command sequence against two Redis implementations
// ("sides") and compares every reply. The RapidCheck suite (redis_diff_test.cc) generates the
// sequences (redis_diff_gen.h) and shrinks a difference to a minimal one.
//
// Sides
// - EngineSide: the simulated Redis (sim/redis Engine) in-process, on the wall clock (ms since
//   the epoch), three sessions (= three client connections).
// - HiredisSide (harness/redis_diff/hiredis_side.h, real mode): anything speaking RESP2 through
//   hiredis: a real redis-server or `faultline redis-serve`, three connections.
//
// Normalisations (everything else must be byte-for-byte equal, error strings included):
// - N1 nil: hiredis 0.14 cannot tell `*-1` from `$-1`, so a nil multi-bulk equals a nil bulk.
// - N2 unordered replies: SMEMBERS (and SINTER/SUNION/SDIFF) is compared as a set, HGETALL as a field->value map (Redis
//   leaves their order to the encoding; the engine answers in sorted order). Also inside EXEC.
//   UNSUBSCRIBE without arguments confirms the channels in the order of the server's channel
//   dict: the channel names are compared as a set (the remaining counts by position).
// - N3 auto stream ids: `XADD ... *` takes its id from each server's clock, so the k-th auto id
//   of a side becomes the token "auto<k>" in every later reply of that side about the same
//   stream (XADD/XRANGE/XPENDING/XCLAIM/XAUTOCLAIM on argv[1], XREADGROUP per named stream;
//   ids are per stream: two streams may hand out the same id), and the argument
//   "@auto<k>" of a generated command is replaced by that side's k-th auto id ("0-1" if none).
// - N4 clocks: PTTL replies >= 0 are equal within `pttl_tolerance_ms`; TTL replies >= 0 within
//   1 s (Redis rounds); the idle time in an extended XPENDING entry within
//   `idle_tolerance_ms`. The two sides run each step a few microseconds apart.
//   XINFO: "idle" and "seen-time" values and the delivery times in STREAM FULL's pending lists
//   are zeroed on both sides; XINFO names its stream in argv[2] for N3, and once a side's
//   clock chose ids on that stream, "radix-tree-nodes" (which depends on the ids' bytes) is
//   zeroed too.
// - N6 HRANDFIELD: a random sample, compared as a set (of field/value pairs with WITHVALUES)
//   that must have the same size on both sides; equal as sets when a positive count exceeded
//   the hash (the whole hash came back). A single field's membership is checked by the
//   directed tests (a one-field hash) and the engine's unit tests.
// - N5 script errors: an error raised inside a Lua script carries Redis's decoration
//   ("... script: <sha1>, on @user_script:<line>."), which a C++ script function cannot produce;
//   EVAL/EVALSHA errors are compared up to that suffix.
// - N7 clock ids and N8 clock readings in script replies: for replayed system traffic only
//   (system_traffic.h); see CompareOptions.
// Pub/sub: after every step the messages each connection received are compared too (in order).
// Not compared: (UN)SUBSCRIBE issued inside MULTI (a real server then writes more replies than
// EXEC announces, desynchronising RESP2) is skipped by the runner.
// Timing: both sides run each step together (begin on A, begin on B, finish A, finish B), so a
// blocked XREADGROUP waits on both at once and their clocks see the same elapsed time; a
// timing-sensitive sequence that differs is re-run once by the suite before it counts.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "impl/ports/redis.h"
#include "impl/ports/redis_reply.h"
#include "impl/ports/redis_script.h"
#include "properties/redis/known_differences.h"
#include "sim/redis/engine.h"

namespace fl::redis_diff {

constexpr int kClients = 3;

// One step of a generated sequence.
struct Step {
  enum class Kind : uint8_t { kCommand, kWait, kBlockedRead };
  Kind kind = Kind::kCommand;
  int client = 0;                        // 0..kClients-1
  std::vector<std::string> argv;         // kCommand; kBlockedRead: XREADGROUP ... BLOCK ms
  int writer = 1;                        // kBlockedRead: the client that writes while `client` waits
  std::vector<std::string> writer_argv;  // kBlockedRead: e.g. XADD
  int64_t wait_ms = 0;                   // kWait: real time both sides let pass
  std::string describe() const;
};
std::string describe(const std::vector<Step>& steps);

// A server under test with kClients connections. Commands run in two phases so that the
// runner can interleave both sides and keep their clocks aligned: begin() issues a command on
// a connection (a real server may start blocking on it), finish() waits for its reply. At most
// one command per connection is outstanding.
class Side {
 public:
  virtual ~Side() = default;
  virtual std::string name() const = 0;
  // Back to an empty server: no keys, no loaded scripts, fresh connections.
  virtual void reset() = 0;
  virtual void begin(int client, const std::vector<std::string>& argv) = 0;
  // The reply of the command begun on `client`. (UN)SUBSCRIBE answers an array of per-channel
  // confirmations (the engine's shape). A blocked XREADGROUP is answered when another
  // connection's command woke it, or with nil after its timeout (measured from begin()).
  virtual RedisReply finish(int client) = 0;
  // Pub/sub messages `client` received and that were not taken yet, waiting up to wait_ms
  // for one to arrive when there is none.
  virtual std::vector<RedisPubSubMessage> take_messages(int client, int64_t wait_ms) = 0;

  RedisReply run(int client, const std::vector<std::string>& argv) {
    begin(client, argv);
    return finish(client);
  }
};

class EngineSide final : public Side {
 public:
  explicit EngineSide(std::shared_ptr<const ScriptRegistry> scripts, std::string name = "sim");
  std::string name() const override { return name_; }
  void reset() override;
  void begin(int client, const std::vector<std::string>& argv) override;
  RedisReply finish(int client) override;
  std::vector<RedisPubSubMessage> take_messages(int client, int64_t wait_ms) override;

  // A hook that may rewrite each reply (tests prove the suite catches a broken engine with it).
  std::function<RedisReply(const std::vector<std::string>&, RedisReply)> corrupt;
  // Test hook: pub/sub messages are dropped instead of delivered.
  bool lose_messages = false;

 private:
  struct Pending {
    std::vector<std::string> argv;
    RedisReply reply;  // when not blocked
    bool blocked = false;
    int64_t start_ms = 0;
    size_t signals_seen = 0;  // signal_log_ size when the command blocked
  };
  RedisReply execute(int client, const std::vector<std::string>& argv);

  std::shared_ptr<const ScriptRegistry> scripts_;
  std::string name_;
  std::unique_ptr<sim::redis::Engine> engine_;
  sim::redis::Session sessions_[kClients];
  std::optional<Pending> pending_[kClients];
  std::vector<std::string> signal_log_;  // keys signaled by XADD, in order
  std::vector<RedisPubSubMessage> inbox_[kClients];
};

struct CompareOptions {
  int64_t pttl_tolerance_ms = 40;
  int64_t idle_tolerance_ms = 40;
  // Differences tolerated (and counted) because they are recorded in known_differences.h.
  const std::vector<KnownDifference>* known = nullptr;
  // N7 clock ids, for replayed system traffic (system_traffic.h): a stream id a server's clock
  // chose out of the suite's sight (an XADD '*' inside a script) appears in later replies (XREADGROUP,
  // XAUTOCLAIM, XPENDING). Every reply string "<ms>-<seq>" whose ms lies within a day of the wall
  // clock becomes "clock<k>", k by first appearance on that side. Ids a run recorded in the
  // simulated world (its clock starts in 2026-01) are far older and stay as they are.
  bool clock_ids = false;
  // N8 clock readings inside a script's reply (e.g. a lock's PTTL returned as a field): called for
  // an EVAL/EVALSHA whose normalised replies differ; true when they are equal but for readings
  // of the servers' clocks, each within pttl_tolerance_ms. The caller names the positions (it
  // knows its scripts); none by default.
  std::function<bool(const std::vector<std::string>& argv, const RedisReply& a, const RedisReply& b,
                     int64_t tolerance_ms)>
      script_clock_equal;
};

// The outcome of one sequence.
struct RunResult {
  bool equal = true;
  size_t failed_step = 0;                 // index of the first differing step
  std::string report;                     // every step run with both replies; the difference marked
  bool timing_sensitive = false;          // the sequence waits, uses TTLs or idle times
  std::map<std::string, int> known_hits;  // KnownDifference id -> replies it excused
};

// Runs `steps` on both sides (after resetting them) and compares as described above.
RunResult run_and_compare(Side& a, Side& b, const std::vector<Step>& steps, const CompareOptions& options = {});

// Upper-cased copy.
std::string upper(std::string s);
// A pub/sub "message" push, and a (un)subscribe confirmation (RESP2 shapes).
bool is_message_push(const RedisReply& r);
bool is_confirmation(const RedisReply& r);

}  // namespace fl::redis_diff
