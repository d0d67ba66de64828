// The gift service (003:L47-70, L212-223): a click's request is de-duplicated in Redis, charged in
// one DB transaction with its order and outbox row, and produced to the log keyed by roomId; a
// poller re-pushes PENDING outbox rows and marks them SENT.
//
// spec follows the seed as written (docs/systems/gifts.md): the Redis dedup answers 重复请求, the
// order insert is the upsert of 003:L66-68, the seq is assigned here (INCR before the transaction).
// hardened departs only through the named fixes GF-ORDER-INSERT-ONCE, GF-DEDUP-DEFERS-TO-DB,
// GF-PUSH-SEQ and GF-TXMSG-CHECK-FENCE (impl/gifts/fixes.h).
//
// With `txmsg` (scenario option consistency: txmsg) the second scheme of 003:L225-231 replaces the
// outbox: a half message (invisible) is produced first, the local transaction (order + debit)
// runs, and the half is committed or rolled back after it (003:L227 "本地事务提交后再 commit 半消息",
// L231 "如果本地事务回滚，半消息自动删除"); an indeterminate local transaction leaves it UNKNOWN. The
// broker checks back a half it never heard about; spec's checkLocalTransaction answers from the DB
// as written nowhere in the seed but most naturally: COMMIT when the order row exists, ROLLBACK
// when it does not, UNKNOWN when the DB cannot be read. Check-backs run one at a time, as RocketMQ's
// client runs them on one thread.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>

#include "impl/gifts/fixes.h"
#include "impl/gifts/messages.h"
#include "impl/ports/log.h"
#include "impl/ports/redis.h"
#include "impl/ports/rpc.h"
#include "impl/ports/runtime.h"
#include "impl/ports/sql.h"

namespace fl::gifts {

struct ChargeOptions {
  GiftFixes fixes = GiftFixes::spec();
  int64_t price = 10;                    // per gift (the seed has no prices)
  int64_t dedup_ttl_s = 10;              // 003:L54
  int64_t poll_interval_us = 1'000'000;  // outbox poller
  std::string topic = "gift_topic";      // 003:L165
  bool txmsg = false;                    // 003:L225-231 instead of the outbox (003:L214-223)
  std::string producer_group = "gift";   // RocketMQ's producer group of the gift services
  size_t check_queue_max = 2000;         // RocketMQ's checkRequestHoldMax: checks waiting beyond it are dropped
};

class GiftService {
 public:
  GiftService(Runtime& rt, Redis& redis, Sql& sql, Log& log, ChargeOptions options);
  // Serves `gift.send` and runs the outbox poller until the process dies.
  Task<void> run(Rpc& rpc);
  Task<SendReply> send(SendGift request);

 private:
  Task<SendReply> charge(const SendGift& request, int64_t seq);
  Task<void> publish(std::string msg_id, std::string room, std::string payload);
  Task<void> poll_outbox();
  Task<SendReply> charge_txmsg(const SendGift& request, GiftMsg msg, std::vector<SqlStatement> tx);
  Task<void> keep_checker_registered();
  Task<void> run_checks();  // the one check thread: pending_checks_ in arrival order
  Task<void> check_back(HalfCheck check);
  std::string check_service() const;

  Runtime& rt_;
  Redis& redis_;
  Sql& sql_;
  std::unique_ptr<LogProducer> producer_;
  ChargeOptions options_;
  std::deque<HalfCheck> pending_checks_;
  bool checking_ = false;  // run_checks is draining pending_checks_
};

}  // namespace fl::gifts
