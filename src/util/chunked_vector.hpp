// A vector that grows by fixed-size chunks: elements never move (references stay valid across
// emplace_back) and the memory held is the elements in use rounded up to one chunk, where
// std::vector holds up to twice them and copies all of them at each growth. Indexing costs one
// more load than std::vector. Leaves out erase, insert and shrinking: pools index their slots
// with it and keep free lists themselves.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace trnsim::util {

template <typename T, std::size_t ChunkBits = 8>
class ChunkedVector {
 public:
  static constexpr std::size_t kChunk = std::size_t{1} << ChunkBits;

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  /// Elements the chunks allocated so far hold.
  std::size_t capacity() const { return chunks_.size() * kChunk; }

  T& operator[](std::size_t index) { return chunks_[index >> ChunkBits][index & (kChunk - 1)]; }
  const T& operator[](std::size_t index) const {
    return chunks_[index >> ChunkBits][index & (kChunk - 1)];
  }

  /// Appends a default-constructed element (a new chunk when the last one is full); returns it.
  T& emplace_back() {
    if (size_ == capacity()) chunks_.push_back(std::make_unique<T[]>(kChunk));
    T& element = (*this)[size_];
    ++size_;
    return element;
  }

 private:
  std::vector<std::unique_ptr<T[]>> chunks_;
  std::size_t size_ = 0;
};

}  // namespace trnsim::util
