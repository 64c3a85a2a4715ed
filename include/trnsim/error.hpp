// The exception the public API throws for bad input: a config, an override, a kernel or a kernel
// param it cannot accept. Its what() is the message `trnsim` would print: where, what was
// expected and what was found. Anything else thrown (std::logic_error, std::runtime_error) is a
// misuse of the API or a bug in trnsim.
#pragma once

#include <stdexcept>
#include <string>

namespace trnsim {

class InvalidInput : public std::runtime_error {
 public:
  /// @param where   location, e.g. "configs/x.json: /tensor/clock_ghz" (may be empty)
  /// @param message what was expected and what was found
  InvalidInput(const std::string& where, const std::string& message)
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
