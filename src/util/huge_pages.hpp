// Heap memory in transparent huge pages for the simulator's own executables. A simulation of
// many NeuronCores keeps each core's in-flight state (up to sequencer.max_in_flight_instructions
// queued instructions, their in-flight and dependency records: about 0.7 MiB per core) and
// touches the cores' states in turn; with 4 KiB pages much of its time goes to TLB misses (8 and
// 64 cores of bench/kernels/mixed_multicore.json ran 1.2x and 1.9x faster with huge pages;
// docs/performance.md).
// glibc backs its heap with huge pages only when told so at process start (the
// glibc.malloc.hugetlb tunable), so an executable calls prefer_huge_pages(argv) first thing in
// main(): it executes the program again, once, with the tunables set. Results do not depend on
// it. Leaves out: processes that embed libtrnsim (they set GLIBC_TUNABLES themselves,
// docs/embedding.md), systems without glibc or /proc.
#pragma once

#include <optional>
#include <string>

namespace trnsim::util {

/// The tunables a process with this environment should be executed again with, or nullopt to
/// run as it is: when GLIBC_TUNABLES is already set (the user's choice stands, and the program
/// was executed again already), when TRNSIM_HUGE_PAGES is "0", and under valgrind (LD_PRELOAD
/// names its preload library: its tools must see the whole run in this process). Arguments are
/// the variables' values, nullptr when unset.
std::optional<std::string> huge_page_tunables(const char* glibc_tunables,
                                              const char* huge_pages_setting,
                                              const char* ld_preload);

/// Executes /proc/self/exe again with huge_page_tunables() in GLIBC_TUNABLES and the same
/// arguments, when huge_page_tunables() asks for it. Returns only when it does not (or the
/// execution fails: the program then runs without huge pages). Call before anything else.
void prefer_huge_pages(char** argv);

}  // namespace trnsim::util
