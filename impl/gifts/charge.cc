#include "impl/gifts/charge.h"

#include <vector>

#include "impl/gifts/schema.h"

namespace fl::gifts {
namespace {

SendReply reply(SendReply::Status s, int64_t order_id = 0) { return SendReply{s, order_id}; }

// The order's id from a "SELECT id FROM gift_order" result set, 0 when absent.
int64_t order_id_of(const SqlRowSet& set) {
  if (set.rows.empty() || set.rows.front().empty() || set.rows.front()[0].type() != SqlValue::Type::kInteger) {
    return 0;
  }
  return set.rows.front()[0].as_int();
}

SqlStatement select_order(const SendGift& r) {
  return sql_statement("SELECT id FROM gift_order WHERE user_id = ? AND request_id = ?", r.user, r.request_id);
}

}  // namespace

GiftService::GiftService(Runtime& rt, Redis& redis, Sql& sql, Log& log, ChargeOptions options)
    : rt_(rt), redis_(redis), sql_(sql), producer_(log.producer(ProducerOptions{})), options_(std::move(options)) {}

Task<void> GiftService::run(Rpc& rpc) {
  rpc.serve("gift.send", [this](MessagePtr m) -> Task<MessagePtr> {
    const SendGift* r = message_as<SendGift>(m);
    if (r == nullptr) co_return make_message(reply(SendReply::Status::kError));
    co_return make_message(co_await send(*r));
  });
  if (!options_.txmsg) {
    co_await poll_outbox();
    co_return;
  }
  rpc.on_message(check_service(), [this](MessagePtr m) {
    const HalfCheck* c = message_as<HalfCheck>(m);
    if (c == nullptr || pending_checks_.size() >= options_.check_queue_max) return;  // rejected: checked again later
    pending_checks_.push_back(*c);
    if (!checking_) {
      checking_ = true;
      rt_.spawn("check-back", run_checks());
    }
  });
  co_await keep_checker_registered();
}

Task<SendReply> GiftService::send(SendGift request) {
  // 003:L53-57: SET gift:dedup:{requestId} 1 NX EX 10; a held key answers "重复请求".
  RedisReply d = co_await redis_.command(
      {"SET", dedup_key(request.request_id), "1", "NX", "EX", std::to_string(options_.dedup_ttl_s)});
  if (d.is_transport_error() || d.is_error()) co_return reply(SendReply::Status::kError);
  if (d.is_nil() && !options_.fixes.has(GiftFix::kDedupDefersToDb)) co_return reply(SendReply::Status::kDuplicate);
  int64_t seq = 0;
  if (!options_.fixes.has(GiftFix::kPushSeq)) {
    // The message of 003:L25-33 carries its seq; the business service writes it (choice).
    RedisReply s = co_await redis_.command({"INCR", seq_key(request.room, false)});
    if (!reply_integer(s)) co_return reply(SendReply::Status::kError);
    seq = *reply_integer(s);
  }
  co_return co_await charge(request, seq);
}

Task<SendReply> GiftService::charge(const SendGift& request, int64_t seq) {
  const int64_t now_ms = rt_.clock().now_ms();
  GiftMsg msg{"gift_" + request.request_id + "_" + std::to_string(now_ms),
              request.room,
              request.user,
              request.gift,
              request.count,
              now_ms,
              seq};
  // 003:L35 "msgId 全局唯一": two attempts of one request in the same millisecond (a retry and a
  // tap served together after a pause) would share gift_<requestId>_<ms>; a half message is
  // resolved by its msgId, so txmsg adds a random suffix.
  if (options_.txmsg) msg.msg_id += "_" + std::to_string(rt_.random_u64() % 1'000'000'000);
  const int64_t amount = request.count * options_.price;
  // 003:L66-68 as SQLite writes it; GF-ORDER-INSERT-ONCE: a plain INSERT, so a conflict refuses
  // the whole transaction instead of letting the debit and the outbox row run again.
  std::string insert =
      "INSERT INTO gift_order (user_id, request_id, room_id, gift_id, gift_count, amount, msg_id, created_at) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?)";
  if (!options_.fixes.has(GiftFix::kOrderInsertOnce)) {
    insert += " ON CONFLICT(user_id, request_id) DO UPDATE SET updated_at = excluded.created_at";
  }
  std::vector<SqlStatement> tx;
  tx.push_back(sql_statement(insert, request.user, request.request_id, request.room, request.gift, request.count,
                             amount, msg.msg_id, now_ms));
  tx.push_back(SqlStatement("UPDATE wallet SET balance = balance - ? WHERE user_id = ? AND balance >= ?",
                            {amount, request.user, amount}, SqlExpect::kChanged));
  if (options_.txmsg) co_return co_await charge_txmsg(request, std::move(msg), std::move(tx));
  // 003:L220: the outbox row in the same transaction.
  tx.push_back(
      sql_statement("INSERT INTO outbox_message (msg_id, payload, status, created_at) VALUES (?, ?, "
                    "'PENDING', ?)",
                    msg.msg_id, msg.encode(), now_ms));
  tx.push_back(select_order(request));
  SqlResult r = co_await sql_.transaction(std::move(tx));
  if (r.ok()) {
    co_await publish(msg.msg_id, msg.room, msg.encode());
    co_return reply(SendReply::Status::kOk, order_id_of(r.sets[3]));
  }
  if (r.status == SqlStatus::kConditionFailed) co_return reply(SendReply::Status::kInsufficient);
  if (r.constraint() && r.failed_index == 0) {
    // 003:L64: on a conflict answer 已处理, here as the original order.
    SqlResult o = co_await sql_.execute(select_order(request));
    if (o.ok() && order_id_of(o.last()) != 0) co_return reply(SendReply::Status::kOk, order_id_of(o.last()));
  }
  co_return reply(SendReply::Status::kError);
}

// 003:L227-231: half message, local transaction, then commit or roll back the half.
Task<SendReply> GiftService::charge_txmsg(const SendGift& request, GiftMsg msg, std::vector<SqlStatement> tx) {
  // sendMessageInTransaction (003:L229): the half first; a failed send runs no local transaction.
  ProduceResult half =
      co_await producer_->produce_half(options_.topic, msg.room, msg.encode(), options_.producer_group);
  if (!half.ok()) co_return reply(SendReply::Status::kError);
  if (options_.fixes.has(GiftFix::kTxmsgCheckFence)) {
    // The local transaction claims its msg_id; a check-back that fenced it first makes it fail.
    tx.push_back(sql_statement("INSERT INTO gift_tx (msg_id, state) VALUES (?, 'COMMIT')", msg.msg_id));
  }
  const size_t select_at = tx.size();
  tx.push_back(select_order(request));
  SqlResult r = co_await sql_.transaction(std::move(tx));
  if (r.ok()) {
    co_await producer_->end_half(half.half_id, HalfResolution::kCommit);  // 003:L227
    co_return reply(SendReply::Status::kOk, order_id_of(r.sets[select_at]));
  }
  if (!r.certainly_not_applied()) co_return reply(SendReply::Status::kError);  // UNKNOWN: the check-back decides
  co_await producer_->end_half(half.half_id, HalfResolution::kRollback);       // 003:L231
  if (r.status == SqlStatus::kConditionFailed) co_return reply(SendReply::Status::kInsufficient);
  if (r.constraint() && r.failed_index == 0) {
    SqlResult o = co_await sql_.execute(select_order(request));
    if (o.ok() && order_id_of(o.last()) != 0) co_return reply(SendReply::Status::kOk, order_id_of(o.last()));
  }
  co_return reply(SendReply::Status::kError);
}

std::string GiftService::check_service() const { return std::string(rt_.process_name()) + ".txcheck"; }

// RocketMQ producers heartbeat their group to the broker, which checks back through them.
Task<void> GiftService::keep_checker_registered() {
  for (;;) {
    co_await producer_->register_checker(options_.producer_group, check_service());
    co_await rt_.clock().sleep_us(options_.poll_interval_us);
  }
}

// RocketMQ's TransactionMQProducer runs checkLocalTransaction on one thread (checkThreadPoolMinSize
// = checkThreadPoolMaxSize = 1, a queue of checkRequestHoldMax = 2000): the checks a scan sends wait
// their turn instead of reaching the DB all at once.
Task<void> GiftService::run_checks() {
  while (!pending_checks_.empty()) {
    HalfCheck c = std::move(pending_checks_.front());
    pending_checks_.pop_front();
    co_await check_back(std::move(c));
  }
  checking_ = false;
}

// checkLocalTransaction: spec reads the order (docs/systems/gifts.md); GF-TXMSG-CHECK-FENCE first
// writes a ROLLBACK row unless the local transaction wrote its COMMIT row, and answers that state.
Task<void> GiftService::check_back(HalfCheck check) {
  std::optional<GiftMsg> m = GiftMsg::decode(check.value);
  if (!m) co_return;
  HalfResolution answer = HalfResolution::kUnknown;
  if (options_.fixes.has(GiftFix::kTxmsgCheckFence)) {
    std::vector<SqlStatement> tx;
    tx.push_back(sql_statement(
        "INSERT INTO gift_tx (msg_id, state) VALUES (?, 'ROLLBACK') ON CONFLICT(msg_id) DO NOTHING", m->msg_id));
    tx.push_back(sql_statement("SELECT state FROM gift_tx WHERE msg_id = ?", m->msg_id));
    SqlResult r = co_await sql_.transaction(std::move(tx));
    if (r.ok() && !r.sets[1].rows.empty() && !r.sets[1].rows.front().empty()) {
      answer = r.sets[1].rows.front()[0].as_text() == "COMMIT" ? HalfResolution::kCommit : HalfResolution::kRollback;
    }
  } else {
    SqlResult r = co_await sql_.execute(sql_statement("SELECT id FROM gift_order WHERE msg_id = ?", m->msg_id));
    if (r.ok()) answer = order_id_of(r.last()) != 0 ? HalfResolution::kCommit : HalfResolution::kRollback;
  }
  co_await producer_->end_half(check.half_id, answer);
}

// 003:L17: the business service writes the message to the log; the row becomes SENT once stored.
Task<void> GiftService::publish(std::string msg_id, std::string room, std::string payload) {
  ProduceResult p = co_await producer_->produce(options_.topic, room, std::move(payload));
  if (!p.ok()) co_return;  // stays PENDING: the poller re-pushes it (003:L223)
  co_await sql_.exec("UPDATE outbox_message SET status = 'SENT' WHERE msg_id = ?", msg_id);
}

// 003:L223: "状态为 PENDING 的消息重新推送，成功后标记 SENT".
Task<void> GiftService::poll_outbox() {
  for (;;) {
    co_await rt_.clock().sleep_us(options_.poll_interval_us);
    SqlResult rows =
        co_await sql_.query("SELECT msg_id, payload FROM outbox_message WHERE status = 'PENDING' ORDER BY id LIMIT 20");
    if (!rows.ok()) continue;
    for (const SqlRow& row : rows.rows()) {
      if (row.size() != 2) continue;
      std::optional<GiftMsg> m = GiftMsg::decode(row[1].as_text());
      if (!m) continue;
      co_await publish(row[0].as_text(), m->room, row[1].as_text());
    }
  }
}

}  // namespace fl::gifts
