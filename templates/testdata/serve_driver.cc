// serve_driver: the slatec serve C++ client (templates/serve_client.h) on a
// fake device, for templates/serve_client_test.go. No CUDA: launch_ops is
// implemented by host threads that take tasks from a queue counter and
// honour a retreat word the way the worker does (docs/ABI.md), and count
// how often each logical block ran.
//
//   serve_driver SMS THREADS LAUNCHES TOTAL ITERS US_PER_TASK
//   serve_driver decode      (the JSON reader alone: see decode_lines)
//   serve_driver ranges      (prints how $SLATE_SM_RANGE binds here: counts or places)
//
// Each of THREADS host threads makes LAUNCHES launches of kernel "k<thread>"
// with TOTAL logical blocks. Output, one line each:
//   connect served=0|1 us=N            the first (and only) connection attempt; with
//                                       $SERVE_DRIVER_WELCOMED=1, served=1 only once
//                                       the welcome came (waited for, at most 2 s)
//   launch t=T i=I served=0|1 queued=0|1 ok=0|1 us=N late_us=L signals=S ranges=lo:hi,...
//                                       (late_us: from the last fake worker's end to the
//                                       first query that saw it, for launches with threads;
//                                       else -1; signals: how often the listener
//                                       signalled a move)
//   summary launches=N served=N bad=N
//   frames sent=N                       frames the client wrote (hello, notes, acks, bye not yet)
// served=1: the launch ran on a granted range (not alone); served=0: natively.
// $SERVE_DRIVER_RETREAT_MS delays each fake drain (a stuck client);
// $SERVE_DRIVER_STARVE=N makes the first N starts of each launch run nothing;
// $SERVE_DRIVER_DIAL_MS=N connects first, as the prelude's first use does
// (process_dial), and waits N ms before registering ($SERVE_DRIVER_DIAL_ONLY=1:
// then exits, printing "dialed", with no launch; $SERVE_DRIVER_DIAL_SMS: the
// SM count it connects for, if not SMS);
// $SERVE_DRIVER_SETTLE_MS delays the second step of each retreat (settle:
// after the workers left, before the relaunch);
// $SERVE_DRIVER_NATIVE_MS is how long the fake native drain takes (native
// launches still running when an "alone" grant ends); $SERVE_DRIVER_GAP_US
// sleeps between a thread's launches; $SERVE_DRIVER_SLOW=N:US makes the
// first N launches take US a task.
// $SERVE_DRIVER_QUEUE=1 asks the client first whether a launch runs
// natively for its small grid (take_small), then whether it is queued
// (begin_queued), as the prelude does: a queued launch runs on the range it
// names, by itself to its end (the fake's workers take every block), and
// the driver waits for it as for a native one; its line says queued=1.
// US_PER_TASK < 0: a launch runs to its end inside start (no threads), so
// that a launch's time is the protocol's. With $SERVE_DRIVER_PROBE=N, the
// driver first times N more connection attempts to the socket and prints
//   probe n=N p50_us=X p90_us=Y
// Exit status 1 if any logical block ran other than once.
#include "serve_client.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <memory>
#include <vector>

