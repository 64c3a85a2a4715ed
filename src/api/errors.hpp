// The public API's error boundary: internal InputErrors (util/error.hpp) leave the library as
// trnsim::InvalidInput (include/trnsim/error.hpp), with the same where and message.
#pragma once

#include <utility>

#include "trnsim/error.hpp"
#include "util/error.hpp"

namespace trnsim::detail {

template <typename Action>
auto translating_errors(Action&& action) -> decltype(action()) {
  try {
    return std::forward<Action>(action)();
  } catch (const InputError& error) {
    throw InvalidInput(error.where(), error.message());
  }
}

}  // namespace trnsim::detail
