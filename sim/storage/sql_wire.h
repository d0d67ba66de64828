// The messages between SqlClient and SqlServer on the simulated network.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "impl/ports/sql.h"
#include "impl/ports/stable_hash.h"
#include "impl/ports/text.h"
#include "impl/ports/assert.h"

namespace fl::sim::storage {

struct SqlRequest {
  // (client, incarnation, seq) identifies a request, so a duplicated delivery executes once.
  std::string client;
  uint32_t incarnation = 0;
  uint64_t seq = 0;
  bool transaction = false;              // false: exactly one statement, autocommit
  std::vector<SqlStatement> statements;  // not to be changed once statements_text() was read

  // The statements' descriptions joined by " | ", rendered once: the client's history records
  // this text and the network digests describe(), which contains it (a request is immutable once
  // sent; the world is single-threaded).
  const std::string& statements_text() const {
    if (!statements_text_) {
      std::string out;
      for (size_t i = 0; i < statements.size(); ++i) {
        if (i) out += " | ";
        statements[i].append_description(out);
      }
      statements_text_ = std::move(out);
    }
    return *statements_text_;
  }
  std::string describe() const {
    std::string out;
    describe_to(out);
    return out;
  }
  // Appends describe() to a std::string, or hashes it into a StableHasher without building it
  // (Message::digest: a ranking flush carries its whole checkpoint).
  template <typename Out>
  void describe_to(Out& out) const {
    out += transaction ? "sql txn " : "sql exec ";
    out += client;
    out += '#';
    FL_ASSERT(seq <= static_cast<uint64_t>(INT64_MAX));
    append_decimal(out, static_cast<int64_t>(seq));
    if (statements_text_) {
      if (!statements.empty()) (out += " | ") += *statements_text_;
      return;
    }
    for (const SqlStatement& s : statements) {  // no history asked for the text: none kept
      out += " | ";
      s.append_description(out);
    }
  }

 private:
  mutable std::optional<std::string> statements_text_;
};

struct SqlReply {
  // `r` is shared, not copied: the server's commit log holds the same result (a poll's row sets
  // are the largest values a run moves).
  explicit SqlReply(std::shared_ptr<const SqlResult> r) : result_(std::move(r)) { FL_ASSERT(result_ != nullptr); }

  const SqlResult& result() const { return *result_; }
  // result().describe(), rendered once: the network digests the reply and the client's history
  // records the same text (messages are immutable once sent; the world is single-threaded).
  const std::string& result_text() const {
    if (!result_text_) result_text_ = result_->describe();
    return *result_text_;
  }
  std::string describe() const { return "sql reply " + result_text(); }
  // Hashes describe() without building it (Message::digest): only a client's history asks for
  // the text, and the systems' clients keep none.
  void describe_to(StableHasher& out) const {
    out += "sql reply ";
    if (result_text_) {
      out += *result_text_;
    } else {
      result_->describe_to(out);
    }
  }

 private:
  std::shared_ptr<const SqlResult> result_;
  mutable std::optional<std::string> result_text_;
};

}  // namespace fl::sim::storage
