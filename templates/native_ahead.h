// ---- slatec native ahead: a sharing process's native launches, held to a budget of GPU work ----
// A served process launches natively while it overlaps the others on the
// whole GPU (no split yet) and for grids no larger than its range. A program
// that enqueues its launches ahead (a loop of asynchronous launches, then
// one synchronize) queued 60 one-millisecond FMA grids, or 240 triads, in
// its first millisecond; when the daemon then split the GPU, nothing of the
// split took effect until they had drained (under MPS a queue of many-wave
// grids holds the other process's launches back), the drain ran past the
// daemon's resize timeout, and the split was undone (H100, bench/RESULTS.md,
// sixteenth session). The ring follows each such launch with an event,
// learns a launch's GPU time from the events of launches queued back to
// back, and holds the host, oldest first, while the launches still pending
// are expected to take longer than the budget: a drain then takes about the
// budget (the queued served launches have the same bound).
//
// The time learned is the launch's own, not what waiting behind another
// process makes it: it falls to a shorter sample at once and rises slowly.
// So a process is held only for a backlog of its own work, and "held" tells
// the daemon it has work for its share: a program of a few 40 us SGEMMs
// starved behind a process's FMA grids is not held (its contended time,
// about an FMA grid a launch, would have held it, the daemon split the GPU
// for its 4 ms of work, and the pair ran 10% behind MPS).
#ifndef SLATE_NATIVE_AHEAD_H
#define SLATE_NATIVE_AHEAD_H
#ifndef __CUDACC_RTC__
#include <cuda_runtime_api.h>
#include <atomic>
#include <mutex>

namespace slate_native_ahead_v1 {

class ring {
public:
    // kSlots events; one slot stays the last ended launch's (the start of
    // the next one's time), so at most kSlots-1 launches are pending.
    // Until a launch's time is known, kUnknownAhead launches may be pending.
    enum { kSlots = 64, kUnknownAhead = 2 };

    // timing: a budget may be given (record's budget_us > 0), so launches'
    // times are learned from timed events. Without it the events are
    // untimed and an unbudgeted record only records: no query, no elapsed
    // time (a served process paid ~2 us of host time a native launch while
    // it shared the GPU, which a program that waits for each launch sees).
    explicit ring(bool timing = true)
        : timing_(timing), made_(0), failed_(false), head_(0), count_(0), prev_(-1), launch_us_(0), learned_(false), any_(false)
    {
    }

    // record follows a launch just made on stream (the current device).
    // With budget_us > 0 it then waits until the launches still pending
    // are expected to take at most budget_us, or one is left; with 0 it
    // only follows the launch (pending() sees it). It returns whether it
    // waited for the budget once a launch's time was known (held: the
    // program keeps the budget of its own work queued ahead; the waits to
    // learn the time do not count). The caller keeps the calls' errors
    // from the program (cudaGetLastError).
    bool record(cudaStream_t stream, double budget_us)
    {
        std::unique_lock<std::mutex> lock(mu_);
        if (failed_)
            return false;
        if (!timing_)
            budget_us = 0; // (no times to hold to a budget by)
        if (budget_us > 0)
            retire_locked();
        bool waited = false;
        if (count_ >= (unsigned)kSlots - 1u) {
            if (budget_us > 0) {
                wait_oldest(lock);
                waited = true;
                retire_locked();
            } else { // not held: the oldest is let go (the newest says whether any is pending)
                head_ = (head_ + 1u) % (unsigned)kSlots;
                --count_;
                prev_ = -1;
            }
        }
        if (count_ >= (unsigned)kSlots - 1u)
            return waited; // still full (a launch that never ends): not followed
        const unsigned slot = (head_ + count_) % (unsigned)kSlots;
        if (!made_locked(slot) || cudaEventRecord(ev_[slot], stream) != cudaSuccess)
            return waited;
        any_.store(true, std::memory_order_release);
        // Its time from the launch before it is its own GPU time when that
        // one was still pending (queued back to back) and both are held.
        timed_[slot] = budget_us > 0 && count_ > 0 && held_[(slot + kSlots - 1u) % (unsigned)kSlots];
        held_[slot] = budget_us > 0;
        ++count_;
        if (budget_us <= 0)
            return waited;
        for (;;) {
            retire_locked();
            const bool over = count_ > 1u && (learned_ ? (double)count_ * launch_us_ > budget_us
                                                       : count_ > (unsigned)kUnknownAhead);
            if (!over)
                return waited;
            waited = waited || learned_;
            wait_oldest(lock);
        }
    }

