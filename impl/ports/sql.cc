#include "impl/ports/sql.h"

#include <cinttypes>
#include <cstdio>
#include <limits>

#include "impl/ports/text.h"
#include "impl/ports/assert.h"

namespace fl {

const char* sql_status_name(SqlStatus s) {
  switch (s) {
    case SqlStatus::kOk:
      return "ok";
    case SqlStatus::kConstraint:
      return "constraint";
    case SqlStatus::kConditionFailed:
      return "condition_failed";
    case SqlStatus::kBusy:
      return "busy";
    case SqlStatus::kIoError:
      return "io_error";
    case SqlStatus::kIndeterminate:
      return "indeterminate";
    case SqlStatus::kUnavailable:
      return "unavailable";
    case SqlStatus::kError:
      return "error";
  }
  return "?";
}

SqlValue::SqlValue(uint64_t v) : v_(static_cast<int64_t>(v)) {
  FL_ASSERT(v <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()));
}

int64_t SqlValue::as_int() const {
  FL_ASSERT(type() == Type::kInteger);
  return std::get<int64_t>(v_);
}

double SqlValue::as_real() const {
  FL_ASSERT(type() == Type::kInteger || type() == Type::kReal);
  if (type() == Type::kInteger) return static_cast<double>(std::get<int64_t>(v_));
  return std::get<double>(v_);
}

const std::string& SqlValue::as_text() const {
  FL_ASSERT(type() == Type::kText || type() == Type::kBlob);
  if (type() == Type::kBlob) return std::get<SqlBlob>(v_).bytes;
  return std::get<std::string>(v_);
}

namespace {

// SqlValue::describe() appended to `out` (row sets are described on every SQL reply: no
// temporary string per value).
template <typename Out>
void append_described(Out& out, const SqlValue& v) {
  switch (v.type()) {
    case SqlValue::Type::kInteger:
      append_decimal(out, v.as_int());
      return;
    case SqlValue::Type::kText: {
      const std::string& text = v.as_text();
      out += '\'';
      if (text.find('\'') == std::string::npos) {
        out += text;
      } else {
        for (char c : text) {
          if (c == '\'') out += '\'';
          out += c;
        }
      }
      out += '\'';
      return;
    }
    default:
      out += v.describe();
      return;
  }
}

}  // namespace

std::string SqlValue::describe() const {
  switch (type()) {
    case Type::kNull:
      return "NULL";
    case Type::kInteger:
      return std::to_string(std::get<int64_t>(v_));
    case Type::kReal: {
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.17g", std::get<double>(v_));
      return buf;
    }
    case Type::kText: {
      std::string out = "'";
      for (char c : std::get<std::string>(v_)) {
        if (c == '\'') out += '\'';
        out += c;
      }
      return out + "'";
    }
    case Type::kBlob: {
      static const char* kHex = "0123456789abcdef";
      std::string out = "x'";
      for (unsigned char c : std::get<SqlBlob>(v_).bytes) {
        out += kHex[c >> 4];
        out += kHex[c & 15];
      }
      return out + "'";
    }
  }
  return "?";
}

std::string SqlStatement::describe() const {
  std::string out;
  append_description(out);
  return out;
}

namespace {

// The one renderer of a statement's description, for text and for its hash.
template <typename Out>
void append_statement(Out& out, const SqlStatement& st) {
  const std::vector<SqlValue>& params = st.params;
  out += st.sql;
  if (!params.empty()) {
    out += " [";
    for (size_t i = 0; i < params.size(); ++i) {
      if (i) out += ", ";
      append_described(out, params[i]);
    }
    out += "]";
  }
  switch (st.expect) {
    case SqlExpect::kAny:
      break;
    case SqlExpect::kChanged:
      out += " expect=changed";
      break;
    case SqlExpect::kNoRows:
      out += " expect=no_rows";
      break;
    case SqlExpect::kSomeRows:
      out += " expect=some_rows";
      break;
  }
}

}  // namespace

void SqlStatement::append_description(std::string& out) const { append_statement(out, *this); }
void SqlStatement::append_description(StableHasher& out) const { append_statement(out, *this); }

int SqlRowSet::column(std::string_view name) const {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i] == name) return static_cast<int>(i);
  }
  return -1;
}

bool SqlResult::certainly_not_applied() const {
  switch (status) {
    case SqlStatus::kConstraint:
    case SqlStatus::kConditionFailed:
    case SqlStatus::kBusy:
    case SqlStatus::kUnavailable:
    case SqlStatus::kError:
      return true;
    case SqlStatus::kOk:
    case SqlStatus::kIoError:
    case SqlStatus::kIndeterminate:
      return false;
  }
  return false;
}

const SqlRowSet& SqlResult::last() const {
  static const SqlRowSet kEmpty;  // immutable: not global mutable state
  return sets.empty() ? kEmpty : sets.back();
}

std::optional<SqlValue> SqlResult::scalar() const {
  const SqlRowSet& s = last();
  if (s.rows.empty() || s.rows.front().empty()) return std::nullopt;
  return s.rows.front().front();
}

SqlResult SqlResult::failure(SqlStatus status, std::string error, int failed_index) {
  FL_ASSERT(status != SqlStatus::kOk);
  SqlResult r;
  r.status = status;
  r.error = std::move(error);
  r.failed_index = failed_index;
  return r;
}

namespace {

// The one renderer of a result's description, for text and for its hash.
template <typename Out>
void append_result(Out& out, const SqlResult& result) {
  out += sql_status_name(result.status);
  if (!result.ok()) {
    if (result.failed_index >= 0) {
      out += " at #";
      append_decimal(out, result.failed_index);
    }
    if (!result.error.empty()) {
      out += ": ";
      out += result.error;
    }
    return;
  }
  for (const SqlRowSet& s : result.sets) {
    out += " {";
    if (!s.columns.empty()) {
      out += "rows=[";
      for (size_t r = 0; r < s.rows.size(); ++r) {
        if (r) out += ", ";
        out += '(';
        for (size_t c = 0; c < s.rows[r].size(); ++c) {
          if (c) out += ", ";
          append_described(out, s.rows[r][c]);
        }
        out += ')';
      }
      out += ']';
    } else {
      out += "changes=";
      append_decimal(out, s.changes);
    }
    out += '}';
  }
}

}  // namespace

std::string SqlResult::describe() const {
  std::string out;
  append_result(out, *this);
  return out;
}

void SqlResult::describe_to(StableHasher& out) const { append_result(out, *this); }

}  // namespace fl
