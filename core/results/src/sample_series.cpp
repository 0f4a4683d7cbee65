#include "pitlane/results/sample_series.h"

#include <algorithm>
#include <atomic>

namespace pitlane::results {

SampleSeries::SampleSeries(std::initializer_list<Sample> samples) {
    for (const Sample& s : samples) push_back(s);
}

void SampleSeries::restamp() {
    static std::atomic<std::uint64_t> next{1};
    stamp_ = next.fetch_add(1, std::memory_order_relaxed);
}

void SampleSeries::clear() {
    chunks_.clear();
    runs_.clear();
    size_ = 0;
    restamp();
}

SampleSeries::Chunk* SampleSeries::own(std::size_t c) {
    restamp();  // the chunk is about to change
    auto& chunk = chunks_[c];
    if (chunk.use_count() > 1) {
        auto copy = std::make_shared<Chunk>();
        copy->reserve(chunk->capacity());
        copy->assign(chunk->begin(), chunk->end());
        chunk = std::move(copy);
    }
    return chunk.get();
}

void SampleSeries::appendLatency(std::int64_t ns) {
    if (chunks_.empty() || chunks_.back()->size() == kChunk) {
        chunks_.push_back(std::make_shared<Chunk>());
        chunks_.back()->reserve(chunks_.size() == 1 ? 64 : kChunk);
    }
    Chunk& c = *own(chunks_.size() - 1);
    // The first chunk grows as a vector does (a short run stays small), the later ones are
    // reserved whole: no doubling beyond one chunk.
    if (c.size() == c.capacity()) c.reserve(std::min(kChunk, 2 * c.capacity()));
    c.push_back(ns);
    ++size_;
}

void SampleSeries::push_back(const Sample& s) {
    if (!runs_.empty()) {
        Run& r = runs_.back();
        if (r.block == s.block && r.batch_size == s.batch_size && r.worker == s.worker &&
            r.process == s.process && s.iter == r.first_iter + int(r.count)) {
            appendLatency(s.latency_ns);
            ++r.count;
            return;
        }
    }
    runs_.push_back({s.block, s.batch_size, s.worker, s.process, s.iter, size_, 1});
    appendLatency(s.latency_ns);
}

void SampleSeries::append(int block, int firstIter, int batchSize, int worker, int process,
                          const std::int64_t* latencies, std::size_t count) {
    if (count == 0) return;
    push_back({block, firstIter, batchSize, worker, latencies[0], process});
    Run& r = runs_.back();
    for (std::size_t k = 1; k < count; ++k) appendLatency(latencies[k]);
    r.count += count - 1;
}

void SampleSeries::append(const SampleSeries& other, std::size_t first, std::size_t count) {
    const std::size_t end = std::min(other.size(), first + count);
    if (first >= end) return;
    std::size_t ri = other.runOf(first, 0);
    for (std::size_t i = first; i < end;) {
        const Run& r = other.runs_[ri];
        const std::size_t runEnd = std::min(end, r.start + r.count);
        // The run's samples from i, chunk by chunk.
        bool opened = false;
        while (i < runEnd) {
            const std::size_t in = std::min(runEnd - i, kChunk - i % kChunk);
            const std::int64_t* p = other.chunks_[i / kChunk]->data() + i % kChunk;
            if (!opened) {
                append(r.block, r.first_iter + int(i - r.start), r.batch_size, r.worker,
                       r.process, p, in);
                opened = true;
            } else {
                for (std::size_t k = 0; k < in; ++k) appendLatency(p[k]);
                runs_.back().count += in;
            }
            i += in;
        }
        ++ri;
    }
}

std::size_t SampleSeries::runOf(std::size_t i, std::size_t hint) const {
    if (hint < runs_.size()) {
        const Run& r = runs_[hint];
        if (i >= r.start && i < r.start + r.count) return hint;
        if (hint + 1 < runs_.size()) {
            const Run& n = runs_[hint + 1];
            if (i >= n.start && i < n.start + n.count) return hint + 1;
        }
    }
    const auto it = std::upper_bound(runs_.begin(), runs_.end(), i,
                                     [](std::size_t v, const Run& r) { return v < r.start; });
    return std::size_t(it - runs_.begin()) - 1;
}

Sample SampleSeries::at(std::size_t i, std::size_t* runHint) const {
    const std::size_t r = runOf(i, runHint ? *runHint : 0);
    if (runHint) *runHint = r;
    const Run& run = runs_[r];
    return run.at(i - run.start, latency(i));
}

void SampleSeries::set(std::size_t i, const Sample& s) {
    const Sample old = (*this)[i];
    if (old.block == s.block && old.iter == s.iter && old.batch_size == s.batch_size &&
        old.worker == s.worker && old.process == s.process) {
        setLatency(i, s.latency_ns);
        return;
    }
    SampleSeries rebuilt;
    for (std::size_t k = 0; k < size_; ++k) rebuilt.push_back(k == i ? s : (*this)[k]);
    *this = std::move(rebuilt);
}

std::size_t SampleSeries::bytes() const {
    std::size_t b = runs_.capacity() * sizeof(Run) + chunks_.capacity() * sizeof(chunks_[0]);
    for (const auto& c : chunks_) b += c->capacity() * sizeof(std::int64_t);
    return b;
}

bool SampleSeries::operator==(const SampleSeries& o) const {
    if (size_ != o.size_) return false;
    for (std::size_t i = 0; i < size_; ++i) {
        const Sample a = (*this)[i], b = o[i];
        if (a.block != b.block || a.iter != b.iter || a.batch_size != b.batch_size ||
            a.worker != b.worker || a.latency_ns != b.latency_ns || a.process != b.process)
            return false;
    }
    return true;
}

}  // namespace pitlane::results
