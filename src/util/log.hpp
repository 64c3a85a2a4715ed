// Per-component diagnostic tracing on standard error, by spdlog: each simulator component that
// traces has a dotted name (kComponents), a level, and a logger writing
// "trnsim: COMPONENT: LEVEL: message". The command line sets the levels (-v, -vv, --log
// COMPONENT=LEVEL); an embedding program may call configure() itself. By default every
// component logs warnings and errors only.
//
// Cost when off: a component asks debug_enabled() once, when it is built, and keeps the answer,
// so a disabled trace point is one predictable branch on the simulation's hot path. Levels must
// therefore be configured before the simulation is built.
#pragma once

#include <spdlog/spdlog.h>

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace trnsim::log {

/// The components that trace. A level given to a name applies to the names below it
/// ("core=debug" also sets "core.dma").
///   core: each instruction's start, end and visibility on its engine, and what it waited for;
///   core.dma: each DMA or collective the core's queues submit, and its completion;
///   dma: each DMA the memory system plans (engines, descriptors, bytes, HBM stacks);
///   collective: each collective operation's start and completion.
inline constexpr std::array<std::string_view, 4> kComponents = {"core", "core.dma", "dma",
                                                                "collective"};

/// Sets every component to the level of `verbosity` (0: warn, 1: info, 2 or more: debug), then
/// applies each spec "COMPONENT=LEVEL" in order (LEVEL: trace, debug, info, warn, error, off).
/// Throws InputError naming the spec when a component or level is unknown.
void configure(int verbosity, const std::vector<std::string>& specs);

/// The logger of `component` (one of kComponents), created on first use.
spdlog::logger& component(std::string_view component);

/// Whether `component` logs at debug level now.
bool debug_enabled(std::string_view component);

}  // namespace trnsim::log
