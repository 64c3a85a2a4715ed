// Runs a function in a forked child process and returns the text it produced. SystemC
// elaborates once per process, so a process that runs several simulations (a test binary, the
// `trnsim collective --kernel` points) runs each in a child. POSIX only.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace trnsim::util {

/// Forks; the child runs `body`, writes its result to a pipe and exits 0. Returns that text,
/// or nullopt when the child failed (crashed, exited non-zero, or produced nothing); then
/// `status` holds the waitpid status. `body` should catch its own exceptions.
std::optional<std::string> run_in_child(const std::function<std::string()>& body, int& status);

}  // namespace trnsim::util
