#include "impl/gifts/fixes.h"

namespace fl::gifts {

const std::vector<FixInfo>& gifts_fixes() {
  static const std::vector<FixInfo> kFixes = {
      {"GF-ORDER-INSERT-ONCE",
       "003:L66-68",
       {"GIFT-1", "GIFT-4"},
       "a plain INSERT under the unique index: a conflict answers the original order instead of the upsert "
       "that lets the debit and the outbox row run again"},
      {"GF-DEDUP-DEFERS-TO-DB",
       "003:L55-57",
       {"GIFT-3"},
       "a held dedup key does not answer 重复请求: the request goes on to the DB, whose unique index "
       "returns the original outcome"},
      {"GF-TAP-SAME-REQUEST",
       "003:L49",
       {"GIFT-2"},
       "a second tap within 200 ms of the same gift reuses the first tap's requestId, so a double tap is one charge"},
      {"GF-COMBO-ATOMIC",
       "003:L113-133",
       {"GIFT-5", "GIFT-6", "GIFT-7"},
       "the combo window is one atomic script (idempotent per msgId, flushed at 10 or at its deadline by a "
       "sweeper, handed over through a claimable ready set) instead of lock + INCR/EXPIRE/DEL"},
      {"GF-PUSH-DEDUP-AFTER-SEND",
       "003:L92-96",
       {"GIFT-8", "GIFT-5"},
       "the push dedup key is written after the fan-out, so a failed push is not suppressed by it"},
      {"GF-PUSH-SEQ",
       "003:L35",
       {"GIFT-9", "GIFT-5"},
       "seq is assigned when a message is pushed (per room), so batching and failed charges leave no gaps"},
      {"GF-GAP-TIMEOUT",
       "003:L189",
       {"GIFT-9"},
       "the client force-plays the oldest buffered message after 2 s, so a gap never stalls playback"},
      {"GF-RECONNECT-KEEP-SEQ",
       "003:L206",
       {"GIFT-11"},
       "a client with history keeps expectedSeq = lastSeq + 1 on reconnect instead of jumping to the "
       "server's current seq, so messages already numbered are not dropped"},
      {"GF-EXPIRY-AT-GATEWAY",
       "003:L197-202",
       {"GIFT-10"},
       "the gateway applies the 10 s expiry again when it forwards, so a message delayed after the push "
       "server's check (a slow push-to-gateway link) never reaches a client old"},
      {"GF-TXMSG-CHECK-FENCE",
       "003:L227-231",
       {"GIFT-4", "GIFT-5"},
       "transactional messages: the check-back answers ROLLBACK only after fencing the local transaction "
       "(a gift_tx row the charge transaction must insert), so a charge still in flight when the broker "
       "checks back cannot commit after its half message was rolled back"},
      {"GF-PUSH-LEDGER",
       "003:L35",
       {"GIFT-9", "GIFT-8"},
       "the push-time seq comes from a push ledger in the DB (msgId -> seq, per room) instead of a Redis INCR, and a "
       "join answers the ledger's highest seq: a Redis crash that loses its last writes (AOF everysec) can neither "
       "hand a room's seq out twice nor give a re-flushed message a second seq"},
      {"GF-WINDOW-DEADLINE",
       "003:L105",
       {"GIFT-5", "GIFT-6"},
       "a gift never joins a combo window whose 3 s have passed: the add script closes such a window (the "
       "sweeper could not, Redis unreachable) and opens a new one, so a fresh gift is not batched under the "
       "old window's stamp and dropped with it by the 10 s expiry (003:L199-202)"},
      {"GF-CLAIM-RELEASE",
       "003:L199-202",
       {"GIFT-5", "GIFT-6"},
       "a pusher whose push of a claimed batch was refused (a DB I/O error, no live DB, a Redis error) "
       "releases its claim at once, so the next sweep retries it; waiting out the 2 s claim lease per "
       "refusal aged a batch past the 10 s expiry after four brief refusals (explore-hardened seed 7816)"},
      {"GF-CLAIM-RESUME",
       "003:L199-202",
       {"GIFT-5", "GIFT-6"},
       "a pusher's claim of ready batches records a token as their owner, and its next claim takes back "
       "the batches of the claims whose reply it never got: a claim whose reply timed out (Redis clogged "
       "or paused) had moved their leases with no pusher knowing, so each waited out the 2 s lease on top "
       "of the fault and aged past the 10 s expiry (explore-hardened-store-errors seed 11398: a 0.8 s Redis "
       "clog, then -BUSY windows)"},
  };
  return kFixes;
}

}  // namespace fl::gifts