namespace {

typedef std::chrono::steady_clock clk;

long long since_us(clk::time_point t0)
{
    return (long long)std::chrono::duration_cast<std::chrono::microseconds>(clk::now() - t0).count();
}

class fake_launch : public slate_serve::launch_ops {
public:
    fake_launch(unsigned long long total, unsigned int iters, int us)
        : total_(total), iters_(iters), us_(us), next_(0), retreat_(0), running_(0), counts_(new std::atomic<unsigned int>[total])
    {
        for (unsigned long long i = 0; i < total; ++i)
            counts_[i] = 0;
    }
    ~fake_launch() { join(); }
    double task_us() { return us_ > 0 ? (double)us_ : 0.0; } // a fake task: us_ whatever its blocks
    void start(unsigned int lo, unsigned int hi)
    {
        join();
        ended_ = seen_ = clk::time_point();
        ranges_ += (ranges_.empty() ? "" : ",") + std::to_string(lo) + ":" + std::to_string(hi);
        if (starved_ < starve()) { // every worker landed outside the range: none ran
            ++starved_;
            running_ = 0;
            return;
        }
        if (us_ < 0) { // an instant launch: runs in full here (timing the protocol)
            running_ = 1;
            worker();
            return;
        }
        const unsigned int width = hi - lo + 1;
        const int workers = width < 8 ? (int)width : 8;
        running_ = workers;
        for (int w = 0; w < workers; ++w)
            threads_.push_back(std::thread(&fake_launch::worker, this));
    }
    bool query()
    {
        if (running_.load() != 0)
            return false;
        if (seen_ == clk::time_point())
            seen_ = clk::now();
        return true;
    }
    bool complete() { return next_.load() >= total_; }
    retreat_result retreat(long wait_ms)
    {
        if (const char* d = std::getenv("SERVE_DRIVER_RETREAT_MS"))
            std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(d)));
        retreat_ = 1;
        // The drain, at most wait_ms (0: forever).
        const clk::time_point end = clk::now() + std::chrono::milliseconds(wait_ms);
        while (running_.load() != 0 && (wait_ms <= 0 || clk::now() < end))
            std::this_thread::sleep_for(std::chrono::microseconds(50));
        if (running_.load() != 0) {
            retreat_ = 0; // withdrawn: the workers run on
            ++stuck_retreats_;
            return retreat_stuck;
        }
        join();
        retreat_ = 0;
        return next_.load() >= total_ ? retreat_done : retreat_drained;
    }
    // settle: the retreat's second step (launch_ops' default drain ran the
    // whole retreat); $SERVE_DRIVER_SETTLE_MS makes it as slow as that (the
    // prelude's read-back of the progress).
    retreat_result settle()
    {
        if (const char* d = std::getenv("SERVE_DRIVER_SETTLE_MS"))
            std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(d)));
        return launch_ops::settle();
    }
    int stuck_retreats() const { return stuck_retreats_; }
    // signal: the listener thread tells the workers to retreat (as the
    // prelude's copy of the retreat word does); the retreat that follows
    // drains them.
    void signal()
    {
        retreat_ = 1;
        ++signals_;
    }
    int signals() const { return signals_.load(); }
    void finish() { join(); }
    void detach() { detached_ = true; } // the threads are joined later, by finish or the destructor
    bool detached() const { return detached_; }
    bool ok() const
    {
        for (unsigned long long i = 0; i < total_; ++i)
            if (counts_[i].load() != 1u)
                return false;
        return true;
    }
    const std::string& ranges() const { return ranges_; }
    // late_us: microseconds from the last worker's end to the first query
    // that saw it (-1: no threads ran).
    long long late_us() const
    {
        if (us_ < 0 || ended_ == clk::time_point() || seen_ == clk::time_point())
            return -1;
        return (long long)std::chrono::duration_cast<std::chrono::microseconds>(seen_ - ended_).count();
    }

private:
    void worker()
    {
        // $SERVE_DRIVER_HOLD: the kernel waits for the host to act after its
        // launch returns (released below, once run() has returned).
        while (hold_kernels() && !released().load())
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        for (;;) {
            if (retreat_.load())
                break;
            const unsigned long long n = next_.fetch_add(iters_);
            if (n >= total_)
                break;
            const unsigned long long end = n + iters_ < total_ ? n + iters_ : total_;
            for (unsigned long long id = n; id < end; ++id)
                counts_[id]++;
            if (us_ < 0)
                continue;
            if (us_ > 0)
                std::this_thread::sleep_for(std::chrono::microseconds(us_));
        }
        if (running_.fetch_sub(1) == 1)
            ended_ = clk::now(); // the last worker: the kernel's end
    }
    void join()
    {
        for (size_t i = 0; i < threads_.size(); ++i)
            threads_[i].join();
        threads_.clear();
    }
    unsigned long long total_;
    unsigned int iters_;
    int us_;
    std::atomic<unsigned long long> next_;
    std::atomic<unsigned int> retreat_;
    std::atomic<int> signals_{0};
    std::atomic<int> running_;
    std::unique_ptr<std::atomic<unsigned int>[]> counts_;
    std::vector<std::thread> threads_;
    std::string ranges_;
    clk::time_point ended_, seen_; // the last worker's end, the first query that saw it
    bool detached_ = false;
    int starved_ = 0;
    int stuck_retreats_ = 0;

