#pragma once
// The structure of a zip archive as read from an untrusted file (internal to model_file.cpp):
// end records (zip64 included), central directory and local headers, each length checked against
// the file before it is used. Throws ModelFileError.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace pitlane::spec::detail {

class ModelFileError : public std::runtime_error {
public:
    ModelFileError(std::string code, const std::string& reason)
        : std::runtime_error(reason), code_(std::move(code)) {}
    const std::string& code() const { return code_; }

private:
    std::string code_;
};

// pread of exact ranges of an open regular file; a range outside the file is an error naming
// `what`, never a short read.
class FileReader {
public:
    FileReader(int fd, std::uint64_t size) : fd_(fd), size_(size) {}
    std::uint64_t size() const { return size_; }
    void readAt(std::uint64_t offset, void* out, std::size_t n, const std::string& what) const;
    // Reads up to n bytes at offset; returns how many (0 at the end of the file).
    std::size_t readSome(std::uint64_t offset, void* out, std::size_t n) const;

private:
    int fd_;
    std::uint64_t size_;
};

struct ZipEntry {
    std::string name;
    std::uint16_t flags = 0;
    std::uint16_t method = 0;        // 0 stored, 8 deflated
    std::uint32_t crc = 0;           // as recorded in the central directory
    std::uint64_t compressed = 0;    // bytes of data in the file
    std::uint64_t size = 0;          // bytes once inflated
    std::uint64_t header = 0;        // offset of the local header
    std::uint64_t data = 0;          // offset of the data
    std::uint64_t end = 0;           // after the data and its data descriptor
};

struct ZipLayout {
    std::vector<ZipEntry> entries;  // central directory order
    std::uint64_t cdOffset = 0;
};

// Entry names in messages: printable ASCII kept, anything else as \xNN, at most 200 bytes.
std::string printableName(const std::string& name);

ZipLayout readZipLayout(const FileReader& file);

}  // namespace pitlane::spec::detail
