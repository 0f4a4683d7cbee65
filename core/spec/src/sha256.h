#pragma once
// SHA-256 (FIPS 180-4), streamed: what identifies the bytes a run measured (internal; tested
// against Python's hashlib and sha256sum).
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace pitlane::spec::detail {

class Sha256 {
public:
    // `hardware`: use the x86 SHA extensions where the CPU has them (false: the portable code,
    // for tests).
    explicit Sha256(bool hardware = true);
    void update(const unsigned char* data, std::size_t n);
    // Lower-case hex of the digest; the object is spent afterwards.
    std::string hexDigest();

private:
    void block(const unsigned char* p);
    std::array<std::uint32_t, 8> h_;
    std::array<unsigned char, 64> buffer_{};
    std::size_t buffered_ = 0;
    std::uint64_t length_ = 0;  // bytes
    bool hardware_ = true;
};

}  // namespace pitlane::spec::detail