public:
    static bool hold_kernels()
    {
        static const bool h = std::getenv("SERVE_DRIVER_HOLD") != 0;
        return h;
    }
    // $SERVE_DRIVER_STARVE=N: the first N starts of each launch run no
    // worker, as a launch on a range whose SMs other work holds.
    static int starve()
    {
        static const int n = std::getenv("SERVE_DRIVER_STARVE") ? std::atoi(std::getenv("SERVE_DRIVER_STARVE")) : 0;
        return n;
    }
    static std::atomic<bool>& released()
    {
        static std::atomic<bool> r(false);
        return r;
    }
};

// Native launches running now: the fake marks (native_launched) ask it.
std::atomic<int>& native_running()
{
    static std::atomic<int> n(0);
    return n;
}
// Native launches followed (marks), for the summary.
std::atomic<int>& native_marks()
{
    static std::atomic<int> n(0);
    return n;
}
// $SERVE_DRIVER_HELD: every held mark says it waited (the native budget).
bool fake_native_mark(void*, bool hold)
{
    ++native_marks();
    return hold && std::getenv("SERVE_DRIVER_HELD");
}
bool fake_native_pending() { return native_running().load() > 0; }

void fake_native_drain()
{
    if (const char* d = std::getenv("SERVE_DRIVER_NATIVE_MS"))
        std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(d)));
}

} // namespace

// decode_lines is `serve_driver decode`: each stdin line is a frame body in
// hex; prints "bad", or "ok" and the fields the client reads.
static int decode_lines()
{
    char line[2 * 65536 + 16];
    while (std::fgets(line, sizeof(line), stdin)) {
        std::string body;
        for (const char* p = line; p[0] && p[1] && p[0] != '\n'; p += 2) {
            unsigned int b = 0;
            std::sscanf(p, "%2x", &b);
            body += (char)b;
        }
        slate_serve::msg m;
        const bool ok = slate_serve::decode(body.data(), body.size(), &m);
        for (size_t i = 0; i < m.type.size(); ++i)
            if (!std::isalnum((unsigned char)m.type[i]) && m.type[i] != '_')
                m.type[i] = '?'; // one word on the line
        for (size_t i = 0; i < m.code.size(); ++i)
            if (!std::isalnum((unsigned char)m.code[i]) && m.code[i] != '_')
                m.code[i] = '?';
        if (!ok)
            std::printf("bad\n");
        else
            std::printf("ok type=%s re=%llu id=%llu client=%llu sms=%llu range=%d lo=%llu hi=%llu alone=%d code=%s\n",
                        m.type.c_str(), m.re, m.id, m.client, m.sms, m.has_range ? 1 : 0, m.lo, m.hi, m.alone ? 1 : 0,
                        m.code.empty() ? "-" : m.code.c_str());
    }
    return 0;
}

