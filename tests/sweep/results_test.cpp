#include "sweep/results.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"
#include "util/error.hpp"

namespace trnsim::sweep {
namespace {

using testing::read_file;
using testing::ScratchDir;
using testing::write_file;

Record record(std::size_t index, double time_us) {
  Record r;
  r["index"] = index;
  r["kernel"] = "k.json";
  r["config"] = "trn2";
  r["values"] = {{"T", index}};
  r["status"] = "ok";
  r["metrics"] = {{"time_us", time_us}};
  return r;
}

TEST(Results, ReaderIgnoresAPartialLastLineAndAppenderCutsIt) {
  ScratchDir dir;
  const std::string path = dir.file("r.jsonl");
  const std::string line0 = record(0, 1.5).dump() + "\n";
  const std::string line1 = record(1, 2.5).dump() + "\n";
  // A run killed while writing its third line leaves 10 bytes of it.
  write_file(path, line0 + line1 + line1.substr(0, 10));
  const ResultsFile file = read_results(path);
  ASSERT_EQ(file.records.size(), 2u);
  EXPECT_EQ(file.complete_bytes, line0.size() + line1.size());
  EXPECT_EQ(file.partial_bytes, 10u);
  {
    ResultsAppender appender(path, file.complete_bytes);
    appender.append(record(2, 3.5));
  }
  EXPECT_EQ(read_file(path), line0 + line1 + record(2, 3.5).dump() + "\n");
}

TEST(Results, CorruptCompleteLineIsAnError) {
  ScratchDir dir;
  const std::string path = dir.file("r.jsonl");
  write_file(path, record(0, 1).dump() + "\n{not json\n");
  try {
    read_results(path);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where(), path + ":2");
  }
}

TEST(Results, WriteSortedReplacesTheFile) {
  ScratchDir dir;
  const std::string path = dir.file("r.jsonl");
  std::vector<Record> records = {record(2, 3), record(0, 1), record(1, 2)};
  sort_by_index(records);
  write_results(path, records);
  EXPECT_EQ(read_file(path),
            record(0, 1).dump() + "\n" + record(1, 2).dump() + "\n" + record(2, 3).dump() + "\n");
}

TEST(Results, CsvHasUnionColumnsAndQuotes) {
  Record failed = record(1, 0);
  failed["status"] = "error";
  failed["metrics"] = Record::object();
  failed["error"] = "k.json: /x: expected \"a\", found b";
  const std::string csv = results_csv({record(0, 1.5), failed});
  EXPECT_EQ(csv,
            "index,kernel,config,T,time_us,status,error,kernel_hash,config_hash\r\n"
            "0,k.json,trn2,0,1.5,ok,,,\r\n"
            "1,k.json,trn2,1,,error,\"k.json: /x: expected \"\"a\"\", found b\",,\r\n");
}

TEST(Results, MergeJoinsShardsAndReportsGapsAndConflicts) {
  ScratchDir dir;
  write_file(dir.file("a.jsonl"), record(0, 1).dump() + "\n" + record(2, 3).dump() + "\n");
  write_file(dir.file("b.jsonl"),
             record(1, 2).dump() + "\n" + record(4, 5).dump() + "\n" + record(2, 3).dump() + "\n");
  const MergedResults merged = merge_results({dir.file("a.jsonl"), dir.file("b.jsonl")});
  ASSERT_EQ(merged.records.size(), 4u);  // 0, 1, 2, 4
  EXPECT_EQ(merged.records[3]["index"], 4);
  EXPECT_EQ(merged.duplicates, 1u);  // point 2 twice, identical
  EXPECT_EQ(merged.missing, std::vector<std::size_t>{3});

  write_file(dir.file("c.jsonl"), record(2, 9).dump() + "\n");
  EXPECT_THROW(merge_results({dir.file("a.jsonl"), dir.file("c.jsonl")}), InputError);
}

}  // namespace
}  // namespace trnsim::sweep
