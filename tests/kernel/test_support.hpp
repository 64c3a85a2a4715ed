// Helpers shared by the kernel tests: targets built by hand from hardware-facts.md, and one-call
// parse + prepare + stream of a kernel written inline.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernel/parse.hpp"
#include "kernel/prepare.hpp"
#include "kernel/stream.hpp"
#include "kernel/target.hpp"
#include "util/error.hpp"

namespace trnsim::kernel::testing {

/// Trainium1: NeuronCore-v2, 2 cores per chip, 176 KiB usable SBUF per partition (hardware-facts.md
/// §1, §8), 512-element moving limit, no double_row, no MX, FP32-only PSUM output (§3.1, §3.4).
inline Target trn1_target() {
  Target t;
  t.name = "trn1";
  t.nc_version = 2;
  t.cores_per_chip = 2;
  t.sbuf_partition_bytes = 176 * 1024;
  t.hbm_bytes = 32ull << 30;
  t.double_row_supported = false;
  return t;
}

/// Trainium2: NeuronCore-v3, 8 cores per chip, 192 KiB usable SBUF per partition (the config's
/// assumption for "24 MiB usable", hardware-facts.md §8), double_row yes, MX no.
inline Target trn2_target() {
  Target t;
  t.name = "trn2";
  t.nc_version = 3;
  t.cores_per_chip = 8;
  t.sbuf_partition_bytes = 192 * 1024;
  return t;
}

/// Trainium3: NeuronCore-v4, moving free up to 4096 (FP32 dst) / 8192 (BF16 dst), MX, BF16 dst
/// (hardware-facts.md §3.1, §3.5), 256 KiB SBUF per partition (§8).
inline Target trn3_target() {
  Target t;
  t.name = "trn3";
  t.nc_version = 4;
  t.cores_per_chip = 8;
  t.sbuf_partition_bytes = 256 * 1024;
  t.hbm_bytes = 144ull << 30;
  t.gemm_moving_fmax = 4096;
  t.moving_fmax_fp32_dst = 4096;
  t.moving_fmax_bf16_dst = 8192;
  t.mx_supported = true;
  t.bf16_dst_supported = true;
  return t;
}

inline std::shared_ptr<const Program> parse_text(const std::string& text,
                                                 const ParseOptions& options = {}) {
  return std::make_shared<const Program>(parse_program_text(text, "k.json", options));
}

inline PreparedKernel prepare_text(const std::string& text, const Target& target = trn2_target(),
                                   const ParseOptions& options = {}) {
  return prepare_kernel(parse_text(text, options), target);
}

/// Every instruction of core `pid`.
inline std::vector<Instruction> collect(const PreparedKernel& kernel, std::uint32_t pid = 0) {
  InstructionStream stream(kernel, pid);
  std::vector<Instruction> out;
  Instruction instruction;
  while (stream.next(instruction)) out.push_back(instruction);
  return out;
}

/// The what() of the InputError `action` throws ("" and a test failure if none).
inline std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an InputError";
  return "";
}

/// A kernel document with the given params, tensors and program (JSON fragments).
inline std::string kernel_json(const std::string& tensors, const std::string& program,
                               const std::string& params = "{}", const std::string& cores = "1") {
  return R"({"format": "trnsim-kernel/1", "name": "t", "params": )" + params + R"(, "cores": )" +
         cores + R"(, "tensors": )" + tensors + R"(, "program": )" + program + "}";
}

/// Prepares and walks the whole stream of every core; returns the first error's what().
inline std::string run_error(const std::string& text, const Target& target = trn2_target()) {
  return error_of([&] {
    const PreparedKernel kernel = prepare_text(text, target);
    for (std::uint32_t pid = 0; pid < kernel.cores; ++pid) collect(kernel, pid);
  });
}

}  // namespace trnsim::kernel::testing
