// Drives native_ahead.h against the fake runtime (fake_cuda): a program
// enqueues launches back to back, as fast as its host can; each line says
// what the ring left queued on the fake GPU.
#include <cstdio>

#include "native_ahead.h"

// burst records n launches of launch_us each at the host's pace (no time
// passes between them but the ring's waits) and prints the most GPU work
// left queued after any of them returned, the waits, and the learned time.
static void burst(const char* name, int n, double launch_us, double budget_us, double first_us = 0, bool timing = true)
{
    slate_native_ahead_v1::ring r(timing);
    fake_next_launch_us() = first_us > 0 ? first_us : launch_us;
    fake_waits() = 0;
    fake_queries() = 0;
    double most = 0;
    int held = 0;
    for (int i = 0; i < n; ++i) {
        if (i == 4)
            fake_next_launch_us() = launch_us;
        held += r.record((cudaStream_t)0, budget_us) ? 1 : 0;
        const double ahead = fake_gpu_end_us() - fake_now_us();
        if (ahead > most)
            most = ahead;
    }
    const int queries = fake_queries(); // the records' own (pending() queries too)
    std::printf("%s: ahead at most %.0f us, waits %d, held %d, launch %.0f us, queries %d, pending %d", name, most, fake_waits(),
                held, r.launch_us(), queries, (int)r.pending());
    fake_now_us() = fake_gpu_end_us(); // the program synchronizes
    std::printf(", after its synchronize %d\n", (int)r.pending());
}

int main()
{
    {
        // A program's first launch while it shares makes one event.
        slate_native_ahead_v1::ring r(false);
        fake_creates() = 0;
        fake_next_launch_us() = 10;
        r.record((cudaStream_t)0, 0);
        const int first = fake_creates();
        for (int i = 0; i < 200; ++i)
            r.record((cudaStream_t)0, 0);
        std::printf("events: %d at the first launch, %d after 201\n", first, fake_creates());
        fake_now_us() = fake_gpu_end_us();
    }
    burst("fma 60x1000 budget 4000", 60, 1000, 4000);
    burst("triad 240x270 budget 4000", 240, 270, 4000);
    burst("long 10x10000 budget 4000", 10, 10000, 4000);
    burst("tiny 500x5 budget 4000", 500, 5, 4000);
    // Starved: its first four launches took 1000 us each (behind another
    // process's grids), then 40: the ring learns 40 and 30 of them are not
    // held.
    burst("starved sgemm 30x40 budget 4000", 30, 40, 4000, 1000);
    burst("unbounded 60x1000", 60, 1000, 0);
    burst("over the ring 100x1000 unbounded", 100, 1000, 0);
    // A process with no budget: untimed events, and a record only records.
    burst("untimed 100x1000", 100, 1000, 0, 0, false);
    burst("untimed, a budget given 60x1000", 60, 1000, 4000, 0, false);
    return 0;
}