    // any reports whether a launch was ever followed (pending() costs a lock
    // and a query).
    bool any() const { return any_.load(std::memory_order_acquire); }

    // pending reports whether a followed launch has not ended.
    bool pending()
    {
        std::lock_guard<std::mutex> lock(mu_);
        retire_locked();
        return count_ > 0;
    }

    // launch_us is a held launch's GPU time as learned (0: not yet).
    double launch_us()
    {
        std::lock_guard<std::mutex> lock(mu_);
        return launch_us_;
    }

private:
    // made_locked makes slot's event at its first use (the ring fills its
    // slots in order from 0), so a program's first launch while it shares
    // makes one event, not kSlots; a failure stops the following.
    bool made_locked(unsigned slot)
    {
        while (!failed_ && made_ <= slot) {
            if (cudaEventCreateWithFlags(&ev_[made_], timing_ ? cudaEventDefault : cudaEventDisableTiming) != cudaSuccess)
                failed_ = true;
            else
                ++made_;
        }
        return !failed_;
    }

    // retire_locked drops the ended launches, oldest first, learning the
    // time of each one timed.
    void retire_locked()
    {
        while (count_ > 0) {
            const unsigned slot = head_;
            const cudaError_t r = cudaEventQuery(ev_[slot]);
            if (r == cudaErrorNotReady)
                return;
            float ms = 0;
            if (r == cudaSuccess && timed_[slot] && prev_ >= 0 && prev_ == (int)((slot + kSlots - 1u) % (unsigned)kSlots) &&
                cudaEventElapsedTime(&ms, ev_[prev_], ev_[slot]) == cudaSuccess && ms >= 0) {
                // Down at once, up by a fiftieth of the difference: the
                // launch's own time, not its wait behind another process.
                const double us = 1000.0 * (double)ms < 1.0 ? 1.0 : 1000.0 * (double)ms;
                launch_us_ = !learned_ || us < launch_us_ ? us : launch_us_ + (us - launch_us_) / 50.0;
                learned_ = true;
            }
            prev_ = (int)slot;
            head_ = (head_ + 1u) % (unsigned)kSlots;
            --count_;
        }
    }

    // wait_oldest waits for the oldest pending launch, without the lock (a
    // slot taken again meanwhile only makes the wait longer).
    void wait_oldest(std::unique_lock<std::mutex>& lock)
    {
        const cudaEvent_t oldest = ev_[head_];
        lock.unlock();
        cudaEventSynchronize(oldest);
        lock.lock();
    }

    const bool timing_; // see the constructor
    std::mutex mu_;
    cudaEvent_t ev_[kSlots];
    bool timed_[kSlots]; // its time from the launch before it is its own
    bool held_[kSlots];
    unsigned made_; // the events made: ev_[0 .. made_-1]
    bool failed_;   // making one failed: launches are not followed
    unsigned head_, count_; // the pending launches' slots, oldest first
    int prev_;              // the slot of the newest ended launch, -1 none
    double launch_us_;      // a held launch's own GPU time (see above)
    bool learned_;          // launch_us_ is known
    std::atomic<bool> any_; // a launch was followed
};

} // namespace slate_native_ahead_v1
#endif // __CUDACC_RTC__
#endif // SLATE_NATIVE_AHEAD_H
