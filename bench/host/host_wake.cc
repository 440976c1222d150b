// host_wake: what a host costs on the way of a cross-process resize (issue
// 13). A grant's way from `slatec serve` to a moved launch is host work
// between GPU steps: clock reads, system calls, and wake-ups of threads
// that sleep in poll() or on a condition variable. On the H100 host (a
// virtual machine) each wake-up seemed to cost 20-60 us and a recv, a
// parse and an uncontended lock 10-20 us (bench/RESULTS.md, twenty-second
// session); this measures the pieces directly, with no GPU.
//
//   g++ -std=c++17 -O2 -pthread -o /tmp/host_wake bench/host/host_wake.cc
//   /tmp/host_wake [ROUNDS]          (default 2000 deliveries per case)
//
// Prints one line per measurement: the cost of a call (mean over many), or
// a latency's p50/p90/p99/max in microseconds over ROUNDS deliveries, each
// sent after a random 0.2-1.2 ms pause (so a sleeping reader is asleep).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

namespace {

unsigned long long mono_ns()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

template <class F>
double per_call_ns(int n, F f)
{
    const unsigned long long t0 = mono_ns();
    for (int i = 0; i < n; ++i)
        f();
    return (double)(mono_ns() - t0) / n;
}

void report(const char* what, std::vector<double> us)
{
    if (us.empty())
        return;
    std::sort(us.begin(), us.end());
    auto q = [&](double p) { return us[std::min(us.size() - 1, (size_t)(p * us.size()))]; };
    std::printf("%-44s p50 %7.1f  p90 %7.1f  p99 %7.1f  max %8.1f us  (%zu)\n", what, q(0.5), q(0.9), q(0.99), us.back(), us.size());
}

// pause_us sleeps a random 200-1200 us (a reader that sleeps is asleep).
void pause_us(std::mt19937& rng)
{
    std::this_thread::sleep_for(std::chrono::microseconds(200 + rng() % 1000));
}

// delivery: a frame of 100 bytes, its send time inside, over a Unix
// socketpair to a reader that either sleeps in poll (2 ms timeout, as the
// client's listener between notes) or spins on poll(0) + sched_yield (as it
// does while sharing); the latency is the reader's receipt less the write's
// start, and (second figure) the receipt after the read of the frame.
void delivery(int rounds, bool spin)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
        std::perror("socketpair");
        return;
    }
    std::vector<double> woke, read;
    std::atomic<bool> done{false};
    std::thread reader([&] {
        char buf[4096];
        while (!done.load()) {
            pollfd pf = {sv[1], POLLIN, 0};
            const int r = poll(&pf, 1, spin ? 0 : 2);
            if (r <= 0) {
                if (spin)
                    sched_yield();
                continue;
            }
            const unsigned long long w = mono_ns();
            const ssize_t k = recv(sv[1], buf, sizeof buf, 0);
            const unsigned long long d = mono_ns();
            if (k < 8)
                continue;
            unsigned long long sent;
            std::memcpy(&sent, buf, 8);
            woke.push_back((double)(w - sent) / 1e3);
            read.push_back((double)(d - sent) / 1e3);
        }
    });
    std::mt19937 rng(1);
    char frame[100] = {};
    for (int i = 0; i < rounds; ++i) {
        pause_us(rng);
        const unsigned long long t = mono_ns();
        std::memcpy(frame, &t, 8);
        if (write(sv[0], frame, sizeof frame) != (ssize_t)sizeof frame)
            break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    done.store(true);
    reader.join();
    close(sv[0]);
    close(sv[1]);
    report(spin ? "socket -> spinning poll: woke" : "socket -> sleeping poll: woke", woke);
    report(spin ? "socket -> spinning poll: read" : "socket -> sleeping poll: read", read);
}

// cv_wake: notify_all to the waiter's return from wait_for (as the
// listener wakes a launch thread that sleeps between looks).
void cv_wake(int rounds)
{
    std::mutex mu;
    std::condition_variable cv;
    unsigned long long sent = 0, seen = 0;
    bool stop = false;
    std::vector<double> lat;
    std::thread waiter([&] {
        std::unique_lock<std::mutex> l(mu);
        while (!stop) {
            cv.wait_for(l, std::chrono::milliseconds(2));
            if (sent != seen) {
                lat.push_back((double)(mono_ns() - sent) / 1e3);
                seen = sent;
            }
        }
    });
    std::mt19937 rng(2);
    for (int i = 0; i < rounds; ++i) {
        pause_us(rng);
        {
            std::lock_guard<std::mutex> l(mu);
            sent = mono_ns();
        }
        cv.notify_all();
    }
    {
        std::lock_guard<std::mutex> l(mu);
        stop = true;
    }
    cv.notify_all();
    waiter.join();
    report("condition variable -> sleeping waiter", lat);
}

} // namespace

int main(int argc, char** argv)
{
    const int rounds = argc > 1 ? std::atoi(argv[1]) : 2000;
    std::printf("host_wake: %u cores online\n", (unsigned)sysconf(_SC_NPROCESSORS_ONLN));
    std::printf("%-44s %8.1f ns\n", "clock_gettime(CLOCK_MONOTONIC)", per_call_ns(1000000, [] { mono_ns(); }));
    std::printf("%-44s %8.1f ns\n", "steady_clock::now()", per_call_ns(1000000, [] { (void)std::chrono::steady_clock::now(); }));
    std::printf("%-44s %8.1f ns\n", "sched_yield()", per_call_ns(200000, [] { sched_yield(); }));
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0) {
        std::printf("%-44s %8.1f ns\n", "poll(socket, 0), nothing to read", per_call_ns(200000, [&] {
                        pollfd pf = {sv[1], POLLIN, 0};
                        poll(&pf, 1, 0);
                    }));
        char b[100] = {};
        std::printf("%-44s %8.1f ns\n", "write 100 B + recv it (one thread)", per_call_ns(100000, [&] {
                        (void)!write(sv[0], b, sizeof b);
                        (void)!recv(sv[1], b, sizeof b, 0);
                    }));
        close(sv[0]);
        close(sv[1]);
    }
    std::mutex m;
    std::printf("%-44s %8.1f ns\n", "uncontended mutex lock + unlock", per_call_ns(1000000, [&] {
                    m.lock();
                    m.unlock();
                }));
    delivery(rounds, false);
    delivery(rounds, true);
    cv_wake(rounds);
    return 0;
}
