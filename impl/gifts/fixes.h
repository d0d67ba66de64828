// The named fixes `hardened` adds to seed 003 (impl/ports/fixes.h). gifts_fixes()[i] describes
// GiftFix value i; `spec` has none of them.
#pragma once

#include <cstdint>
#include <vector>

#include "impl/ports/fixes.h"

namespace fl::gifts {

enum class GiftFix : uint8_t {
  kOrderInsertOnce,     // GF-ORDER-INSERT-ONCE
  kDedupDefersToDb,     // GF-DEDUP-DEFERS-TO-DB
  kTapSameRequest,      // GF-TAP-SAME-REQUEST
  kComboAtomic,         // GF-COMBO-ATOMIC
  kPushDedupAfterSend,  // GF-PUSH-DEDUP-AFTER-SEND
  kPushSeq,             // GF-PUSH-SEQ
  kGapTimeout,          // GF-GAP-TIMEOUT
  kReconnectKeepSeq,    // GF-RECONNECT-KEEP-SEQ
  kExpiryAtGateway,     // GF-EXPIRY-AT-GATEWAY
  kTxmsgCheckFence,     // GF-TXMSG-CHECK-FENCE
  kPushLedger,          // GF-PUSH-LEDGER
  kWindowDeadline,      // GF-WINDOW-DEADLINE
  kClaimRelease,        // GF-CLAIM-RELEASE
  kClaimResume,         // GF-CLAIM-RESUME
};
using GiftFixes = FixSet<GiftFix>;

const std::vector<FixInfo>& gifts_fixes();

}  // namespace fl::gifts
