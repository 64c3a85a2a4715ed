// The generation-specific rules of the kernel format (spec section 6, hardware-facts.md sections
// 3-9). Each violation is an InputError located at the statement (and loop values) whose message
// starts with the rule's name, e.g. "tile-limit: moving free size N = 1024 exceeds ...".
// Rules: op-generation, engine-memory, matmul-dtype, dma-dtype, tile-limit, partition-start,
// psum-bank, shape-mismatch, core-group, dma-queue (the stream), axis (the stream).
// validate_statement() holds what declarations decide (run once, for every statement, before
// simulation); validate_instruction() what depends on evaluated values (run as the stream walks).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernel/instruction.hpp"
#include "kernel/prepare.hpp"

namespace trnsim::kernel {

/// Op/engine availability per generation, engine-memory access, dtype rules.
void validate_statement(const PreparedKernel& kernel, std::uint32_t statement);

/// Shapes, tile limits, partition starts, PSUM banks, group membership of one dynamic
/// instruction. `group` lists the cores of a core_barrier/collective (empty = all cores).
void validate_instruction(const PreparedKernel& kernel, const Instruction& instruction,
                          std::span<const std::uint32_t> group);

/// `value` as a core index in [0, cores), or an InputError at `where`.
std::uint32_t check_core_index(std::int64_t value, std::uint32_t cores, const std::string& where);
/// Rejects a core list naming a core twice.
void check_core_group(const std::vector<std::uint32_t>& group, const std::string& where);

/// "[128, 2048]": the logical shape of an access pattern (partitions at their axis).
std::string format_shape(const AccessPattern& pattern);

}  // namespace trnsim::kernel