int main(int argc, char** argv)
{
    if (argc == 2 && std::strcmp(argv[1], "decode") == 0)
        return decode_lines();
    if (argc == 2 && std::strcmp(argv[1], "ranges") == 0) {
        // how this environment binds a range it gives itself ($SLATE_SM_RANGE)
        std::printf("%s\n", slate_serve::static_ranges_count() ? "counts" : "places");
        return 0;
    }
    if (argc != 7) {
        std::fprintf(stderr, "usage: serve_driver SMS THREADS LAUNCHES TOTAL ITERS US_PER_TASK\n");
        return 2;
    }
    const int sms = std::atoi(argv[1]), nthreads = std::atoi(argv[2]), launches = std::atoi(argv[3]);
    const unsigned long long total = std::strtoull(argv[4], 0, 10);
    const unsigned int iters = (unsigned int)std::atoi(argv[5]);
    const int us = std::atoi(argv[6]);
    if (sms <= 0 || nthreads <= 0 || launches < 0 || total == 0 || iters == 0) {
        std::fprintf(stderr, "serve_driver: bad arguments\n");
        return 2;
    }
    if (const char* pr = std::getenv("SERVE_DRIVER_PROBE")) {
        const int n = std::atoi(pr);
        std::vector<long long> us;
        for (int i = 0; i < n; ++i) {
            const clk::time_point p0 = clk::now();
            slate_serve::client* c = slate_serve::client::connect(slate_serve::socket_path(), 0, sms, 100, 0);
            us.push_back((long long)std::chrono::duration_cast<std::chrono::nanoseconds>(clk::now() - p0).count());
            if (c) {
                std::fprintf(stderr, "serve_driver: the probe connected; use it with no daemon\n");
                return 2;
            }
        }
        std::sort(us.begin(), us.end());
        if (n > 0)
            std::printf("probe n=%d p50_ns=%lld p90_ns=%lld\n", n, us[n / 2], us[n * 9 / 10]);
    }
    // $SERVE_DRIVER_DIAL_MS=N: connect first as the prelude does at the
    // program's first setup call (process_dial), then wait N ms; with
    // $SERVE_DRIVER_DIAL_ONLY=1 exit there, never launching.
    if (const char* dm = std::getenv("SERVE_DRIVER_DIAL_MS")) {
        const char* ds = std::getenv("SERVE_DRIVER_DIAL_SMS"); // the dial's SM count, if not SMS
        slate_serve::process_dial(ds ? std::atoi(ds) : sms);
        std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(dm)));
        if (std::getenv("SERVE_DRIVER_DIAL_ONLY") && std::atoi(std::getenv("SERVE_DRIVER_DIAL_ONLY")) == 1) {
            std::printf("dialed\n");
            return 0;
        }
    }
    const clk::time_point t0 = clk::now();
    // Registered as the first launch does: with thread 0's kernel.
    slate_serve::client* c = slate_serve::process_client(0, sms, "k0");
    if (c)
        c->set_native_drain(&fake_native_drain);
    if (c)
        c->set_native_marks(&fake_native_mark, &fake_native_pending);
    bool connected = c != 0;
    if (c && std::getenv("SERVE_DRIVER_WELCOMED") && std::atoi(std::getenv("SERVE_DRIVER_WELCOMED")) == 1) {
        // The client does not wait for the welcome (launches run natively
        // until it comes); tests of the protocol after it wait here.
        const clk::time_point until = clk::now() + std::chrono::seconds(2);
        while (c->alive() && c->current().epoch == 0 && clk::now() < until)
            std::this_thread::sleep_for(std::chrono::microseconds(100));
        connected = c->current().epoch != 0; // welcomed (the daemon may be lost since)
    }
    std::printf("connect served=%d us=%lld\n", connected ? 1 : 0, since_us(t0));
    std::fflush(stdout);
    const bool queue_mode = std::getenv("SERVE_DRIVER_QUEUE") && std::atoi(std::getenv("SERVE_DRIVER_QUEUE")) == 1;
    const bool queue_hold = std::getenv("SERVE_DRIVER_QUEUE_HOLD") && std::atoi(std::getenv("SERVE_DRIVER_QUEUE_HOLD")) == 1;
    std::mutex out;
    std::atomic<int> served(0), bad(0);
    std::vector<std::thread> ts;
    for (int t = 0; t < nthreads; ++t)
        ts.push_back(std::thread([&, t]() {
            const std::string kernel = "k" + std::to_string(t);
            for (int i = 0; i < launches; ++i) {
                // $SERVE_DRIVER_SLOW=N:US: the first N launches take US a task
                // (they waited behind another process's kernels).
                int task_us = us;
                if (const char* sl = std::getenv("SERVE_DRIVER_SLOW")) {
                    const int n = std::atoi(sl);
                    const char* c2 = std::strchr(sl, ':');
                    if (i < n && c2)
                        task_us = std::atoi(c2 + 1);
                }
                fake_launch f(total, iters, task_us);
                slate_serve::launch_spec s;
                s.kernel = kernel.c_str();
                s.grid[0] = (unsigned int)total;
                s.grid[1] = s.grid[2] = 1;
                s.block[0] = 256;
                s.block[1] = s.block[2] = 1;
                s.shmem = 0;
                s.cls = 0;
                const clk::time_point l0 = clk::now();
                unsigned int qlo = 0, qhi = 0;
                double qus = 0;
                unsigned long long qtoken = 0;
                // A grid no larger than the range's SMs runs natively
                // (take_small), as the prelude's make_plan decides first.
                const bool small = c && queue_mode && c->take_small(total, s.kernel);
                const bool queued = !small && c && queue_mode && c->begin_queued(s, &qlo, &qhi, &qus, &qtoken);
                if (queued) {
                    // Launched without waiting (the prelude: a self-completing
                    // worker on the program's stream), followed as a native
                    // launch is; the fake device has no stream, so the driver
                    // waits for it as for a native launch.
                    ++native_running();
                    f.start(qlo, qhi);
                    c->native_launched(0);
                    // $SERVE_DRIVER_QUEUE_HOLD=1: the launch ends before
                    // end_queued (the prelude's launcher may wait for older
                    // queued launches inside that window), so the thread is
                    // nearly always between begin_queued and end_queued.
                    if (!queue_hold)
                        c->end_queued(qtoken);
                    while (!f.query())
                        std::this_thread::sleep_for(std::chrono::microseconds(20));
                    if (queue_hold)
                        c->end_queued(qtoken);
                    f.finish();
                    --native_running();
                }
                const bool sv = queued || (!small && c && c->run(s, f));
                const long long late = sv && !queued ? f.late_us() : -1;
                if (fake_launch::hold_kernels()) {
                    // The host acts after the launch returned (a served launch
                    // detaches its kernel rather than wait for this forever).
                    std::printf("returned t=%d i=%d detached=%d us=%lld\n", t, i, f.detached() ? 1 : 0, since_us(l0));
                    std::fflush(stdout);
                    fake_launch::released() = true;
                    if (sv && !queued)
                        f.finish();
                }
                if (!sv) { // native: the whole GPU, as the prelude's fallback
                    ++native_running();
                    f.start(0, (unsigned int)sms - 1u);
                    if (c)
                        c->native_launched(0);
                    while (!f.query())
                        std::this_thread::sleep_for(std::chrono::microseconds(20));
                    f.finish();
                    --native_running();
                }
                const bool ok = f.ok();
                served += sv;
                bad += !ok;
                {
                    std::lock_guard<std::mutex> l(out);
                    std::printf("launch t=%d i=%d served=%d queued=%d ok=%d us=%lld late_us=%lld signals=%d ranges=%s\n", t, i, sv ? 1 : 0,
                                queued ? 1 : 0, ok ? 1 : 0, since_us(l0), late, f.signals(), f.ranges().c_str());
                    std::fflush(stdout);
                }
                if (const char* g = std::getenv("SERVE_DRIVER_GAP_US"))
                    std::this_thread::sleep_for(std::chrono::microseconds(std::atoi(g)));
            }
        }));
    for (size_t i = 0; i < ts.size(); ++i)
        ts[i].join();
    std::printf("summary launches=%d served=%d bad=%d\n", nthreads * launches, served.load(), bad.load());
    std::printf("frames sent=%llu\n", c ? c->frames_sent() : 0ull);
    std::printf("native marks=%d\n", native_marks().load());
    return bad.load() ? 1 : 0;
}
