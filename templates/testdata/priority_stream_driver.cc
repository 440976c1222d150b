// Drives priority_stream.h against the fake runtime (fake_cuda): a launch
// moved to a shadow stream must come after what the program queued on its
// stream before it, and what the program queues after it must come after
// the launch. Each line says what one case did.
#include <cstdio>

#include "priority_stream.h"

using slate_priority_v1::kDefault;
using slate_priority_v1::kHigh;
using slate_priority_v1::kLow;

static cudaStream_t user_stream()
{
    cudaStream_t s = nullptr;
    cudaStreamCreateWithPriority(&s, cudaStreamDefault, 0);
    return s;
}

// bracket queues a launch on stream (before), one through enter/leave at
// want (the moved launch) and one on stream again (after), and prints where
// the moved launch went and whether the order held.
static void bracket(slate_priority_v1::shadows& sh, const char* name, cudaStream_t stream, slate_priority_v1::level want)
{
    const int made = fake_streams_made();
    const int before = fake_launch(stream);
    const cudaStream_t s = sh.enter(stream, want);
    const int moved = fake_launch(s);
    sh.leave(stream, s);
    const int after = fake_launch(stream);
    std::printf("%s: %s priority %d, after the launch before it %s, the launch after it after it %s, streams made %d, shadows %d\n",
                name, s == stream ? "own stream" : "shadow", fake_of(s)->priority,
                fake_launch_deps(moved).count(before) ? "yes" : "NO", fake_launch_deps(after).count(moved) ? "yes" : "NO",
                fake_streams_made() - made, sh.used());
}

int main()
{
    slate_priority_v1::shadows sh;
    const cudaStream_t a = user_stream(), b = user_stream();
    bracket(sh, "default level", a, kDefault);
    bracket(sh, "high", a, kHigh);
    bracket(sh, "high again", a, kHigh);
    bracket(sh, "low", a, kLow);
    bracket(sh, "another stream", b, kHigh);
    bracket(sh, "legacy stream", 0, kHigh);
    fake_device = 1;
    bracket(sh, "another device", a, kHigh);
    fake_device = 0;
    fake_of(b)->capturing = true;
    bracket(sh, "capturing", b, kHigh);
    fake_of(b)->capturing = false;
    const cudaStream_t c = user_stream();
    fake_fail_streams() = true;
    bracket(sh, "no stream to be had", c, kHigh);
    fake_fail_streams() = false;
    while (sh.used() < slate_priority_v1::shadows::kShadows)
        bracket(sh, "fill", user_stream(), kHigh);
    bracket(sh, "past the table", user_stream(), kHigh);
    bracket(sh, "in the table", a, kHigh);
    return 0;
}
