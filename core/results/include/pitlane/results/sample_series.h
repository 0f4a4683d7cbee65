#pragma once
// An arm's measured samples in compact form (issue 31): 8 bytes of latency per sample, and what
// the samples share -- block, iteration, batch size, worker, process -- once per run of
// consecutive samples that share it (a samples event is one run). Latencies live in chunks of
// at most kChunk values, so a long run grows without copying what it holds and without a
// vector's doubling slack. Copies share the chunks (copy on write: a chunk is cloned before it
// changes while another series holds it), so copying a series -- to the history writer's or the
// verdict's thread -- costs a pointer per 65 536 samples, not their memory. A series may be
// copied only on the thread that changes it; copies live on any thread. Reads like a std::vector<Sample> whose elements are values:
// `for (const auto& s : series)`, `series[i]`, `series.size()`, `push_back({...})`.
// No Qt, no torch.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <algorithm>
#include <iterator>
#include <memory>
#include <vector>

namespace pitlane::results {

struct Sample {
    int block = 0;
    int iter = 0;  // index within the arm's measured samples
    int batch_size = 1;
    int worker = 0;  // which of the arm's concurrent workers measured it
    std::int64_t latency_ns = 0;
    int process = 0;  // replicate (round) whose fresh worker process measured it
};

class SampleSeries {
public:
    // Samples [start, start + count) share block, batch size, worker and process, and their
    // iterations run first_iter, first_iter + 1, ...
    struct Run {
        int block = 0, batch_size = 1, worker = 0, process = 0;
        int first_iter = 0;
        std::size_t start = 0, count = 0;
        Sample at(std::size_t offset, std::int64_t latency) const {
            return {block, first_iter + int(offset), batch_size, worker, latency, process};
        }
    };
    static constexpr std::size_t kChunk = std::size_t{1} << 16;  // latencies per chunk (512 KiB)

    class const_iterator {
    public:
        using iterator_category = std::random_access_iterator_tag;
        using value_type = Sample;
        using difference_type = std::ptrdiff_t;
        using reference = Sample;  // by value: the series stores no Sample objects
        struct pointer {
            Sample s;
            const Sample* operator->() const { return &s; }
        };
        const_iterator() = default;
        const_iterator(const SampleSeries* series, std::size_t i) : series_(series), i_(i) {}
        Sample operator*() const { return series_->at(i_, &run_); }
        pointer operator->() const { return {**this}; }
        Sample operator[](difference_type d) const { return series_->at(i_ + std::size_t(d), &run_); }
        const_iterator& operator++() { ++i_; return *this; }
        const_iterator operator++(int) { auto t = *this; ++i_; return t; }
        const_iterator& operator--() { --i_; return *this; }
        const_iterator operator--(int) { auto t = *this; --i_; return t; }
        const_iterator& operator+=(difference_type d) { i_ += std::size_t(d); return *this; }
        const_iterator& operator-=(difference_type d) { i_ -= std::size_t(d); return *this; }
        const_iterator operator+(difference_type d) const { auto t = *this; return t += d; }
        const_iterator operator-(difference_type d) const { auto t = *this; return t -= d; }
        difference_type operator-(const const_iterator& o) const { return difference_type(i_) - difference_type(o.i_); }
        bool operator==(const const_iterator& o) const { return i_ == o.i_; }
        bool operator!=(const const_iterator& o) const { return i_ != o.i_; }
        bool operator<(const const_iterator& o) const { return i_ < o.i_; }
        bool operator>(const const_iterator& o) const { return i_ > o.i_; }
        bool operator<=(const const_iterator& o) const { return i_ <= o.i_; }
        bool operator>=(const const_iterator& o) const { return i_ >= o.i_; }
        std::size_t index() const { return i_; }

    private:
        const SampleSeries* series_ = nullptr;
        std::size_t i_ = 0;
        mutable std::size_t run_ = 0;  // hint: the run of the last sample read
    };
    using iterator = const_iterator;
    using value_type = Sample;
    using size_type = std::size_t;

    SampleSeries() = default;
    SampleSeries(std::initializer_list<Sample> samples);
    template <class It>
    SampleSeries(It first, It last) {
        for (; first != last; ++first) push_back(*first);
    }

    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    std::size_t capacity() const { return size_; }  // nothing is reserved ahead
    void reserve(std::size_t) {}
    void clear();
    void push_back(const Sample& s);
    // `count` samples of one run: iterations first_iter, first_iter + 1, ...
    void append(int block, int firstIter, int batchSize, int worker, int process,
                const std::int64_t* latencies, std::size_t count);
    // Samples [first, first + count) of `other` (clamped to its size).
    void append(const SampleSeries& other, std::size_t first, std::size_t count);

    Sample operator[](std::size_t i) const { return at(i, nullptr); }
    Sample back() const { return at(size_ - 1, nullptr); }
    Sample front() const { return at(0, nullptr); }
    std::int64_t latency(std::size_t i) const { return (*chunks_[i / kChunk])[i % kChunk]; }
    void setLatency(std::size_t i, std::int64_t ns) { (*own(i / kChunk))[i % kChunk] = ns; }
    // Replaces sample i (tests; rewrites the run structure when its fields change).
    void set(std::size_t i, const Sample& s);

    const_iterator begin() const { return {this, 0}; }
    const_iterator end() const { return {this, size_}; }
    std::reverse_iterator<const_iterator> rbegin() const { return std::reverse_iterator<const_iterator>(end()); }
    std::reverse_iterator<const_iterator> rend() const { return std::reverse_iterator<const_iterator>(begin()); }

    const std::vector<Run>& runs() const { return runs_; }
    // Calls f(run, offset in the run, latencies, count) for each stretch of one run within one
    // chunk, in order: samples [first, size()) (a view that has shown the first ones walks only
    // the new), without the run lookup of series[i] per sample.
    template <class F>
    void forEachSpan(F&& f, std::size_t first = 0) const {
        if (first >= size_) return;
        for (std::size_t ri = runOf(first, 0); ri < runs_.size(); ++ri) {
            const Run& r = runs_[ri];
            std::size_t i = std::max(r.start, first);
            const std::size_t end = r.start + r.count;
            while (i < end) {
                const std::size_t in = std::min(end - i, kChunk - i % kChunk);
                f(r, i - r.start, chunks_[i / kChunk]->data() + i % kChunk, in);
                i += in;
            }
        }
    }
    // A number no other content of any series has had: it changes with every change of this
    // series, and a copy keeps it (memos of what was computed from the samples key on it).
    std::uint64_t stamp() const { return stamp_; }
    // Bytes held (latencies, their chunk slack and the runs; shared chunks counted whole).
    std::size_t bytes() const;

    bool operator==(const SampleSeries& o) const;
    bool operator!=(const SampleSeries& o) const { return !(*this == o); }

private:
    Sample at(std::size_t i, std::size_t* runHint) const;
    std::size_t runOf(std::size_t i, std::size_t hint) const;
    void appendLatency(std::int64_t ns);
    using Chunk = std::vector<std::int64_t>;
    // Chunk c, cloned first when another series shares it.
    Chunk* own(std::size_t c);

    std::vector<std::shared_ptr<Chunk>> chunks_;
    std::vector<Run> runs_;
    std::size_t size_ = 0;
    std::uint64_t stamp_ = 0;  // 0: empty since constructed
    void restamp();
};

}  // namespace pitlane::results
