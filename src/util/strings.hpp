// String helpers for error messages: edit distance and "did you mean" suggestions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace trnsim::util {

/// Levenshtein distance between two strings (insert, delete, substitute: cost 1 each).
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `word`, or "" when none is plausibly meant
/// (distance greater than max(2, |word|/2)). Ties go to the earliest candidate.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

/// "; did you mean 'x'?" or "" when there is no close candidate.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

/// Joins with a separator: join({"a","b"}, ", ") == "a, b".
std::string join(const std::vector<std::string>& parts, std::string_view separator);

/// `text` as one RFC 4180 CSV field: quoted (quotes doubled) when it holds a comma, a quote or a
/// line break, else as is.
std::string csv_field(std::string_view text);

}  // namespace trnsim::util
