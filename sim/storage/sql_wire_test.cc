#include "sim/storage/sql_wire.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "impl/ports/rpc.h"
#include "impl/ports/stable_hash.h"

namespace fl::sim::storage {
namespace {

// The network folds Message::digest() into the fingerprint; it must hash exactly describe()'s
// bytes, or every saved fingerprint would change.
void expect_digest_is_hash_of_description(const MessagePtr& m) {
  EXPECT_EQ(m->digest(), stable_hash(m->describe())) << m->describe();
}

std::vector<SqlStatement> statements() {
  std::vector<SqlStatement> out;
  out.push_back(sql_statement("INSERT INTO t(a, b, c, d, e) VALUES(?, ?, ?, ?, ?)", "plain", "it's", int64_t{-7}, 2.5,
                              SqlValue::blob(std::string("\x00\xff", 2))));
  out.push_back(SqlStatement("UPDATE t SET a = ? WHERE b IS ?", {SqlValue("x"), SqlValue()}, SqlExpect::kChanged));
  out.push_back(SqlStatement("SELECT 1", {}, SqlExpect::kNoRows));
  out.push_back(SqlStatement("SELECT 2", {}, SqlExpect::kSomeRows));
  return out;
}

TEST(SqlWire, RequestDigestIsTheHashOfItsDescription) {
  for (bool transaction : {false, true}) {
    SqlRequest req;
    req.client = "agg-1";
    req.seq = 12345;
    req.transaction = transaction;
    req.statements = statements();
    auto fresh = make_message(req);
    expect_digest_is_hash_of_description(fresh);
    req.statements_text();  // a history asked for the text: describe() reuses it
    expect_digest_is_hash_of_description(make_message(req));
    EXPECT_EQ(make_message(req)->digest(), fresh->digest());
  }
  expect_digest_is_hash_of_description(make_message(SqlRequest{}));
}

TEST(SqlWire, ReplyDigestIsTheHashOfItsDescription) {
  SqlResult rows;
  rows.status = SqlStatus::kOk;
  SqlRowSet set;
  set.columns = {"a", "b", "c"};
  set.rows = {{SqlValue("it's"), SqlValue(int64_t{3}), SqlValue()},
              {SqlValue(0.25), SqlValue("z"), SqlValue(int64_t{-1})}};
  rows.sets.push_back(set);
  SqlRowSet write;
  write.changes = 2;
  rows.sets.push_back(write);
  for (const SqlResult& r : {rows, SqlResult::failure(SqlStatus::kConstraint, "UNIQUE failed", 1),
                             SqlResult::failure(SqlStatus::kBusy, ""), SqlResult{}}) {
    auto reply = std::make_shared<const ValueMessage<SqlReply>>(SqlReply(std::make_shared<const SqlResult>(r)));
    expect_digest_is_hash_of_description(reply);  // text not built yet: hashed from the result
    reply->value.result_text();
    expect_digest_is_hash_of_description(reply);  // and from the text once built
  }
}

}  // namespace
}  // namespace fl::sim::storage
