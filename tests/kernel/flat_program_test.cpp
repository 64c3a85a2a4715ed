// Unrolled (flat) programs: loop-free operands and attribute sets are shared between the
// statements that write them alike, statements are parsed while the JSON text is read, and every
// document that does not allow that gives exactly what the plain document parser gives.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "test_support.hpp"

namespace trnsim::kernel {
namespace {

using testing::collect;
using testing::error_of;
using testing::kernel_json;
using testing::parse_text;
using testing::prepare_text;

const char* kFlatTensors = R"({
  "h":    {"memory": "hbm",  "dtype": "float32", "shape": [8, 128, 64]},
  "x_sb": {"memory": "sbuf", "dtype": "float32", "shape": [2, 128, 64], "partition_dim": 1},
  "y_sb": {"memory": "sbuf", "dtype": "float32", "shape": [2, 128, 64], "partition_dim": 1}})";

TEST(FlatProgram, LoopFreeOperandsAndAttributesAreShared) {
  const auto program = parse_text(kernel_json(kFlatTensors, R"([
      {"op": "dma_copy", "dst": "x_sb[0]", "src": "h[0]", "queue": 1},
      {"op": "dma_copy", "dst": "x_sb[1]", "src": "h[1]", "queue": 1},
      {"op": "dma_copy", "dst": "x_sb[0]", "src": "h[2]", "queue": 2},
      {"op": "tensor_copy", "dst": "y_sb[0]", "src": "x_sb[0]"}])"));
  // Operands: x_sb[0], h[0], x_sb[1], h[1], h[2], y_sb[0].
  EXPECT_EQ(program->operands.size(), 6u);
  const auto& specs = program->instructions;
  EXPECT_EQ(specs[0].operands[0], specs[2].operands[0]);  // dst x_sb[0]
  EXPECT_EQ(specs[0].operands[0], specs[3].operands[1]);  // ... and the copy's src
  EXPECT_NE(specs[0].operands[1], specs[2].operands[1]);  // h[0], h[2]
  // Attributes: the defaults (entry 0), queue 1, queue 2.
  EXPECT_EQ(program->attributes.size(), 3u);
  EXPECT_EQ(specs[0].attributes, specs[1].attributes);
  EXPECT_NE(specs[0].attributes, specs[2].attributes);
  EXPECT_EQ(specs[3].attributes, 0u);
  // What depends on the use comes from the slot.
  EXPECT_EQ(operand_key(Opcode::kTensorCopy, Slot::kSrc), "src");
  EXPECT_EQ(operand_key(Opcode::kNcMatmul, Slot::kSrc), "moving");
  EXPECT_EQ(operand_key(Opcode::kTensorCopy, Slot::kIn1), "");
}

TEST(FlatProgram, OperandsThatUseLoopVariablesAreNotShared) {
  // The same text at two loop depths reads two different environment slots.
  const auto kernel = prepare_text(kernel_json(kFlatTensors, R"([
      {"for": "i", "range": 2, "body": [
        {"op": "tensor_copy", "dst": "y_sb[i]", "src": "x_sb[0]"},
        {"for": "j", "range": 1, "body": [
          {"op": "tensor_copy", "dst": "y_sb[i]", "src": "x_sb[0]"}]}]}])"));
  const Program& program = kernel.prog();
  const auto& specs = program.instructions;
  EXPECT_NE(specs[0].operands[0], specs[1].operands[0]);
  EXPECT_EQ(specs[0].operands[1], specs[1].operands[1]);  // x_sb[0] uses no loop
  const auto instructions = collect(kernel);
  ASSERT_EQ(instructions.size(), 4u);
  EXPECT_EQ(instructions[0].dst(), instructions[1].dst());  // i = 0
  EXPECT_EQ(instructions[2].dst(), instructions[3].dst());  // i = 1
  EXPECT_NE(instructions[0].dst(), instructions[2].dst());
}

/// The program parsed from the whole document (no streaming), for comparison.
Program parse_document(const std::string& text) {
  return parse_program(nlohmann::ordered_json::parse(text), "k.json");
}

/// Statements, labels, locations, operands and the stream of core 0 on Trainium2 agree.
void expect_same_program(const Program& streamed, const Program& document) {
  ASSERT_EQ(streamed.statements.size(), document.statements.size());
  for (std::uint32_t s = 0; s < streamed.statements.size(); ++s) {
    EXPECT_EQ(streamed.location(s), document.location(s));
    EXPECT_EQ(streamed.label(s), document.label(s));
  }
  ASSERT_EQ(streamed.operands.size(), document.operands.size());
  for (std::size_t i = 0; i < streamed.operands.size(); ++i) {
    EXPECT_EQ(streamed.operands[i].text, document.operands[i].text);
  }
  EXPECT_EQ(streamed.program, document.program);
  const auto streamed_kernel =
      prepare_kernel(std::make_shared<const Program>(streamed), testing::trn2_target());
  const auto document_kernel =
      prepare_kernel(std::make_shared<const Program>(document), testing::trn2_target());
  const auto a = collect(streamed_kernel);
  const auto b = collect(document_kernel);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].source.statement, b[i].source.statement);
    EXPECT_EQ(a[i].operands, b[i].operands);
  }
}

