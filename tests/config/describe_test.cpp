// explain, diff and the generated reference (including the staleness check of the checked-in
// docs/config-reference.md).
#include "config/describe.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "config/schema.hpp"

namespace trnsim::config {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const ParameterDifference* find_difference(const std::vector<ParameterDifference>& differences,
                                           const std::string& key) {
  for (const auto& d : differences) {
    if (d.key == key) return &d;
  }
  return nullptr;
}

TEST(Diff, Trn2ToTrn3ListsClocksSbufHbmAndDma) {
  const auto differences = diff_configs(load_config("trn2"), load_config("trn3"));
  struct Expected {
    std::string key, a, b, unit;
  };
  // hardware-facts.md §2, §8, §1/§10 (2.9/4 and 4.9/4 TB/s), §9.1 (23 and 33 B/ns).
  const std::vector<Expected> expected = {
      {"vector.clock_ghz", "0.96", "1.2", "GHz"},
      {"sbuf.partition_bytes", "229376", "262144", "bytes"},
      {"hbm.stack_bandwidth_gbps", "725.0", "1225.0", "GB/s"},
      {"dma.engine_bandwidth_gbps", "23.0", "33.0", "GB/s"},
      {"tensor.mx_supported", "false", "true", "bool"},
      {"dma.arbitration", "round_robin", "strict_priority", ""},
  };
  for (const auto& e : expected) {
    const auto* d = find_difference(differences, e.key);
    ASSERT_NE(d, nullptr) << e.key;
    EXPECT_EQ(d->a, e.a) << e.key;
    EXPECT_EQ(d->b, e.b) << e.key;
    EXPECT_EQ(d->unit, e.unit) << e.key;
  }
  // Same on both (2.4 GHz TensorE, hardware-facts.md §2) and never listed: name, description.
  EXPECT_EQ(find_difference(differences, "tensor.clock_ghz"), nullptr);
  EXPECT_EQ(find_difference(differences, "name"), nullptr);
  EXPECT_EQ(find_difference(differences, "description"), nullptr);
}

TEST(Diff, TableAndIdenticalConfigs) {
  const std::string table = diff_table(load_config("trn2"), load_config("trn3"));
  EXPECT_THAT(table, HasSubstr("parameters differ between trn2 and trn3"));
  EXPECT_THAT(table, HasSubstr("vector.clock_ghz"));
  EXPECT_THAT(table, HasSubstr("GHz"));
  EXPECT_TRUE(diff_configs(load_config("trn2"), load_config("trn2")).empty());
  EXPECT_EQ(diff_table(load_config("trn2"), load_config("trn2")),
            "trn2 and trn2: no parameter differs\n");
  // An override shows up as a difference.
  const auto differences =
      diff_configs(load_config("trn2"), load_config("trn2", {"tensor.clock_ghz=2.8"}));
  ASSERT_EQ(differences.size(), 1u);
  EXPECT_EQ(differences[0].key, "tensor.clock_ghz");
  EXPECT_EQ(differences[0].b, "2.8");
}

TEST(Explain, OneRowPerParameterWithValueUnitAndSource) {
  const std::string table = explain_table(load_config("trn2", {"vector.min_ii_cycles=32"}));
  std::istringstream lines(table);
  std::string line;
  std::size_t rows = 0;
  bool saw_clock = false;
  bool saw_override = false;
  while (std::getline(lines, line)) {
    for (const auto& field : parameter_fields()) {
      if (line.rfind(field.key + " ", 0) == 0) ++rows;
    }
    if (line.rfind("tensor.clock_ghz ", 0) == 0) {
      saw_clock = true;
      EXPECT_THAT(line, HasSubstr(" 2.4 "));
      EXPECT_THAT(line, HasSubstr(" GHz "));
      EXPECT_THAT(line, HasSubstr("hardware-facts.md §2: 2.4 GHz (N-ARCH2)"));  // trn2.json source
    }
    if (line.rfind("vector.min_ii_cycles ", 0) == 0) {
      saw_override = true;
      EXPECT_THAT(line, HasSubstr(" 32 "));
      EXPECT_THAT(line, HasSubstr("--set on the command line"));
    }
  }
  EXPECT_TRUE(saw_clock);
  EXPECT_TRUE(saw_override);
  EXPECT_EQ(rows, parameter_fields().size());
}

TEST(Reference, MentionsEveryParameterBuiltinAndRule) {
  const std::string reference = reference_markdown();
  for (const auto& field : parameter_fields()) {
    EXPECT_THAT(reference, HasSubstr("| `" + field.key + "` |")) << field.key;
  }
  for (const auto& name : builtin_config_names()) {
    EXPECT_THAT(reference, HasSubstr("| `" + name + "` |")) << name;
  }
  for (const auto& rule : validation_rules()) EXPECT_THAT(reference, HasSubstr(rule));
  EXPECT_THAT(reference, Not(HasSubstr("\t")));
}

TEST(Reference, CheckedInDocIsCurrent) {
  const std::string path = std::string(TRNSIM_SOURCE_DIR) + "/docs/config-reference.md";
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  EXPECT_TRUE(text.str() == reference_markdown())
      << path << " is stale (or missing); regenerate it with:\n  " << TRNSIM_BINARY
      << " config reference > " << path;
}

}  // namespace
}  // namespace trnsim::config
