#include "sim/trace.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace fl::sim {
namespace {

TEST(Trace, RecordingDoesNotChangeTheFingerprint) {
  Trace on(true), off(false);
  for (Trace* t : {&on, &off}) {
    t->fold(10, TraceKind::kResume, 1, 2);
    t->record(11, TraceKind::kFault, "n1", "p1", "crash");
    t->fold_recorded(12, TraceKind::kSend, 3, 4, "n1", "p1", [] { return std::string("x"); });
  }
  EXPECT_EQ(on.fingerprint(), off.fingerprint());
  EXPECT_EQ(on.events().size(), 2u);
  EXPECT_TRUE(off.events().empty());
}

TEST(Trace, RecordHashedIsRecordOfTheText) {
  Trace text(true), hashed(true);
  text.record(7, TraceKind::kOp, "n", "p", "invoke #1 x");
  hashed.record_hashed(7, TraceKind::kOp, "n", "p", stable_hash("invoke #1 x"),
                       [] { return std::string("invoke #1 x"); });
  EXPECT_EQ(hashed.fingerprint(), text.fingerprint());
  ASSERT_EQ(hashed.events().size(), 1u);
  EXPECT_EQ(hashed.events()[0].detail, "invoke #1 x");
  Trace other(false);  // another detail's hash folds differently
  other.record_hashed(7, TraceKind::kOp, "n", "p", stable_hash("invoke #2 x"), [] { return std::string(); });
  EXPECT_NE(other.fingerprint(), text.fingerprint());
}

TEST(Trace, FingerprintIsOrderSensitive) {
  Trace a(false), b(false);
  a.record(1, TraceKind::kUser, "", "", "x");
  a.record(1, TraceKind::kUser, "", "", "y");
  b.record(1, TraceKind::kUser, "", "", "y");
  b.record(1, TraceKind::kUser, "", "", "x");
  EXPECT_NE(a.fingerprint(), b.fingerprint());
}

TEST(Trace, ExportsJsonLinesAndPerfetto) {
  Trace t(true);
  t.record(5, TraceKind::kFault, "node \"a\"", "p", "line1\nline2");
  std::ostringstream jsonl, perfetto;
  t.write_jsonl(jsonl);
  t.write_perfetto(perfetto);
  EXPECT_NE(jsonl.str().find("\\\"a\\\""), std::string::npos);
  EXPECT_NE(jsonl.str().find("line1\\nline2"), std::string::npos);
  EXPECT_EQ(jsonl.str().back(), '\n');
  EXPECT_NE(perfetto.str().find("\"traceEvents\""), std::string::npos);
  EXPECT_NE(perfetto.str().find("\"process_name\""), std::string::npos);
  EXPECT_EQ(hex64(0xabc), "0000000000000abc");
}

}  // namespace
}  // namespace fl::sim