TEST(FlatProgram, StreamedParseEqualsTheDocumentParse) {
  const std::string text = kernel_json(kFlatTensors, R"([
      {"op": "dma_copy", "dst": "x_sb[0]", "src": "h[0]", "source": "k.py:3"},
      {"for": "t", "range": 8, "body": [
        {"op": "dma_copy", "dst": "x_sb[t % 2]", "src": "h[t]", "queue": 1},
        {"if": "t > 0", "then": [{"op": "tensor_copy", "dst": "y_sb[t % 2]", "src": "x_sb[t % 2]"}]}]},
      {"op": "tensor_copy", "dst": "y_sb[1]", "src": "x_sb[1]", "name": "last"}])");
  expect_same_program(*parse_text(text), parse_document(text));
}

TEST(FlatProgram, EveryExampleKernelParsesAlikeBothWays) {
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(TRNSIM_SOURCE_DIR) + "/examples/kernels")) {
    if (entry.path().extension() != ".json") continue;
    SCOPED_TRACE(entry.path().filename().string());
    std::ifstream in(entry.path());
    std::stringstream buffer;
    buffer << in.rdbuf();
    const Program streamed = parse_program_text(buffer.str(), "k.json");
    const Program document = parse_document(buffer.str());
    // Only the statements and operands: some examples need more than Trainium2 to prepare.
    ASSERT_EQ(streamed.statements.size(), document.statements.size());
    for (std::uint32_t s = 0; s < streamed.statements.size(); ++s) {
      EXPECT_EQ(streamed.location(s), document.location(s));
    }
    ASSERT_EQ(streamed.operands.size(), document.operands.size());
    EXPECT_EQ(streamed.attributes.size(), document.attributes.size());
  }
}

TEST(FlatProgram, DocumentsThatCannotStreamParseAsBefore) {
  const std::string program = R"([{"op": "tensor_copy", "dst": "y_sb[0]", "src": "x_sb[0]"},
                                  {"op": "tensor_copy", "dst": "y_sb[1]", "src": "x_sb[N]"}])";
  // "program" before the declarations it needs, and keys after it.
  const std::string program_first = R"({"program": )" + program +
                                    R"(, "format": "trnsim-kernel/1", "name": "t",
      "params": {"N": 1}, "tensors": )" +
                                    kFlatTensors + "}";
  expect_same_program(*parse_text(program_first), parse_document(program_first));
  const std::string params_after = R"({"format": "trnsim-kernel/1", "name": "t", "tensors": )" +
                                   std::string(kFlatTensors) + R"(, "program": )" + program +
                                   R"(, "params": {"N": 1}})";
  expect_same_program(*parse_text(params_after), parse_document(params_after));
}

TEST(FlatProgram, ErrorsKeepTheirOrder) {
  // A bad statement and, after the program, an unknown top-level key: the key is reported
  // first, as the document parser checks the top level before the statements.
  const std::string text = R"({"format": "trnsim-kernel/1", "name": "t", "tensors": )" +
                           std::string(kFlatTensors) + R"(, "program": [
      {"op": "tensor_copy", "dst": "y_sb[0]", "src": "x_sb[0]"},
      {"op": "tensor_cpy", "dst": "y_sb[0]", "src": "x_sb[0]"}], "programs": []})";
  EXPECT_EQ(error_of([&] { parse_text(text); }),
            "k.json: /programs: unknown key 'programs' in top-level; did you mean 'program'? "
            "(valid keys: format, name, description, params, cores, tensors, program)");
  // Without it, the statement's own error.
  EXPECT_EQ(error_of([&] {
              parse_text(kernel_json(kFlatTensors,
                                     R"([{"op": "tensor_copy", "dst": "y_sb[0]", "src": "x_sb[0]"},
                                {"op": "tensor_cpy", "dst": "y_sb[0]", "src": "x_sb[0]"}])"));
            }),
            "k.json: /program/1/op: unknown op \"tensor_cpy\"; did you mean 'tensor_copy'?");
  // Broken JSON after the first statements: nlohmann's message, as before.
  const std::string broken = kernel_json(kFlatTensors, R"([
      {"op": "tensor_copy", "dst": "y_sb[0]", "src": "x_sb[0]"}, {"op": ]])");
  EXPECT_EQ(
      error_of([&] { parse_text(broken); }).rfind("k.json: invalid JSON: parse error at line", 0),
      0u);
}

}  // namespace
}  // namespace trnsim::kernel
