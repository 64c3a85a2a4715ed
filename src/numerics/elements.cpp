#include "numerics/elements.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "numerics/float_formats.hpp"

namespace trnsim::numerics {

namespace {

using kernel::DType;

template <class T>
T load(const std::uint8_t* bytes) {
  T value;
  std::memcpy(&value, bytes, sizeof value);
  return value;
}

template <class T>
void store(T value, std::uint8_t* bytes) {
  std::memcpy(bytes, &value, sizeof value);
}

/// Nearest integer (ties to even), saturated to [low, high]; NaN gives 0.
double to_integer(double value, double low, double high) {
  if (std::isnan(value)) return 0;
  if (value <= low) return low;
  if (value >= high) return high;
  return std::nearbyint(value);  // the default rounding mode: to nearest, ties to even
}

template <class T>
void store_integer(double value, std::uint8_t* bytes) {
  const double low = static_cast<double>(std::numeric_limits<T>::min());
  const double high = static_cast<double>(std::numeric_limits<T>::max());
  store(static_cast<T>(to_integer(value, low, high)), bytes);
}

const FloatFormat* small_float_format(DType dtype) {
  switch (dtype) {
    case DType::kBFloat16:
      return &kBFloat16;
    case DType::kFloat16:
      return &kFloat16;
    case DType::kTFloat32:
      return &kTFloat32;
    case DType::kFloat8E4M3:
      return &kFloat8E4M3;
    case DType::kFloat8E5M2:
      return &kFloat8E5M2;
    case DType::kFloat8E4M3Fn:
      return &kFloat8E4M3Fn;
    default:
      return nullptr;
  }
}

/// float32 -> bfloat16 bits, to nearest with ties to even: adding 0x7FFF plus the lowest kept bit
/// rounds the upper half (carrying into the exponent, up to infinity, as it should); a NaN
/// stays a (quiet) NaN of the same sign.
std::uint16_t bfloat16_bits(float value) {
  const auto bits = std::bit_cast<std::uint32_t>(value);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) {
    return static_cast<std::uint16_t>((bits >> 16) | 0x0040u);
  }
  return static_cast<std::uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

/// The element types NumPy and trnsim share, with NumPy's little-endian descriptions.
constexpr std::pair<std::string_view, DType> kNpyTypes[] = {
    {"<f4", DType::kFloat32}, {"<f2", DType::kFloat16}, {"|i1", DType::kInt8},
    {"<i2", DType::kInt16},   {"<i4", DType::kInt32},   {"|u1", DType::kUInt8},
    {"<u2", DType::kUInt16},  {"<u4", DType::kUInt32},  {"|b1", DType::kBool}};

[[noreturn]] void unsupported(DType dtype) {
  throw std::invalid_argument("element type " + std::string(kernel::dtype_name(dtype)) +
                              " has no functional model");
}

}  // namespace

bool is_supported(DType dtype) {
  switch (dtype) {
    case DType::kFloat8E8M0Fnu:
    case DType::kFloat8E4M3FnX4:
    case DType::kFloat8E5M2X4:
    case DType::kFloat4E2M1FnX4:
      return false;
    default:
      return true;
  }
}

double decode_element(DType dtype, const std::uint8_t* bytes) {
  switch (dtype) {
    case DType::kFloat32:
      return load<float>(bytes);
    case DType::kTFloat32:
      return decode(kTFloat32, load<std::uint32_t>(bytes) >> 13);
    case DType::kBFloat16:
      // The upper half of a float32: exact for every pattern (NaNs keep their payload).
      return std::bit_cast<float>(std::uint32_t{load<std::uint16_t>(bytes)} << 16);
    case DType::kFloat16:
      return decode(*small_float_format(dtype), load<std::uint16_t>(bytes));
    case DType::kFloat8E4M3:
    case DType::kFloat8E5M2:
    case DType::kFloat8E4M3Fn:
      return decode(*small_float_format(dtype), bytes[0]);
    case DType::kInt8:
      return load<std::int8_t>(bytes);
    case DType::kInt16:
      return load<std::int16_t>(bytes);
    case DType::kInt32:
      return load<std::int32_t>(bytes);
    case DType::kUInt8:
      return bytes[0];
    case DType::kUInt16:
      return load<std::uint16_t>(bytes);
    case DType::kUInt32:
      return load<std::uint32_t>(bytes);
    case DType::kBool:
      return bytes[0] != 0 ? 1.0 : 0.0;
    case DType::kFloat8E8M0Fnu:
    case DType::kFloat8E4M3FnX4:
    case DType::kFloat8E5M2X4:
    case DType::kFloat4E2M1FnX4:
      break;
  }
  unsupported(dtype);
}

void encode_element(DType dtype, double value, std::uint8_t* bytes) {
  switch (dtype) {
    case DType::kFloat32:
      store(static_cast<float>(value), bytes);
      return;
    case DType::kTFloat32:
      store(encode(kTFloat32, static_cast<float>(value)) << 13, bytes);
      return;
    case DType::kBFloat16:
      store(bfloat16_bits(static_cast<float>(value)), bytes);
      return;
    case DType::kFloat16:
      store(
          static_cast<std::uint16_t>(encode(*small_float_format(dtype), static_cast<float>(value))),
          bytes);
      return;
    case DType::kFloat8E4M3:
    case DType::kFloat8E5M2:
    case DType::kFloat8E4M3Fn:
      bytes[0] =
          static_cast<std::uint8_t>(encode(*small_float_format(dtype), static_cast<float>(value)));
      return;
    case DType::kInt8:
      store_integer<std::int8_t>(value, bytes);
      return;
    case DType::kInt16:
      store_integer<std::int16_t>(value, bytes);
      return;
    case DType::kInt32:
      store_integer<std::int32_t>(value, bytes);
      return;
    case DType::kUInt8:
      store_integer<std::uint8_t>(value, bytes);
      return;
    case DType::kUInt16:
      store_integer<std::uint16_t>(value, bytes);
      return;
    case DType::kUInt32:
      store_integer<std::uint32_t>(value, bytes);
      return;
    case DType::kBool:
      bytes[0] = value != 0 ? 1 : 0;
      return;
    case DType::kFloat8E8M0Fnu:
    case DType::kFloat8E4M3FnX4:
    case DType::kFloat8E5M2X4:
    case DType::kFloat4E2M1FnX4:
      break;
  }
  unsupported(dtype);
}

std::optional<DType> dtype_of_npy(std::string_view descr) {
  for (const auto& [name, dtype] : kNpyTypes) {
    if (name == descr) return dtype;
  }
  return std::nullopt;
}

std::optional<std::string_view> npy_descr_of(DType dtype) {
  for (const auto& [name, type] : kNpyTypes) {
    if (type == dtype) return name;
  }
  return std::nullopt;
}

double round_to(DType dtype, double value) {
  std::uint8_t bytes[4] = {};
  encode_element(dtype, value, bytes);
  return decode_element(dtype, bytes);
}

namespace {

/// decode_element of `count` consecutive elements, the type's case chosen once.
void decode_elements(DType dtype, const std::uint8_t* bytes, std::size_t count, double* out) {
  switch (dtype) {
    case DType::kFloat32:
      for (std::size_t i = 0; i < count; ++i) out[i] = load<float>(bytes + 4 * i);
      return;
    case DType::kBFloat16:
      for (std::size_t i = 0; i < count; ++i) {
        out[i] = std::bit_cast<float>(std::uint32_t{load<std::uint16_t>(bytes + 2 * i)} << 16);
      }
      return;
    default: {
      const std::uint32_t size = kernel::dtype_bytes(dtype);
      for (std::size_t i = 0; i < count; ++i) out[i] = decode_element(dtype, bytes + size * i);
      return;
    }
  }
}

/// encode_element of `count` consecutive elements, the type's case chosen once.
void encode_elements(DType dtype, const double* values, std::size_t count, std::uint8_t* bytes) {
  switch (dtype) {
    case DType::kFloat32:
      for (std::size_t i = 0; i < count; ++i) store(static_cast<float>(values[i]), bytes + 4 * i);
      return;
    case DType::kBFloat16:
      for (std::size_t i = 0; i < count; ++i) {
        store(bfloat16_bits(static_cast<float>(values[i])), bytes + 2 * i);
      }
      return;
    default: {
      const std::uint32_t size = kernel::dtype_bytes(dtype);
      for (std::size_t i = 0; i < count; ++i) encode_element(dtype, values[i], bytes + size * i);
      return;
    }
  }
}

}  // namespace

std::optional<UnwrittenElement> gather(const MemoryImage& image,
                                       const kernel::AccessPattern& pattern,
                                       std::vector<double>& values) {
  if (!is_supported(pattern.dtype)) unsupported(pattern.dtype);
  values.clear();
  values.reserve(pattern.elements());
  const std::uint32_t element_bytes = kernel::dtype_bytes(pattern.dtype);
  std::optional<UnwrittenElement> unwritten;
  std::vector<std::uint8_t> bytes;
  for_each_run(pattern, [&](const SpaceKey& key, std::uint64_t address, std::uint64_t count) {
    bytes.resize(count * element_bytes);
    const auto missing = image.read(key, address, bytes);
    if (missing && !unwritten) {
      const std::uint64_t element = (*missing - address) / element_bytes;
      unwritten = UnwrittenElement{key, address + element * element_bytes, values.size() + element};
    }
    const std::size_t start = values.size();
    values.resize(start + count);
    decode_elements(pattern.dtype, bytes.data(), count, values.data() + start);
  });
  return unwritten;
}

std::optional<UnwrittenElement> gather_bytes(const MemoryImage& image,
                                             const kernel::AccessPattern& pattern,
                                             std::vector<std::uint8_t>& bytes) {
  const std::uint32_t element_bytes = kernel::dtype_bytes(pattern.dtype);
  bytes.clear();
  bytes.reserve(pattern.elements() * element_bytes);
  std::optional<UnwrittenElement> unwritten;
  for_each_run(pattern, [&](const SpaceKey& key, std::uint64_t address, std::uint64_t count) {
    const std::size_t start = bytes.size();
    bytes.resize(start + count * element_bytes);
    const auto missing = image.read(
        key, address, std::span<std::uint8_t>(bytes.data() + start, count * element_bytes));
    if (missing && !unwritten) {
      const std::uint64_t element = (*missing - address) / element_bytes;
      unwritten =
          UnwrittenElement{key, address + element * element_bytes, start / element_bytes + element};
    }
  });
  return unwritten;
}

void scatter_bytes(MemoryImage& image, const kernel::AccessPattern& pattern,
                   std::span<const std::uint8_t> bytes) {
  const std::uint32_t element_bytes = kernel::dtype_bytes(pattern.dtype);
  std::size_t next = 0;
  for_each_run(pattern, [&](const SpaceKey& key, std::uint64_t address, std::uint64_t count) {
    image.write(key, address, bytes.subspan(next, count * element_bytes));
    next += count * element_bytes;
  });
}

double mx_value(DType dtype, std::uint32_t container, unsigned index) {
  switch (dtype) {
    case DType::kFloat8E4M3FnX4:
      return decode(kFloat8E4M3Fn, container >> (8 * index) & 0xFFu);
    case DType::kFloat8E5M2X4:
      return decode(kFloat8E5M2, container >> (8 * index) & 0xFFu);
    case DType::kFloat4E2M1FnX4: {
      // E2M1: sign, 2 exponent bits (bias 1), 1 mantissa bit; no infinities or NaNs.
      const std::uint32_t nibble = container >> (4 * index) & 0xFu;
      const std::uint32_t exponent = nibble >> 1 & 3u;
      const double mantissa = nibble & 1u;
      const double magnitude = exponent == 0
                                   ? mantissa * 0.5
                                   : std::ldexp(1.0 + mantissa / 2, static_cast<int>(exponent) - 1);
      return (nibble & 8u) != 0 ? -magnitude : magnitude;
    }
    default:
      unsupported(dtype);
  }
}

void scatter(MemoryImage& image, const kernel::AccessPattern& pattern,
             std::span<const double> values) {
  if (!is_supported(pattern.dtype)) unsupported(pattern.dtype);
  if (values.size() != pattern.elements()) {
    throw std::logic_error("internal error: scatter of " + std::to_string(values.size()) +
                           " values into a pattern of " + std::to_string(pattern.elements()) +
                           " elements");
  }
  const std::uint32_t element_bytes = kernel::dtype_bytes(pattern.dtype);
  std::size_t next = 0;
  std::vector<std::uint8_t> bytes;
  for_each_run(pattern, [&](const SpaceKey& key, std::uint64_t address, std::uint64_t count) {
    bytes.resize(count * element_bytes);
    encode_elements(pattern.dtype, values.data() + next, count, bytes.data());
    next += count;
    image.write(key, address, bytes);
  });
}

}  // namespace trnsim::numerics
