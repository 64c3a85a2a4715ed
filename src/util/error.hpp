// Located errors for bad user input (config, kernel, command line, sweep spec).
//
// Contract: an InputError's what() is the complete message a person reads: where (file, JSON
// pointer, statement, loop values), what was expected and what was found. The CLI prints it
// verbatim on stderr and exits with kExitInvalidInput. Internal invariant violations are not
// InputErrors; they are bugs and surface as "internal error" with kExitInternal.
#pragma once

#include <stdexcept>
#include <string>

namespace trnsim {

/// Documented process exit codes (docs/cli.md).
inline constexpr int kExitOk = 0;
inline constexpr int kExitCheckFailed = 1;   ///< a check the user asked for failed (e.g. regress)
inline constexpr int kExitInvalidInput = 2;  ///< bad config, kernel, command line or spec
inline constexpr int kExitInternal = 70;     ///< a bug in trnsim (EX_SOFTWARE)

class InputError : public std::runtime_error {
 public:
  /// @param where   location, e.g. "configs/x.json: /core/tensor/clock_ghz" (may be empty)
  /// @param message what was expected and what was found
  InputError(const std::string& where, const std::string& message)
      : std::runtime_error(where.empty() ? message : where + ": " + message),
        where_(where),
        message_(message) {}

  const std::string& where() const { return where_; }
  const std::string& message() const { return message_; }

 private:
  std::string where_;
  std::string message_;
};

}  // namespace trnsim
