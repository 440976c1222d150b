// ---- slatec serve client (host C++, docs/SERVE.md) --------------------------
// The drop-in launcher's side of the `slatec serve` protocol, version 2: find
// the daemon once per process, register, and keep the standing grant (an SM
// range and an epoch) that the daemon pushes whenever it changes. A launch
// never waits for the daemon: alone on the GPU it runs natively; otherwise it
// runs the queue worker on the granted range, and when the grant changes the
// launching thread retreats and relaunches it on the new range, and the
// client acknowledges the grant once every launch has moved. The daemon
// learns of launches from load notes the listener thread batches. It touches
// no CUDA API: everything a launch does on the device goes through
// launch_ops (the seam), which the prelude implements with the CUDA runtime
// and templates/serve_client_test.go with a fake device.
//
// A launch on a granted range is synchronous (docs/SERVE.md, "The C++
// client"): the launcher returns after the work is done, so a relaunch after
// a retreat can go on the program's own stream.
//
// Registration does not hold up a launch: hello is sent and the first
// launches run natively (as an alone process's) until the welcome arrives on
// the listener thread. Failure: no daemon, a refused handshake or no welcome
// within 500 ms, a frame that does
// not decode, EOF, `shutdown` or an `error` all mean "lost": the grant
// becomes the whole GPU, alone: later launches run natively, running ones
// are grown to all SMs. No launch waits for a message. A child process after
// fork() runs natively (the connection is its parent's).
#ifndef SLATE_SERVE_CLIENT_H
#define SLATE_SERVE_CLIENT_H

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>
#include <atomic>
#if defined(__linux__)
#include <sched.h> // sched_getaffinity (usable_cores)
#endif
#if defined(__unix__) || defined(__APPLE__)
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#define SLATE_SERVE_POSIX 1
#endif

namespace slate_serve {

enum { kMaxFrame = 65536, kProtocol = 2, kMaxDepth = 64, kMaxStarts = 32 };

// ---- the seam: what a served launch does on the device ----------------------
struct launch_ops {
    // start launches the worker on SMs [lo, hi] with the launch's control
    // block, keeping the progress (no self-reset): the first launch and every
    // relaunch after a retreat.
    virtual void start(unsigned int lo, unsigned int hi) = 0;
    // query reports, without blocking, whether the last start has completed
    // (also: it failed; a device error counts as completed).
    virtual bool query() = 0;
    // complete reports, after query saw the last start complete, whether
    // every logical block was handed out (a device error counts as
    // complete). A launch on a range can end with blocks left: while other
    // work fills the range's SMs, its workers land on SMs outside it and exit
    // (docs/ABI.md); it is then started again.
    virtual bool complete() = 0;
    // retreat sets the retreat word and waits for the workers to drain, at
    // most wait_ms (0: as long as it takes). Drained, it clears the word
    // and returns retreat_done when every logical block has been handed out
    // (nothing is left to relaunch: the launch is complete), else
    // retreat_drained. Not drained in time (a block waits for something
    // the host does only after the launch returns, which a drain never
    // sees), it withdraws the word and returns retreat_stuck: the launch
    // runs on where it is. A worker that saw the word and left meanwhile
    // is made up for as a starved launch is: the launch ends with blocks
    // left, complete() says so, and it is started again.
    enum retreat_result { retreat_drained = 0, retreat_done = 1, retreat_stuck = 2 };
    virtual retreat_result retreat(long wait_ms) = 0;
    // drain and settle are retreat in two steps, so that a move is
    // acknowledged as soon as the workers have left the old range: drain
    // sets the word and waits for them (false: they did not leave in time;
    // the word is withdrawn, as retreat_stuck), settle then reads back the
    // progress and clears the word (retreat_done or retreat_drained). The
    // defaults run retreat whole in drain.
    virtual bool drain(long wait_ms)
    {
        settled_ = retreat(wait_ms);
        return settled_ != retreat_stuck;
    }
    virtual retreat_result settle() { return settled_; }
    // signal sets the retreat word without waiting, from the listener
    // thread as a grant that moves the launch arrives (the client's lock
    // held; never between the launching thread's drain of a move and its
    // relaunch; it may come while a starved launch starts again, whose
    // workers then leave and the launch retreats once more): the workers
    // drain while the launching thread wakes, and its drain then sets
    // nothing more. Optional (the default: the drain sets it).
    virtual void signal() {}
    // finish runs after completion: resets the control block for reuse.
    virtual void finish() = 0;
    // task_us is how long one task of this launch is expected to take (its
    // logical blocks a task times the kernel's measured time a block), 0
    // when unknown: an ack that moved the launch reports it beside the
    // drain, which a retreat keeps within about one task.
    virtual double task_us() { return 0.0; }
    // detach leaves a launch that has not completed to finish on its own:
    // the control block's reset follows it in stream order, and nothing will
    // move it again (a kernel may wait for the host to act after its
    // launch; a served launch that waited for it would never return).
    virtual void detach() = 0;
    launch_ops() : settled_(retreat_drained) {}
    virtual ~launch_ops() {}

private:
    retreat_result settled_; // the default drain's retreat, for settle
};

// launch_spec describes a launch (the load notes name its kernel and class).
struct launch_spec {
    const char* kernel;
    unsigned int grid[3], block[3];
    unsigned long long shmem;
    const char* cls; // a Slate class or null
};

// ---- JSON: a writer for the requests, a strict reader for replies/pushes ----
class json_writer {
public:
    json_writer() : s_("{\"v\":2"), n_(1) {}
    void str(const char* k, const char* v)
    {
        key(k);
        s_ += '"';
        for (const unsigned char* p = (const unsigned char*)v; *p; ++p) {
            const unsigned char c = *p;
            if (c == '"' || c == '\\') {
                s_ += '\\';
                s_ += (char)c;
            } else if (c < 0x20 || c >= 0x80) {
                s_ += '?'; // names are shown, not matched byte for byte: keep the frame ASCII
            } else {
                s_ += (char)c;
            }
        }
        s_ += '"';
    }
    void num(const char* k, unsigned long long v)
    {
        key(k);
        s_ += std::to_string(v);
    }
    void boolean(const char* k, bool v)
    {
        key(k);
        s_ += v ? "true" : "false";
    }
    void range(unsigned int lo, unsigned int hi)
    {
        key("range");
        s_ += "{\"lo\":" + std::to_string(lo) + ",\"hi\":" + std::to_string(hi) + "}";
    }
    const std::string& done()
    {
        s_ += '}';
        return s_;
    }

private:
    void key(const char* k)
    {
        s_ += ",\"";
        s_ += k;
        s_ += "\":";
        ++n_;
    }
    std::string s_;
    int n_;
};

// msg holds the fields of a daemon message the client uses; the rest are
// skipped (unknown fields are ignored, as the protocol asks).
struct msg {
    unsigned long long v, re, id, client, sms, clients;
    bool has_v, has_range, alone, mps;
    unsigned long long lo, hi;
    std::string type, code;
    msg() : v(0), re(0), id(0), client(0), sms(0), clients(0), has_v(false), has_range(false), alone(false), mps(false), lo(0), hi(0) {}
};

// json_reader decodes exactly one JSON object (RFC 8259 syntax, nesting at
// most kMaxDepth) into a msg. Known fields must have their JSON type
// (integers: no sign, fraction or exponent; a value over 64 bits is an
// error); null leaves a field unset. Anything else is an error.
class json_reader {
public:
    json_reader(const char* p, size_t n) : p_(p), e_(p + n) {}
    bool decode(msg* m)
    {
        ws();
        if (!object(m, 0))
            return false;
        ws();
        return p_ == e_;
    }

private:
    void ws()
    {
        while (p_ < e_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r'))
            ++p_;
    }
    bool lit(const char* w)
    {
        const size_t n = std::strlen(w);
        if ((size_t)(e_ - p_) < n || std::memcmp(p_, w, n) != 0)
            return false;
        p_ += n;
        return true;
    }
    static int hex(char c)
    {
        return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    }
    // string reads a string; non-ASCII characters become '?' (the client
    // compares only ASCII words: types, codes).
    bool string(std::string* out)
    {
        if (p_ >= e_ || *p_ != '"')
            return false;
        ++p_;
        while (p_ < e_) {
            const unsigned char c = (unsigned char)*p_++;
            if (c == '"')
                return true;
            if (c < 0x20)
                return false;
            if (c != '\\') {
                if (out)
                    *out += c < 0x80 ? (char)c : '?';
                continue;
            }
            if (p_ >= e_)
                return false;
            const char x = *p_++;
            char r = 0;
            switch (x) {
            case '"': r = '"'; break;
            case '\\': r = '\\'; break;
            case '/': r = '/'; break;
            case 'b': r = '\b'; break;
            case 'f': r = '\f'; break;
            case 'n': r = '\n'; break;
            case 'r': r = '\r'; break;
            case 't': r = '\t'; break;
            case 'u': {
                if (e_ - p_ < 4)
                    return false;
                unsigned int u = 0;
                for (int i = 0; i < 4; ++i) {
                    const int h = hex(p_[i]);
                    if (h < 0)
                        return false;
                    u = u * 16u + (unsigned int)h;
                }
                p_ += 4;
                r = u < 0x80 ? (char)u : '?';
                break;
            }
            default:
                return false;
            }
            if (out)
                *out += r;
        }
        return false;
    }
    bool uint(unsigned long long* out)
    {
        if (p_ >= e_ || *p_ < '0' || *p_ > '9')
            return false;
        if (*p_ == '0' && e_ - p_ > 1 && p_[1] >= '0' && p_[1] <= '9')
            return false;
        unsigned long long v = 0;
        while (p_ < e_ && *p_ >= '0' && *p_ <= '9') {
            const unsigned long long d = (unsigned long long)(*p_ - '0');
            if (v > (~0ull - d) / 10ull)
                return false;
            v = v * 10ull + d;
            ++p_;
        }
        if (p_ < e_ && (*p_ == '.' || *p_ == 'e' || *p_ == 'E'))
            return false;
        *out = v;
        return true;
    }
    bool number()
    {
        if (p_ < e_ && *p_ == '-')
            ++p_;
        if (p_ >= e_ || *p_ < '0' || *p_ > '9')
            return false;
        if (*p_ == '0')
            ++p_;
        else
            while (p_ < e_ && *p_ >= '0' && *p_ <= '9')
                ++p_;
        if (p_ < e_ && *p_ == '.') {
            ++p_;
            if (p_ >= e_ || *p_ < '0' || *p_ > '9')
                return false;
            while (p_ < e_ && *p_ >= '0' && *p_ <= '9')
                ++p_;
        }
        if (p_ < e_ && (*p_ == 'e' || *p_ == 'E')) {
            ++p_;
            if (p_ < e_ && (*p_ == '+' || *p_ == '-'))
                ++p_;
            if (p_ >= e_ || *p_ < '0' || *p_ > '9')
                return false;
            while (p_ < e_ && *p_ >= '0' && *p_ <= '9')
                ++p_;
        }
        return true;
    }
    bool skip(int depth)
    {
        if (depth > kMaxDepth || p_ >= e_)
            return false;
        switch (*p_) {
        case '"':
            return string(0);
        case '{':
            return object(0, depth + 1);
        case '[': {
            ++p_;
            ws();
            if (p_ < e_ && *p_ == ']') {
                ++p_;
                return true;
            }
            for (;;) {
                ws();
                if (!skip(depth + 1))
                    return false;
                ws();
                if (p_ < e_ && *p_ == ',') {
                    ++p_;
                    continue;
                }
                if (p_ < e_ && *p_ == ']') {
                    ++p_;
                    return true;
                }
                return false;
            }
        }
        case 't':
            return lit("true");
        case 'f':
            return lit("false");
        case 'n':
            return lit("null");
        default:
            return number();
        }
    }
    // field reads a known field's value; null leaves it unset.
    bool field(msg* m, const std::string& k, int depth)
    {
        if (lit("null"))
            return true;
        unsigned long long* u = 0;
        if (k == "v") {
            m->has_v = true;
            u = &m->v;
        } else if (k == "re") {
            u = &m->re;
        } else if (k == "id") {
            u = &m->id;
        } else if (k == "client") {
            u = &m->client;
        } else if (k == "sms") {
            u = &m->sms;
        } else if (k == "clients") {
            u = &m->clients;
        }
        if (u) {
            if (!uint(u))
                return false;
            // SM counts and ids of SMs: the daemon's are <= 4096; keep them in int range.
            return u != &m->sms || *u <= 0x7fffffffull;
        }
        if (k == "type") {
            m->type.clear();
            return string(&m->type);
        }
        if (k == "code") {
            m->code.clear();
            return string(&m->code);
        }
        if (k == "alone" || k == "mps") {
            bool* b = k == "alone" ? &m->alone : &m->mps;
            if (lit("true"))
                *b = true;
            else if (lit("false"))
                *b = false;
            else
                return false;
            return true;
        }
        if (k == "range") {
            msg r;
            bool lo = false, hi = false;
            if (p_ >= e_ || *p_ != '{')
                return false;
            if (!object(&r, depth + 1, &lo, &hi) || !lo || !hi)
                return false;
            m->has_range = true;
            m->lo = r.lo;
            m->hi = r.hi;
            return true;
        }
        return skip(depth + 1);
    }
    // object reads an object into m (null: skip it). With lo/hi, it reads a
    // range's fields instead.
    bool object(msg* m, int depth, bool* lo = 0, bool* hi = 0)
    {
        if (depth > kMaxDepth || p_ >= e_ || *p_ != '{')
            return false;
        ++p_;
        ws();
        if (p_ < e_ && *p_ == '}') {
            ++p_;
            return true;
        }
        for (;;) {
            ws();
            std::string k;
            if (!string(&k))
                return false;
            ws();
            if (p_ >= e_ || *p_ != ':')
                return false;
            ++p_;
            ws();
            bool ok;
            if (lo && (k == "lo" || k == "hi")) {
                unsigned long long* v = k == "lo" ? &m->lo : &m->hi;
                ok = uint(v) && *v <= 0x7fffffffull;
                *(k == "lo" ? lo : hi) = ok;
            } else if (m && !lo) {
                ok = field(m, k, depth);
            } else {
                ok = skip(depth + 1);
            }
            if (!ok)
                return false;
            ws();
            if (p_ < e_ && *p_ == ',') {
                ++p_;
                continue;
            }
            if (p_ < e_ && *p_ == '}') {
                ++p_;
                return true;
            }
            return false;
        }
    }
    const char* p_;
    const char* e_;
};

// decode checks a daemon frame: one object, v 2, a type.
inline bool decode(const char* p, size_t n, msg* m)
{
    json_reader r(p, n);
    return r.decode(m) && m->has_v && m->v == kProtocol && !m->type.empty();
}

// detach_after_ms is how long a served launch waits for its kernel before
// it detaches it ($SLATE_SERVE_DETACH_MS, default 1000; 0: never).
inline long detach_after_ms()
{
    static const long ms = [] {
        const char* v = std::getenv("SLATE_SERVE_DETACH_MS");
        return v && *v ? std::strtol(v, 0, 10) : 1000L;
    }();
    return ms;
}

// spin_setting is $SLATE_SERVE_SPIN: 1 always spin (client::spinning), 0
// never, -1 (unset or anything else) auto.
inline int spin_setting()
{
    static const int v = [] {
        const char* e = std::getenv("SLATE_SERVE_SPIN");
        if (e && std::strcmp(e, "1") == 0)
            return 1;
        if (e && std::strcmp(e, "0") == 0)
            return 0;
        return -1;
    }();
    return v;
}

// usable_cores is how many CPUs this process may run on (on Linux its
// affinity mask: a container's or taskset's limit), else the machine's.
inline unsigned int usable_cores()
{
    static const unsigned int n = [] {
#if defined(__linux__)
        cpu_set_t set;
        CPU_ZERO(&set);
        if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
            return (unsigned int)CPU_COUNT(&set);
#endif
        return std::thread::hardware_concurrency();
    }();
    return n;
}

// spin_pays is the auto rule, CUDA's own for its spin-wait
// synchronisation in kind (it spins while the host has more cores than
// contexts): spin while the processes sharing the GPU, two spinning
// threads each, leave half of the cores free.
inline bool spin_pays(int clients, unsigned int cores)
{
    return clients > 1 && cores > 0 && 4u * (unsigned int)clients <= cores;
}

// listener_signals says whether the listener tells a moved launch's
// workers to retreat itself ($SLATE_SERVE_SIGNAL=1) instead of leaving it
// to the launch's thread.
inline bool listener_signals()
{
    static const bool on = [] {
        const char* v = std::getenv("SLATE_SERVE_SIGNAL");
        return v && std::strcmp(v, "1") == 0;
    }();
    return on;
}

// queue_budget_us bounds the served launches queued without waiting
// ($SLATE_SERVE_QUEUE_US, default 4000; 0: every served launch is
// synchronous): a launch is queued when its expected time on the range is at
// most half of it, and the launcher waits for the oldest queued launch while
// the queued ones are expected to take longer than it. It also bounds how
// long the ack of a grant change waits for them (docs/SERVE.md).
inline double queue_budget_us()
{
    static const double us = [] {
        const char* v = std::getenv("SLATE_SERVE_QUEUE_US");
        const double d = v && *v ? std::strtod(v, 0) : 4000.0;
        return d > 0 ? d : 0.0;
    }();
    return us;
}

// native_budget_us bounds the GPU work a sharing process's native launches
// keep queued ahead ($SLATE_SERVE_NATIVE_US; 0, the default: unbounded): a
// native launch waits for older ones while those still pending are
// expected to take longer (native_ahead.h). A grant change's ack waits for
// them (the native drain), so it also bounds how long a split takes to
// take effect. Opt-in: on the H100 4000 made triad + FMA 1.27x MPS (1.19x
// unbounded) but three programs 0.90x (0.98x), splits that held starving a
// latency-bound one (docs/SERVE.md, bench/RESULTS.md, sixteenth session).
inline double native_budget_us()
{
    static const double us = [] {
        const char* v = std::getenv("SLATE_SERVE_NATIVE_US");
        const double d = v && *v ? std::strtod(v, 0) : 0.0;
        return d > 0 ? d : 0.0;
    }();
    return us;
}

// Under MPS a launch's %smid values are its own: each launch numbers the
// SMs it gets 0, 1, ... in the order it gets them, free SMs first, so that
// two processes' ids do not name the same SMs and a range of places
// [lo, hi] with lo > 0 skips the free SMs and crowds onto the others' (the
// H100, bench/topology/smid_map.cu, bench/RESULTS.md, eighteenth session).
// So there a range is a count: a launch runs on its first hi - lo + 1 SMs,
// [0, hi - lo]. range_mode says how ranges (a grant, $SLATE_SM_RANGE) bind
// ($SLATE_RANGES): kRangesAuto (the default) counts under MPS (a served
// process: where the daemon reports MPS active; $SLATE_SM_RANGE: where
// mps_present), places where not (there processes time-slice, and ids are
// the hardware's); kRangesPlaces and kRangesCounts force either.
enum { kRangesAuto = 0, kRangesPlaces = 1, kRangesCounts = 2 };
inline int range_mode()
{
    static const int mode = [] {
        const char* v = std::getenv("SLATE_RANGES");
        if (v && std::strcmp(v, "places") == 0)
            return (int)kRangesPlaces;
        if (v && std::strcmp(v, "counts") == 0)
            return (int)kRangesCounts;
        if (v && *v && std::strcmp(v, "auto") != 0)
            std::fprintf(stderr, "slatec: ignoring SLATE_RANGES=%s (want auto, places or counts)\n", v);
        return (int)kRangesAuto;
    }();
    return mode;
}

// mps_present says whether the MPS control daemon looks active, as slatec
// serve checks it (serve/mps.go): $CUDA_MPS_PIPE_DIRECTORY (else
// /tmp/nvidia-mps) holds "control", a socket or a named pipe. CUDA
// programs of its user then run as MPS clients.
inline bool mps_present()
{
#ifdef SLATE_SERVE_POSIX
    const char* d = std::getenv("CUDA_MPS_PIPE_DIRECTORY");
    const std::string path = std::string(d && *d ? d : "/tmp/nvidia-mps") + "/control";
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 && (S_ISSOCK(st.st_mode) || S_ISFIFO(st.st_mode));
#else
    return false; // (MPS runs on Linux only)
#endif
}

// static_ranges_count says whether a range this process gives itself
// ($SLATE_SM_RANGE) binds as a count (range_mode; auto: mps_present).
inline bool static_ranges_count()
{
    const int m = range_mode();
    return m == kRangesCounts || (m == kRangesAuto && mps_present());
}

// small_native says which grids sharing processes launch natively
// ($SLATE_SERVE_SMALL; client::take_small): kSmallRange (1) those no larger
// than their range has SMs, kSmallGPU ("gpu") those no larger than the GPU
// has (one block an SM at most), kSmallOff (0) none; kSmallAuto (unset, the
// default) is kSmallOff where grants are counts (MPS) and kSmallRange where
// they are places. Under MPS a native grid lands wherever the hardware puts
// it, beside the others' range-bound workers; bound to its count it keeps
// off their SMs: on the H100 a 48-block latency-bound program beside FMA
// chains finished 1.23-1.26x sooner than under MPS bound, 0.88-0.94x native
// (its beside-the-triad pair lost 1.5%; bench/RESULTS.md, eighteenth session).
enum { kSmallOff = 0, kSmallRange = 1, kSmallGPU = 2, kSmallAuto = 3 };
inline int small_native()
{
    static const int mode = [] {
        const char* v = std::getenv("SLATE_SERVE_SMALL");
        if (v && *v && std::strcmp(v, "0") == 0)
            return (int)kSmallOff;
        if (v && std::strcmp(v, "gpu") == 0)
            return (int)kSmallGPU;
        if (v && std::strcmp(v, "1") == 0)
            return (int)kSmallRange;
        return (int)kSmallAuto;
    }();
    return mode;
}

// socket_path is the daemon's socket: $SLATEC_SOCKET, else
// $XDG_RUNTIME_DIR/slatec/serve.sock, else /tmp/slatec-$UID/serve.sock.
inline std::string socket_path()
{
    if (const char* s = std::getenv("SLATEC_SOCKET"))
        if (*s)
            return s;
    if (const char* d = std::getenv("XDG_RUNTIME_DIR"))
        if (*d)
            return std::string(d) + "/slatec/serve.sock";
#ifdef SLATE_SERVE_POSIX
    return "/tmp/slatec-" + std::to_string((unsigned long)getuid()) + "/serve.sock";
#else
    return std::string();
#endif
}

#ifdef SLATE_SERVE_POSIX
// socket_present reports whether a socket sits at path: without one (the
// common case, no daemon) a program pays one stat at its first drop-in
// launch, and neither a socket nor a device query.
inline bool socket_present(const std::string& path)
{
    struct stat st;
    return !path.empty() && ::stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

typedef std::chrono::steady_clock clock_type;

// micros is a duration in whole microseconds (the logs').
inline long long micros(clock_type::duration d)
{
    return (long long)std::chrono::duration_cast<std::chrono::microseconds>(d).count();
}

// grant is a standing SM range (docs/SERVE.md, "Grants"): launches run on
// [lo, hi], natively when alone. Packed into one 64-bit word so that a
// launching thread reads it with one atomic load: lo and hi in 13 bits each
// (SM ids < 4096), alone in 1, the epoch's low 37 bits above.
struct grant {
    unsigned int lo, hi;
    bool alone;
    unsigned long long epoch;
    static grant unpack(unsigned long long w)
    {
        grant g;
        g.lo = (unsigned int)(w & 0x1fffu);
        g.hi = (unsigned int)((w >> 13) & 0x1fffu);
        g.alone = ((w >> 26) & 1u) != 0;
        g.epoch = w >> 27;
        return g;
    }
    unsigned long long pack() const
    {
        return (unsigned long long)(lo & 0x1fffu) | (unsigned long long)(hi & 0x1fffu) << 13 | (unsigned long long)(alone ? 1u : 0u) << 26 |
               (epoch & ((1ull << 37) - 1ull)) << 27;
    }
};

// client is the process's one connection to the daemon.
class client {
public:
    // connect dials the daemon and sends hello; it does not wait for the
    // welcome, which carries the first grant: the listener thread takes it
    // (at most timeout_ms later, else the daemon is lost). Until it comes
    // the grant is the whole GPU, alone, so the first launches run natively
    // at once instead of waiting a round trip to the daemon (250-850 us on
    // an H200 host, which a program timing one short launch would see).
    // Null: no daemon, or a refusal; run natively.
    static client* connect(const std::string& path, int device, int sms, int timeout_ms, const char* kernel)
    {
        client* c = dial(path, sms, timeout_ms);
        if (c && !c->join(device, sms, kernel)) {
            c->abandon();
            return 0;
        }
        return c;
    }

    // dial connects and starts the listener thread, which waits for hello
    // (join): a connection made at the program's first setup call
    // (process_dial), so that the launch that registers pays only for
    // hello. A connect, reading the process's name and starting a thread
    // took 150-180 us on an H100 host, inside the first run of a program
    // beside another (bench/RESULTS.md). Null: no daemon, or not this
    // user's.
    static client* dial(const std::string& path, int sms, int timeout_ms)
    {
        if (path.empty() || path.size() >= sizeof(((sockaddr_un*)0)->sun_path) || sms <= 0 || sms > 4096)
            return 0;
        const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        if (fd < 0)
            return 0;
        fcntl(fd, F_SETFD, FD_CLOEXEC);
        const int fl = fcntl(fd, F_GETFL, 0);
        sockaddr_un a;
        std::memset(&a, 0, sizeof(a));
        a.sun_family = AF_UNIX;
        std::memcpy(a.sun_path, path.c_str(), path.size());
        // Non-blocking: ENOENT and ECONNREFUSED come back at once, and a
        // full backlog (EAGAIN) is a failure too, never a wait.
        if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0 || ::connect(fd, (sockaddr*)&a, sizeof(a)) != 0 ||
            fcntl(fd, F_SETFL, fl) != 0) {
            ::close(fd);
            return 0;
        }
#if defined(__linux__) && defined(SO_PEERCRED)
        // The daemon must be this user's (as the daemon checks its clients):
        // a socket another user planted is not talked to.
        struct ucred cred;
        socklen_t len = sizeof(cred);
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != getuid()) {
            ::close(fd);
            return 0;
        }
#endif
        client* c = new client(fd, sms);
        if (FILE* f = std::fopen("/proc/self/comm", "r")) {
            char name[64];
            if (std::fgets(name, sizeof(name), f)) {
                name[std::strcspn(name, "\n")] = 0;
                c->name_ = name;
            }
            std::fclose(f);
        }
        grant joining; // until the welcome: alone, native
        joining.lo = 0;
        joining.hi = (unsigned int)sms - 1u;
        joining.alone = true;
        joining.epoch = 0;
        c->grant_.store(joining.pack(), std::memory_order_release);
        timeval tv = {1, 0}; // a daemon that takes no frame for 1 s is lost
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
        pthread_atfork(0, 0, &client::forked);
        std::thread(&client::listen, c, timeout_ms).detach();
        return c;
    }

    // join registers a dialed connection: hello, with the kernel of the
    // launch that registers. False: it cannot (another SM count than the
    // dialed one's, a child after fork(), the daemon lost since, or hello
    // not sent at once); the caller abandons it.
    bool join(int device, int sms, const char* kernel)
    {
        if (sms != sms_ || child() || !alive() || !hello(device, sms, kernel))
            return false;
        std::lock_guard<std::mutex> l(mu_);
        joined_ = true;
        cv_.notify_all();
        return true;
    }

    // abandon ends a connection that will not be used (nothing is logged;
    // the listener closes it). A child after fork() leaves it alone: the
    // socket is its parent's.
    void abandon()
    {
        if (child())
            return;
        std::lock_guard<std::mutex> l(mu_);
        quiet_ = true;
        lose_locked("not registered");
    }

    // alive: connected, and not a child after fork() (the connection is the
    // parent's). Lock-free: launches ask it.
    bool alive() const { return !lost_.load(std::memory_order_acquire) && !child(); }
    int sms() const { return sms_; }
    unsigned long long id() const { return client_id_; }
    // current is the grant now (the whole GPU, alone, once the daemon is
    // lost), as the daemon gave it: acks report it.
    grant current() const { return grant::unpack(grant_.load(std::memory_order_acquire)); }
    // spinning says whether a served launch's thread polls without sleeping
    // for the whole launch, as CUDA's spin-wait synchronisation does,
    // instead of sleeping on the condition variable between looks, and the
    // listener polls the socket the same way while a served launch runs
    // beside another process: a grant change is then seen within a poll,
    // not after two wake-ups (each tens of us on the H100 host, a virtual
    // machine: a move's drained range came a median of ~112 us past its
    // task without, ~83 with, bench/RESULTS.md). It costs a core per
    // thread with a served launch running and one for the listener:
    // $SLATE_SERVE_SPIN=1 always, 0 never, else spin_pays.
    bool spinning() const
    {
        const int s = spin_setting();
        return s >= 0 ? s == 1 : spin_pays(clients_.load(std::memory_order_relaxed), usable_cores());
    }
    // placed is the range launches bind their workers to now: the grant,
    // or under MPS its count from 0 (range_mode).
    grant placed() const
    {
        grant g = current();
        if (counts_.load(std::memory_order_relaxed)) {
            g.hi -= g.lo;
            g.lo = 0;
        }
        return g;
    }
    // counts says whether grants are counts (range_mode); set once, by
    // the welcome.
    bool counts() const { return counts_.load(std::memory_order_relaxed); }

    // set_native_drain sets what waits for the process's native launches
    // issued so far (the prelude: cudaDeviceSynchronize on a helper
    // thread); it runs when an "alone" grant ends. The first call wins.
    void set_native_drain(void (*f)())
    {
        std::lock_guard<std::mutex> l(mu_);
        if (!native_drain_)
            native_drain_ = f;
    }

    // set_native_marks sets how the process's native launches are followed
    // while it shares the GPU (the prelude: mark records an event on the
    // launch's stream and, with hold, keeps the work queued ahead within
    // native_budget_us(), saying whether it waited; pending queries them).
    // The first call wins.
    void set_native_marks(bool (*mark)(void* stream, bool hold), bool (*pending)())
    {
        std::lock_guard<std::mutex> l(mu_);
        if (!native_mark_) {
            native_mark_ = mark;
            native_pending_fn_ = pending;
        }
    }

    // native_launched follows a native launch just made on stream while other
    // processes are registered, or before the welcome says whether they are
    // (a program's warm-up, then a synchronize, may wait behind another's
    // launches for tens of milliseconds). The load notes then say whether
    // the process's native launches have all ended (native_pending): such a
    // process is waiting, not idle, though it sends no launches. Sharing, a
    // native launch (hold) may wait for older ones when native_budget_us()
    // is set: a grant change's drain then takes about that (queued served
    // launches, bounded by their own budget, pass hold = false). Alone, it
    // costs two relaxed loads.
    void native_launched(void* stream, bool hold = true)
    {
        const bool sharing = sharing_.load(std::memory_order_relaxed);
        if (!native_mark_ || !(sharing || grant::unpack(grant_.load(std::memory_order_relaxed)).epoch == 0) ||
            !alive()) // the daemon gone (nobody reads the notes), or a child after fork()
            return;
        if (native_mark_(stream, hold && sharing))
            held_.store(true, std::memory_order_relaxed); // the next load note says so: busy
        marked_.store(true, std::memory_order_release);
    }

    // take_native reports whether a launch runs natively now (the daemon is
    // gone or the grant says alone), and counts it if so. The alone steady
    // state costs three atomic loads and a relaxed increment. kernel (the
    // launch's kernel, or null) goes into the load notes as a served
    // launch's does: the daemon plans a split from the kernels processes
    // run, and processes that overlap on the whole GPU (no plan yet) launch
    // only natively. A name is copied when its pointer changes (kernel
    // names are static strings, so that is when the kernel changes).
    bool take_native(const char* kernel = 0)
    {
        if (!alive() || grant::unpack(grant_.load(std::memory_order_acquire)).alone) {
            count_native(kernel);
            return true;
        }
        return false;
    }

    // count_native counts a native launch of kernel for the load notes.
    void count_native(const char* kernel)
    {
        launches_total_.fetch_add(1, std::memory_order_relaxed);
        if (kernel && native_kernel_.load(std::memory_order_relaxed) != kernel)
            note_native_kernel(kernel);
        if (!dirty_.load(std::memory_order_relaxed))
            dirty_.store(true, std::memory_order_relaxed);
    }

    // take_small reports whether a launch of blocks logical blocks runs
    // natively though the process shares the GPU (and counts it as
    // take_native does): a grid of no more blocks than the granted range
    // has SMs. The hardware puts such a grid's blocks on SMs that are free,
    // the others' work being held to their ranges, and it has nothing to
    // resize (its blocks all run at once). On its range it took the queue
    // worker's whole wave, a block on every SM, and beside another process's
    // range-bound launches it ran 3x slower: on the H100 a 48-block kernel
    // of dependent chains took 72 ms a round on SMs 60-131 beside a triad on
    // 0-59, 24.6 ms natively beside the same triad, 24.4 alone
    // (scripts/range-pair.sh; bench/RESULTS.md, fifteenth session).
    bool take_small(unsigned long long blocks, const char* kernel = 0)
    {
        int mode = small_native();
        if (mode == kSmallAuto)
            mode = counts() ? (int)kSmallOff : (int)kSmallRange;
        if (mode == kSmallOff || !alive())
            return false;
        const grant g = grant::unpack(grant_.load(std::memory_order_acquire));
        if (g.alone || blocks > (unsigned long long)(mode == kSmallGPU ? (unsigned)sms_ : g.hi - g.lo + 1u))
            return false;
        count_native(kernel);
        return true;
    }

    // note_native_kernel records a natively launched kernel for the load
    // notes (the rare path of take_native: a different kernel).
    void note_native_kernel(const char* kernel)
    {
        std::lock_guard<std::mutex> l(mu_);
        native_kernel_.store(kernel, std::memory_order_relaxed);
        if (kernel_ != kernel) {
            kernel_ = kernel;
            cls_.clear();
        }
    }

    // run makes one launch on the current grant's range and returns when it
    // has completed, moving it whenever the grant changes. No message is
    // awaited: the daemon learns of launches from the listener's batched
    // load notes. False: the launch runs natively instead (alone, the
    // daemon gone, or a launch the protocol cannot describe).
    bool run(const launch_spec& s, launch_ops& ops)
    {
        if (!valid(s) || take_native(s.kernel))
            return false;
        launch_rec L;
        grant g;
        {
            std::lock_guard<std::mutex> l(mu_);
            g = placed();
            if (lost_ || g.alone)
                return false; // raced with a change: native
            L.epoch = g.epoch;
            L.ops = &ops;
            L.lo = g.lo;
            L.hi = g.hi;
            launches_.push_back(&L);
            serving_.store(++inflight_, std::memory_order_relaxed);
            launches_total_.fetch_add(1, std::memory_order_relaxed);
            kernel_ = s.kernel;
            cls_ = s.cls && *s.cls ? s.cls : "";
            native_kernel_.store(nullptr, std::memory_order_relaxed); // the next native launch names its kernel again
            dirty_.store(true, std::memory_order_relaxed);
        }
        unsigned int lo = g.lo, hi = g.hi;
        bool full = lo == 0 && hi + 1 >= (unsigned int)sms_;
        // The launch is waited for here, and the program's next launch
        // follows only then: every microsecond between the kernel's end
        // and seeing it is GPU time lost. The kernel's last launch says
        // when to look (its SM-microseconds over this range's SMs).
        const double expect_us = expected_us(s.kernel, hi - lo + 1);
        // The clock starts before the launch call: a thread descheduled
        // between the call and the clock would otherwise time a 600 us kernel
        // at 1 us (seen on a loaded 2-core host), learn it, and queue the
        // kernel's later launches as short ones. So took_us below is never
        // less than the kernel's own time.
        const clock_type::time_point began = clock_type::now();
        clock_type::time_point started = began; // the last start (for the log)
        ops.start(lo, hi);
        {
            std::lock_guard<std::mutex> r(mu_);
            L.running = true; // the listener may signal it from here
        }
        long quantum_us = 5;
        int starts = 0; // starved starts on the current range
        // pinned: a retreat found workers that did not drain; the launch is
        // not moved again.
        bool detached = false, finished = false, moved_any = false, pinned = false;
        std::unique_lock<std::mutex> l(mu_, std::defer_lock);
        for (;;) {
            // Spinning, the lock is taken only when the grant changed or
            // the daemon was lost (nothing else this look acts on is set
            // by the listener without the listener's signal): a launcher
            // that took mu_ at every look kept the listener from the grant
            // it had just read.
            if (!(spinning() && !listener_signals() && current().epoch == L.epoch && !lost_.load(std::memory_order_acquire))) {
                l.lock();
                const grant now = placed();
                // Signalled by the listener: the workers were told to retreat,
                // so the launch retreats whatever the grant is now (a later one
                // may give its range back, or the daemon be lost since).
                const bool signalled = L.signalled;
                if ((now.epoch != L.epoch && !lost_) || (signalled && !lost_)) {
                    L.running = false;
                    L.signalled = false;
                    const clock_type::time_point at = grant_at_; // (for the log)
                    l.unlock();
                    // The grant changed: move to its range (the retreat word on
                    // the high-priority stream, the drain, the relaunch on the
                    // program's stream: this launch is the stream's last work).
                    bool moved = false, relaunch = false, counted = false; // counted: the move's ack went
                    double retreated_task_us = 0.0; // a retreat that drained: one task of the launch
                    const clock_type::time_point seen = clock_type::now();
                    clock_type::time_point drained = seen, acked = seen;
                    unsigned int from_lo = lo, from_hi = hi;
                    if (!(now.lo == lo && now.hi == hi) || signalled) {
                        if (ops.query() && ops.complete()) {
                            finished = true; // already done: nothing to move
                        } else if (pinned) {
                            moved = true; // it cannot move: it counts as moved (the others overlap it)
                        } else if (!ops.drain(retreat_wait_ms(began))) {
                            pinned = true; // its workers did not drain: it stays, never moved again
                            moved = true;
                            log_pinned(s.kernel);
                        } else {
                            // The workers have left the old range: it is free,
                            // so the ack goes now, before the progress is read
                            // back and the launch relaunched (neither of which
                            // the daemon waits for).
                            drained = clock_type::now();
                            retreated_task_us = ops.task_us(); // the task it waited for
                            std::string early;
                            l.lock();
                            L.epoch = now.epoch;
                            moved_any = true;
                            ++moved_;
                            if (retreated_task_us > moved_task_us_)
                                moved_task_us_ = retreated_task_us;
                            early = ack_locked();
                            l.unlock();
                            if (!early.empty())
                                send(early);
                            acked = clock_type::now();
                            counted = true;
                            if (ops.settle() == launch_ops::retreat_done) {
                                finished = true; // every block handed out
                            } else {
                                lo = now.lo;
                                hi = now.hi;
                                full = lo == 0 && hi + 1 >= (unsigned int)sms_;
                                starts = 0;
                                relaunch = true;
                            }
                        }
                    }
                    std::string ack;
                    l.lock();
                    L.epoch = now.epoch;
                    moved_any = moved_any || moved;
                    if (moved && !counted)
                        ++moved_;
                    if (!counted && retreated_task_us > moved_task_us_)
                        moved_task_us_ = retreated_task_us;
                    if (finished)
                        unregister_locked(&L);
                    ack = ack_locked(); // (a drained move's went already)
                    L.running = !finished && !pinned && !relaunch;
                    l.unlock();
                    if (!ack.empty())
                        send(ack);
                    if (finished)
                        break;
                    if (relaunch) {
                        const clock_type::time_point settled = clock_type::now();
                        const clock_type::time_point moved_start = started;
                        started = settled;
                        ops.start(lo, hi);
                        l.lock();
                        L.lo = lo;
                        L.hi = hi;
                        L.running = true;
                        l.unlock();
                        // Where a move's time goes (gpu-serve prints it).
                        if (std::getenv("SLATE_LOG"))
                            std::fprintf(stderr, "slate: serve: %s moved [%u,%u] -> [%u,%u] %lld us into its start: seen %lld us after the grant, drained in %lld us (task %.0f us%s), acked in %lld us, settled in %lld us, relaunched in %lld us\n",
                                         s.kernel, from_lo, from_hi, lo, hi, micros(at - moved_start),
                                         micros(seen - at), micros(drained - seen), retreated_task_us,
                                         signalled ? ", signalled by the listener" : "", micros(acked - drained), micros(settled - acked),
                                         micros(clock_type::now() - settled));
                    }
                    quantum_us = 5;
                    continue;
                }
                if (lost_ && (!full || signalled)) {
                    // The daemon is gone: take the whole GPU, acknowledging
                    // nothing (a launch signalled before the loss, on all SMs
                    // already, drains and starts again there).
                    L.running = false;
                    L.signalled = false;
                    l.unlock();
                    full = true;
                    if (pinned)
                        continue;
                    const launch_ops::retreat_result r = ops.retreat(retreat_wait_ms(began));
                    if (r == launch_ops::retreat_done)
                        break;
                    if (r == launch_ops::retreat_stuck) {
                        pinned = true;
                        log_pinned(s.kernel);
                        continue;
                    }
                    lo = 0;
                    hi = (unsigned int)sms_ - 1u;
                    started = clock_type::now();
                    ops.start(lo, hi);
                    continue;
                }
                l.unlock();
            }
            if (ops.query()) {
                if (ops.complete())
                    break;
                // Starved: no worker found a free slot on the range before
                // all had exited (the H200 ran a 96-block launch on SMs
                // 66-131 this way while another process's kernel held them:
                // no block ran). Start again; after kMaxStarts on the range,
                // on all SMs, where a worker always runs.
                if (++starts >= kMaxStarts && !full) {
                    lo = 0;
                    hi = (unsigned int)sms_ - 1u;
                    full = true;
                }
                if (std::getenv("SLATE_LOG"))
                    std::fprintf(stderr, "slate: serve: %s starved on [%u,%u] (start %d, %lld us into the launch): started again\n",
                                 s.kernel, lo, hi, starts,
                                 micros(clock_type::now() - began));
                started = clock_type::now();
                ops.start(lo, hi);
                quantum_us = 5; // a starved start ends within microseconds: look again soon
            }
            if (detach_after_ms() > 0 && clock_type::now() - began > std::chrono::milliseconds(detach_after_ms())) {
                // A served launch returns when its kernel is done, and a kernel
                // that waits for the host to act after its launch never is:
                // past the limit it runs on by itself, no longer moved. Not
                // once signalled: its workers may be leaving, and a detached
                // launch is never started again (the retreat goes first).
                l.lock();
                const bool told = L.signalled;
                L.running = told;
                l.unlock();
                if (told)
                    continue;
                if (std::getenv("SLATE_LOG"))
                    std::fprintf(stderr, "slate: serve: %s still running after %ld ms: detached (no more moves)\n", s.kernel,
                                 detach_after_ms());
                ops.detach();
                detached = true;
                break;
            }
            // With an expected time E: sleep through the first half (a
            // grant change wakes the wait), look every ~70 us (a timed wait
            // of 20 us; timer slack makes it 50 more) to 0.9 E, then poll
            // without sleeping to 2 E (at most 1 ms: a core spins); past
            // that (or with no E), back off to 200 us. E is only the last
            // launch's time: when it ran long (it waited behind another
            // process's kernels) or the kernel runs faster now (a
            // co-runner left), a launch is still seen by E/2, and within
            // 2 ms (the longest sleep), and E follows it.
            if (spinning()) {
                std::this_thread::yield();
                continue;
            }
            long wait_us = quantum_us;
            if (expect_us > 0) {
                const double el = (double)micros(clock_type::now() - began);
                if (el < 0.5 * expect_us - 60)
                    wait_us = (long)std::min(0.5 * expect_us - el - 50, 2000.0);
                else if (el < 0.9 * expect_us - 60)
                    wait_us = 20;
                else if (el < std::min(2 * expect_us + 100, 0.9 * expect_us + 1000)) {
                    std::this_thread::yield();
                    continue;
                }
            }
            l.lock();
            if (current().epoch == L.epoch && !(lost_ && !full))
                cv_.wait_for(l, std::chrono::microseconds(wait_us));
            l.unlock();
            if (quantum_us < 200 && wait_us == quantum_us)
                quantum_us *= 2;
        }
        {
            // Done (every block handed out): a signal the listener sent
            // since is cleared before the control block's reset (finish, on
            // the program's stream) lets its slot be reused.
            l.lock();
            const bool told = L.signalled;
            L.running = L.signalled = false;
            l.unlock();
            if (told && !detached)
                ops.retreat(retreat_wait_ms(began));
        }
        const long long took_us = micros(clock_type::now() - began);
        if (!detached && !moved_any && starts == 0)
            learn_us(s.kernel, hi - lo + 1, (double)took_us, (double)s.grid[0] * s.grid[1] * s.grid[2]);
        if (std::getenv("SLATE_LOG"))
            std::fprintf(stderr, "slate: serve: %s ended on [%u,%u] after %lld us (expected %.0f us, %d starved starts%s%s)\n", s.kernel, lo,
                         hi, took_us, expect_us, starts, moved_any ? ", moved" : "", detached ? ", detached" : "");
        if (!detached)
            ops.finish();
        std::string ack;
        {
            std::lock_guard<std::mutex> g2(mu_);
            if (!finished)
                unregister_locked(&L);
            ack = ack_locked(); // it may have been the last launch on an old range
        }
        if (!ack.empty())
            send(ack);
        return true;
    }

    // begin_queued decides whether a launch is queued: run on the current
    // grant's range by a self-completing worker (its last worker out runs
    // whatever the range's workers left, wherever it runs) on the program's
    // stream, without waiting for it, as a native launch is. It is, when the
    // kernel's expected time on the range (its last synchronous served
    // launch, scaled to the blocks and SMs) is known and at most half of
    // queue_budget_us(), and the launch is not the kernel's 64th since its
    // time was last measured (that one runs synchronously, and measures it
    // again). True: *lo, *hi are the range, *expect_us the expected time,
    // *token what the caller passes to end_queued() once it has launched. A queued launch is
    // never moved: when the grant changes, the ack waits until the launches
    // queued so far have ended (as for native launches: the native drain),
    // and the new range is used from the next launch. False: run() it.
    bool begin_queued(const launch_spec& s, unsigned int* lo, unsigned int* hi, double* expect_us, unsigned long long* token)
    {
        const double budget = queue_budget_us();
        if (budget <= 0 || !valid(s) || !alive())
            return false;
        std::lock_guard<std::mutex> l(mu_);
        const grant g = placed();
        if (lost_ || g.alone)
            return false;
        std::map<const char*, timing>::iterator it = timings_.find(s.kernel);
        if (it == timings_.end())
            return false; // not measured yet: synchronously, which measures it
        timing& t = it->second;
        const unsigned int sms = g.hi - g.lo + 1u;
        const double blocks = (double)s.grid[0] * s.grid[1] * s.grid[2];
        double e = sms <= t.sms ? t.us : t.us * t.sms / sms;
        if (t.blocks > 0 && blocks > t.blocks)
            e *= blocks / t.blocks;
        if (e > budget / 2 || ++t.queued >= 64)
            return false;
        ++queuing_[queue_gen_];
        *token = queue_gen_;
        queued_ = true;
        launches_total_.fetch_add(1, std::memory_order_relaxed);
        kernel_ = s.kernel;
        cls_ = s.cls && *s.cls ? s.cls : "";
        native_kernel_.store(nullptr, std::memory_order_relaxed);
        dirty_.store(true, std::memory_order_relaxed);
        *lo = g.lo;
        *hi = g.hi;
        *expect_us = e;
        return true;
    }

    // end_queued follows the launch call of a queued launch (token: from
    // begin_queued): the launch is on its stream, so a native drain from
    // here on waits for it.
    void end_queued(unsigned long long token)
    {
        std::lock_guard<std::mutex> l(mu_);
        std::map<unsigned long long, int>::iterator it = queuing_.find(token);
        if (it != queuing_.end() && --it->second <= 0) {
            queuing_.erase(it);
            cv_.notify_all();
        }
    }

    // retreat_wait_ms is how long a move waits for a launch's workers to
    // drain: what is left of the detach limit (a launch that has not
    // drained by then is detached anyway), at least 1 ms; 0 (forever)
    // when launches are never detached.
    static long retreat_wait_ms(clock_type::time_point began)
    {
        const long lim = detach_after_ms();
        if (lim <= 0)
            return 0;
        const long el = (long)std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - began).count();
        return lim - el > 1 ? lim - el : 1;
    }
    static void log_pinned(const char* kernel)
    {
        if (std::getenv("SLATE_LOG"))
            std::fprintf(stderr, "slate: serve: %s did not drain for a move: it stays on its range (no more moves)\n", kernel);
    }

    // expected_us is how long a launch of kernel should take on sms SMs,
    // from its last launch that ran on one range from start to end (0: none
    // yet): that launch's time on as many SMs or more, its time scaled
    // linearly on fewer (no kernel speeds up more than that), a lower bound
    // for a kernel that runs as it did. Kernel names are static strings:
    // the pointer is the key.
    double expected_us(const char* kernel, unsigned int sms)
    {
        std::lock_guard<std::mutex> l(mu_);
        std::map<const char*, timing>::const_iterator it = timings_.find(kernel);
        if (it == timings_.end() || sms == 0)
            return 0;
        const timing& t = it->second;
        return sms <= t.sms ? t.us : t.us * t.sms / sms;
    }
    void learn_us(const char* kernel, unsigned int sms, double us, double blocks)
    {
        std::lock_guard<std::mutex> l(mu_);
        if (timings_.size() < 1024 || timings_.count(kernel)) {
            timing& t = timings_[kernel];
            t.sms = sms;
            t.us = us;
            t.blocks = blocks;
            t.queued = 0;
        }
    }

    // bye tells the daemon the job is done (best effort, no wait).
    void bye()
    {
        {
            std::lock_guard<std::mutex> l(mu_);
            quiet_ = true; // the daemon closes after its ok: not a loss worth logging
        }
        json_writer w;
        w.str("type", "bye");
        w.num("id", next_request_id());
        send(w.done());
    }

    // frames_sent counts the frames written (tests).
    unsigned long long frames_sent() const { return frames_.load(); }

private:
    struct launch_rec {
        unsigned long long epoch; // the grant whose range it runs on
        // For the listener's signal (mu_): the launch's ops and range, and
        // whether its workers run there and may be signalled (not between a
        // grant change and the relaunch, not pinned), and whether they were.
        launch_ops* ops;
        unsigned int lo, hi;
        bool running, signalled;
        launch_rec() : epoch(0), ops(0), lo(0), hi(0), running(false), signalled(false) {}
    };

    client(int fd, int sms)
        : fd_(fd), closed_(false), lost_(false), counts_(false), quiet_(false), sms_(sms), client_id_(0), next_id_(0), grant_(0),
          launches_total_(0), dirty_(false), frames_(0), inflight_(0), grant_mono_ns_(0), grant_woke_ns_(0), ack_pending_(false), draining_(false), queued_(false), queue_gen_(0), moved_(0), moved_task_us_(0.0),
          native_us_(0), native_drain_(0), native_mark_(0), native_pending_fn_(0), native_pending_sent_(false), held_sent_(false)
    {
    }

    static std::atomic<bool>& child_flag()
    {
        static std::atomic<bool> f(false);
        return f;
    }
    static void forked() { child_flag().store(true); }
    static bool child() { return child_flag().load(std::memory_order_relaxed); }

    static bool valid(const launch_spec& s)
    {
        const size_t n = s.kernel ? std::strlen(s.kernel) : 0;
        const unsigned long long threads = (unsigned long long)s.block[0] * s.block[1] * s.block[2];
        return n >= 1 && n <= 1024 && s.grid[0] >= 1 && s.grid[0] <= 0x7fffffffu && s.grid[1] >= 1 && s.grid[1] <= 65535u &&
               s.grid[2] >= 1 && s.grid[2] <= 65535u && threads >= 1 && threads <= 1024 && s.shmem <= 0xffffffffull;
    }

    unsigned long long next_request_id()
    {
        std::lock_guard<std::mutex> l(mu_);
        return ++next_id_;
    }

    void unregister_locked(launch_rec* L)
    {
        for (size_t i = 0; i < launches_.size(); ++i)
            if (launches_[i] == L) {
                launches_.erase(launches_.begin() + (long)i);
                serving_.store(--inflight_, std::memory_order_relaxed);
                dirty_.store(true, std::memory_order_relaxed);
                return;
            }
    }

    // ack_locked returns the ack of the current grant when it is due (mu_
    // held): every served launch runs on its range, and the native launches
    // of an "alone" grant that ended have drained. Empty otherwise.
    std::string ack_locked()
    {
        if (!ack_pending_ || draining_ || lost_)
            return std::string();
        const grant g = current();
        for (size_t i = 0; i < launches_.size(); ++i)
            if (launches_[i]->epoch != g.epoch)
                return std::string();
        ack_pending_ = false;
        json_writer w;
        w.str("type", "ack");
        w.num("epoch", g_epoch_);
        w.range(g.lo, g.hi);
        w.num("drain_us",
              (unsigned long long)micros(clock_type::now() - grant_at_));
        if (native_us_)
            w.num("native_us", native_us_);
        w.num("moved", (unsigned long long)moved_);
        if (moved_task_us_ > 0.0)
            w.num("task_us", (unsigned long long)(moved_task_us_ + 0.5));
        if (grant_mono_ns_)
            w.num("recv_ns", grant_mono_ns_);
        if (grant_woke_ns_)
            w.num("woke_ns", grant_woke_ns_);
        moved_ = 0;
        moved_task_us_ = 0.0;
        native_us_ = 0;
        return w.done();
    }

    // send writes one frame; a failure (EPIPE, a 1 s stall) loses the daemon.
    bool send(const std::string& body)
    {
        if (body.size() > (size_t)kMaxFrame)
            return false;
        std::string f(4, '\0');
        const unsigned int n = (unsigned int)body.size();
        for (int i = 0; i < 4; ++i)
            f[i] = (char)((n >> (8 * i)) & 0xffu);
        f += body;
        bool ok = true;
        {
            std::lock_guard<std::mutex> w(wmu_);
            if (closed_)
                return false;
            size_t off = 0;
            while (off < f.size()) {
                const ssize_t k = ::send(fd_, f.data() + off, f.size() - off, MSG_NOSIGNAL);
                if (k < 0 && errno == EINTR)
                    continue;
                if (k <= 0) {
                    ok = false;
                    break;
                }
                off += (size_t)k;
            }
            if (ok)
                frames_.fetch_add(1);
        }
        if (!ok) {
            std::lock_guard<std::mutex> l(mu_);
            lose_locked("write failed");
        }
        return ok;
    }

    // read_full reads n bytes; with a deadline (the handshake) it polls.
    // The socket is read in chunks into rbuf_: a grant's header and body
    // come in one recv, not two (each a system call on the way of a move),
    // and frames read ahead wait there (buffered() says so to the poll).
    bool read_full(char* p, size_t n, const clock_type::time_point* deadline)
    {
        while (n > 0) {
            if (rpos_ < rlen_) {
                const size_t k = std::min(n, rlen_ - rpos_);
                std::memcpy(p, rbuf_ + rpos_, k);
                rpos_ += k;
                p += k;
                n -= k;
                continue;
            }
            if (deadline) {
                const long long ms =
                    std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - clock_type::now()).count();
                pollfd pf = {fd_, POLLIN, 0};
                const int r = poll(&pf, 1, ms > 0 ? (int)ms : 0);
                if (r < 0 && errno == EINTR)
                    continue;
                if (r <= 0)
                    return false;
            }
            const ssize_t k = ::recv(fd_, rbuf_, sizeof(rbuf_), 0);
            if (k < 0 && (errno == EINTR || (deadline && (errno == EAGAIN || errno == EWOULDBLOCK))))
                continue;
            if (k <= 0)
                return false;
            rpos_ = 0;
            rlen_ = (size_t)k;
        }
        return true;
    }

    // buffered says whether bytes read ahead wait in rbuf_ (listener only).
    bool buffered() const { return rpos_ < rlen_; }

    // read_msg reads and decodes one frame (1..65536 bytes).
    bool read_msg(std::string* buf, msg* m, const clock_type::time_point* deadline)
    {
        unsigned char h[4];
        if (!read_full((char*)h, 4, deadline))
            return false;
        const unsigned long n = (unsigned long)h[0] | (unsigned long)h[1] << 8 | (unsigned long)h[2] << 16 | (unsigned long)h[3] << 24;
        if (n == 0 || n > (unsigned long)kMaxFrame)
            return false;
        buf->resize(n);
        if (!read_full(&(*buf)[0], n, deadline))
            return false;
        return decode(buf->data(), n, m);
    }

    // take_grant checks a grant (welcome's or a push's) against this GPU.
    bool take_grant_locked(const msg& m)
    {
        if (m.id == 0 || !m.has_range || m.lo > m.hi || m.hi >= (unsigned long long)sms_)
            return false;
        grant g;
        g.lo = (unsigned int)m.lo;
        g.hi = (unsigned int)m.hi;
        g.alone = m.alone;
        g.epoch = m.id;
        if (g.alone && (g.lo != 0 || g.hi + 1 != (unsigned int)sms_))
            return false; // alone means the whole GPU
        grant_.store(g.pack(), std::memory_order_release);
        sharing_.store(m.clients > 1, std::memory_order_relaxed);
        clients_.store(m.clients, std::memory_order_relaxed);
        if (spin_setting() < 0 && !quiet_ && std::getenv("SLATE_LOG")) {
            const bool spin = spin_pays(m.clients, usable_cores());
            if (spin != spin_logged_) {
                std::fprintf(stderr, "slate: serve: spin-wait %s (auto: %d processes, %u cores)\n", spin ? "on" : "off", (int)m.clients, usable_cores());
                spin_logged_ = spin;
            }
        }
        g_epoch_ = m.id;
        grant_at_ = clock_type::now();
        // CLOCK_MONOTONIC, the daemon's clock for the push on this host: the
        // ack says when the grant arrived, and the daemon times its delivery.
        grant_mono_ns_ = mono_ns();
        grant_woke_ns_ = 0;
        return true;
    }

    // mono_ns is CLOCK_MONOTONIC in ns (0: unknown), the daemon's clock.
    static unsigned long long mono_ns()
    {
        struct timespec ts;
        return clock_gettime(CLOCK_MONOTONIC, &ts) == 0
                   ? (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec
                   : 0ull;
    }

    // hello sends the registration (without blocking: a hello that does
    // not fit the socket buffer at once is a failure) with the
    // kernel of the launch that registers (if known): the daemon plans the
    // join with it, not with an unknown kernel until the first load note.
    bool hello(int device, int sms, const char* kernel)
    {
        json_writer w;
        w.str("type", "hello");
        w.num("id", next_request_id());
        w.num("pid", (unsigned long long)getpid());
        w.str("name", name_.c_str());
        w.num("device", (unsigned long long)(device < 0 ? 0 : device));
        w.num("sms", (unsigned long long)sms);
        if (kernel && *kernel)
            w.str("kernel", kernel);
        const std::string& body = w.done();
        std::string f(4, '\0');
        for (int i = 0; i < 4; ++i)
            f[i] = (char)((body.size() >> (8 * i)) & 0xffu);
        f += body;
        std::lock_guard<std::mutex> wl(wmu_);
        hello_at_ = clock_type::now();
        if (closed_ || ::send(fd_, f.data(), f.size(), MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)f.size())
            return false;
        frames_.fetch_add(1);
        return true;
    }

    // welcome waits (on the listener thread) at most timeout_ms for the
    // reply to hello and takes its grant. The launches made natively until
    // then ran as an alone process's do; when the first grant is a range,
    // later launches run on it and those in flight end where they run (as
    // when an alone grant ends, the daemon is not held back by them: a
    // welcome has no ack).
    bool welcome(std::string* buf, int timeout_ms)
    {
        {
            // A dialed connection waits for join (the first launch) first.
            std::unique_lock<std::mutex> l(mu_);
            cv_.wait(l, [this] { return joined_ || lost_; });
            if (lost_)
                return false;
        }
        const clock_type::time_point deadline = hello_at_ + std::chrono::milliseconds(timeout_ms);
        for (;;) {
            msg m;
            if (!read_msg(buf, &m, &deadline))
                return false;
            if (m.re == 0 && m.type != "error")
                continue; // a push before welcome: not expected, harmless
            if (m.re != 1 || m.type != "welcome" || m.client == 0 || m.sms != (unsigned long long)sms_)
                return false;
            std::lock_guard<std::mutex> l(mu_);
            const int ranges = range_mode();
            counts_.store(ranges == kRangesCounts || (ranges == kRangesAuto && m.mps), std::memory_order_relaxed);
            if (lost_ || !take_grant_locked(m))
                return false; // a welcome must carry the first grant
            client_id_ = m.client;
            if (!quiet_ && std::getenv("SLATE_LOG"))
                std::fprintf(stderr, "slate: serve: grants are %s (welcome after %lld us)\n",
                             counts() ? "SM counts (MPS numbers each launch's SMs)" : "SM ranges",
                             micros(clock_type::now() - hello_at_));
            cv_.notify_all();
            return true;
        }
    }

    // drain_natives runs on its own thread when an "alone" grant ends, or
    // the grant changes after queued launches: the native launches issued
    // so far ran on the whole GPU, the queued ones on the old range, and
    // neither can move; the ack waits for their end (and says how long
    // that took).
    void drain_natives(void (*f)(), clock_type::time_point t0, unsigned long long gen)
    {
        {
            // A queued launch that took an older range is launched first
            // (not those begun since: a program launching back to back
            // must not hold the ack off).
            std::unique_lock<std::mutex> l(mu_);
            cv_.wait(l, [this, gen] { return queuing_.empty() || queuing_.begin()->first >= gen; });
        }
        if (f)
            f();
        std::string ack;
        {
            std::lock_guard<std::mutex> l(mu_);
            draining_ = false;
            native_us_ = (unsigned long long)micros(clock_type::now() - t0);
            if (native_us_ == 0)
                native_us_ = 1;
            ack = ack_locked();
        }
        if (!ack.empty())
            send(ack);
    }

    // load_note is the batched launch accounting (mu_ held).
    std::string load_note_locked()
    {
        json_writer w;
        w.str("type", "load");
        w.num("launches", launches_total_.load(std::memory_order_relaxed));
        w.num("inflight", (unsigned long long)inflight_);
        if (!kernel_.empty())
            w.str("kernel", kernel_.c_str());
        if (!cls_.empty())
            w.str("class", cls_.c_str());
        if (native_pending_sent_)
            w.boolean("native_pending", true);
        if (held_sent_)
            w.boolean("held", true);
        return w.done();
    }

    // listen reads frames until the connection ends: grants are taken (the
    // launching threads move their launches, the ack follows), replies
    // ignored (bye's ok), and anything else loses the daemon. Between
    // frames it sends a load note every few ms while launches happen.
    void listen(int welcome_ms)
    {
        std::string buf;
        const char* why = "connection closed";
        const bool welcomed = welcome(&buf, welcome_ms);
        if (!welcomed)
            why = "no welcome";
        // Notes every 2 ms while the process launches (or has just been
        // welcomed: its first launch is under way), every 20 ms once it has
        // been quiet for 100 ms: the daemon gives an idle process's share to
        // the others after a few missed notes (serve.Config.IdleAfter), so
        // a launching one must not go 20 ms without one.
        //
        // Spinning (client::spinning), while served launches run beside
        // another process it polls without sleeping: a grant is read within
        // a poll of its write, not after a wake-up (~25 us on the H100 host,
        // a virtual machine), and the notes keep their 2 ms pace. It goes
        // on for spin_linger after the last served launch it saw: a poll
        // begun between two launches slept through most of the next (a
        // 2 ms timeout), and most moves then found it asleep (12 of 19).
        const std::chrono::milliseconds spin_linger(5); // (a program's next launch follows within it)
        clock_type::time_point last_busy = clock_type::now();
        clock_type::time_point next_note = last_busy, last_serving;
        while (welcomed) {
            pollfd pf = {fd_, POLLIN, 0};
            const clock_type::time_point t = clock_type::now();
            const bool busy = dirty_.load(std::memory_order_relaxed) || t - last_busy < std::chrono::milliseconds(100);
            if (serving_.load(std::memory_order_relaxed) > 0)
                last_serving = t;
            int r;
            if (buffered()) {
                r = 1; // a frame read ahead
            } else if (t - last_serving < spin_linger && sharing_.load(std::memory_order_relaxed) && spinning()) {
                r = poll(&pf, 1, 0);
                if (r == 0 && clock_type::now() < next_note) {
                    std::this_thread::yield();
                    continue;
                }
            } else {
                r = poll(&pf, 1, busy ? 2 : 20);
            }
            if (r < 0 && errno != EINTR)
                break;
            if (r <= 0) {
                next_note = clock_type::now() + std::chrono::milliseconds(2);
                // Native launches followed while sharing: still running? (A
                // mark made after the exchange is seen next time.)
                bool pending = false;
                if (marked_.exchange(false, std::memory_order_acquire) && native_pending_fn_()) {
                    pending = true;
                    marked_.store(true, std::memory_order_relaxed);
                }
                const bool dirty = dirty_.exchange(false);
                const bool held = held_.exchange(false, std::memory_order_relaxed);
                if (dirty || pending) {
                    last_busy = clock_type::now();
                }
                std::string note;
                {
                    std::lock_guard<std::mutex> l(mu_);
                    if (dirty || held || pending != native_pending_sent_ || held != held_sent_) {
                        native_pending_sent_ = pending;
                        held_sent_ = held;
                        note = load_note_locked();
                    }
                }
                if (!note.empty())
                    send(note);
                std::lock_guard<std::mutex> l(mu_);
                if (lost_)
                    break;
                continue;
            }
            const unsigned long long woke = mono_ns(); // before the read and mu_
            msg m;
            if (!read_msg(&buf, &m, 0)) {
                why = "EOF or a bad frame";
                break;
            }
            if (m.type == "grant" && m.re == 0) {
                std::string ack;
                {
                    std::lock_guard<std::mutex> l(mu_);
                    const grant before = current();
                    if (m.id <= g_epoch_ || !take_grant_locked(m))
                        continue; // stale, or a range this GPU does not have
                    grant_woke_ns_ = woke;
                    ack_pending_ = true;
                    // The launching threads are woken first: their wake-up
                    // (tens of us) overlaps the signal's copy, and they take
                    // the lock once it is issued (not measured yet).
                    cv_.notify_all();
                    signal_moved_locked();
                    // Native launches of an alone grant, and queued launches,
                    // cannot move: the ack waits for their end.
                    if (((before.alone && !m.alone) || queued_) && !draining_) {
                        draining_ = true;
                        queued_ = false;
                        std::thread(&client::drain_natives, this, native_drain_, grant_at_, ++queue_gen_).detach();
                    }
                    ack = ack_locked(); // nothing running: at once
                }
                if (!ack.empty())
                    send(ack);
                continue;
            }
            if (m.type == "shutdown" || (m.type == "error" && m.re == 0)) {
                why = m.type == "shutdown" ? "daemon shut down" : "error from the daemon";
                break;
            }
            if (m.type == "error") {
                why = "error reply from the daemon";
                break;
            }
            // replies (bye's ok) and other types: ignored (later minor versions)
        }
        {
            std::lock_guard<std::mutex> l(mu_);
            lose_locked(why);
        }
        std::lock_guard<std::mutex> w(wmu_);
        closed_ = true;
        ::close(fd_);
    }

    // signal_moved_locked, with $SLATE_SERVE_SIGNAL=1, tells the workers of
    // each running launch that the new grant moves to retreat now (mu_
    // held), so that they drain while the launching thread wakes (20-90 us
    // on the H100 host, of a move's ~150). Off by default: measured on the
    // H100 (bench/RESULTS.md, twentieth session) the listener's copy
    // delayed the wake-up by about what it saved from the drain.
    void signal_moved_locked()
    {
        if (!listener_signals())
            return;
        const grant g = placed();
        for (size_t i = 0; i < launches_.size(); ++i) {
            launch_rec* L = launches_[i];
            if (L->running && !L->signalled && L->ops && (L->lo != g.lo || L->hi != g.hi)) {
                L->ops->signal();
                L->signalled = true;
            }
        }
    }

    // lose_locked marks the daemon gone (mu_ held): the grant becomes the
    // whole GPU, alone (later launches native), running launches grow.
    void lose_locked(const char* why)
    {
        if (lost_)
            return;
        grant g = current();
        g.lo = 0;
        g.hi = (unsigned int)sms_ - 1u;
        g.alone = true;
        grant_.store(g.pack(), std::memory_order_release);
        lost_.store(true, std::memory_order_release);
        if (!quiet_ && std::getenv("SLATE_LOG"))
            std::fprintf(stderr, "slate: serve: daemon lost (%s); running natively\n", why);
        ::shutdown(fd_, SHUT_RDWR);
        cv_.notify_all();
    }

    int fd_;
    char rbuf_[4096];              // read ahead from fd_ (the listener's, and the handshake's before it)
    size_t rpos_ = 0, rlen_ = 0;   // rbuf_[rpos_, rlen_) not yet taken
    std::mutex wmu_; // one frame at a time; guards closed_
    bool closed_;
    std::mutex mu_;
    std::condition_variable cv_;
    std::atomic<bool> lost_;
    std::atomic<bool> counts_; // grants are SM counts (range_mode), from the welcome
    bool quiet_;
    int sms_;
    unsigned long long client_id_, next_id_;
    std::atomic<unsigned long long> grant_;
    std::atomic<unsigned long long> launches_total_;
    std::atomic<bool> dirty_;
    std::atomic<unsigned long long> frames_;
    std::string name_ = "slate";      // the process's (/proc/self/comm), read at dial
    bool joined_ = false;             // hello sent (mu_)
    clock_type::time_point hello_at_; // when hello was sent (written before joined_)
    // guarded by mu_
    std::vector<launch_rec*> launches_;
    int inflight_;
    std::atomic<int> serving_{0}; // inflight_, read without mu_ (the listener's spin)
    std::string kernel_, cls_;
    std::atomic<const char*> native_kernel_{nullptr}; // the last native launch's name (take_native)
    struct timing {
        unsigned int sms; // the range's SMs
        double us;        // start to seen complete
        double blocks;    // the launch's logical blocks
        int queued;       // launches queued since (begin_queued)
        timing() : sms(0), us(0), blocks(0), queued(0) {}
    };
    std::map<const char*, timing> timings_; // each kernel's last served launch on one range
    unsigned long long g_epoch_; // the full epoch of the current grant
    clock_type::time_point grant_at_;
    unsigned long long grant_mono_ns_; // grant_at_ in CLOCK_MONOTONIC ns (0: unknown)
    unsigned long long grant_woke_ns_; // when the listener woke with that grant's frame (0: unknown)
    bool ack_pending_, draining_;
    // Queued launches (begin_queued): queued_ once one was made since the
    // last drain began; queuing_ counts, by the drain generation they began
    // in (queue_gen_, one more at each drain), those between their grant and
    // their launch call: a drain waits for those of earlier generations.
    bool queued_;
    std::map<unsigned long long, int> queuing_;
    unsigned long long queue_gen_;
    int moved_;
    double moved_task_us_; // the longest task of the launches a retreat moved since the last ack
    unsigned long long native_us_;
    void (*native_drain_)();
    // Native launches followed while sharing (native_launched): marked_ once
    // one was marked since the listener last found them all ended.
    // held_: a native launch waited for older ones (native_budget_us) since
    // the listener last looked.
    std::atomic<bool> sharing_{false}, marked_{false}, held_{false};
    std::atomic<int> clients_{0}; // the processes the last grant named
    bool spin_logged_ = false;    // the auto spin decision last logged (mu_)
    bool (*native_mark_)(void*, bool);
    bool (*native_pending_fn_)();
    bool native_pending_sent_, held_sent_; // what the last load note said (mu_)
};

inline client*& process_client_slot()
{
    static client* c = 0;
    return c;
}

inline void say_bye()
{
    if (client* c = process_client_slot())
        if (c->alive())
            c->bye();
}

// The registration of a process: process_dial may connect early (the
// program's first setup call), process_client registers at the first
// launch; one mutex orders them (they may run on different threads).
struct registration {
    std::mutex mu;
    client* dialed = 0; // connected by process_dial, not yet registered
    bool dial_tried = false, registered = false;
};

inline registration& process_registration()
{
    static registration r;
    return r;
}

// process_dial connects to the daemon ahead of the first launch (the
// prelude's preload, at the program's first setup call on a device of sms
// SMs), once per process and only before process_client has run: the
// connection and the listener thread are then ready, and the launch that
// registers sends hello alone. A process that never launches never
// registers (the daemon sees a connection open and close).
inline void process_dial(int sms)
{
    registration& r = process_registration();
    std::lock_guard<std::mutex> l(r.mu);
    if (r.dial_tried || r.registered)
        return;
    r.dial_tried = true;
    const clock_type::time_point t0 = clock_type::now();
    r.dialed = client::dial(socket_path(), sms, 500);
    if (std::getenv("SLATE_LOG"))
        std::fprintf(stderr, "slate: serve: %s %s at first use (%lld us)\n", r.dialed ? "connected to" : "no daemon at",
                     socket_path().c_str(), micros(clock_type::now() - t0));
}

// process_client registers once per process (the first call decides; later
// calls return its answer; kernel: the first launch's), over the
// connection process_dial made if it can (the same SM count, not a child
// after fork()), else connecting now, and says bye at exit.
inline client* process_client(int device, int sms, const char* kernel = 0)
{
    static client* const c = [device, sms, kernel]() -> client* {
        registration& reg = process_registration();
        std::lock_guard<std::mutex> l(reg.mu);
        reg.registered = true;
        const clock_type::time_point t0 = clock_type::now();
        client* r = reg.dialed;
        reg.dialed = 0;
        const char* how = "";
        if (r) {
            how = ", connected at first use";
            if (!r->join(device, sms, kernel)) {
                r->abandon();
                r = 0;
                how = ", the first use's connection unusable";
            }
        }
        // The welcome may take 500 ms (launches run natively until it comes).
        if (!r)
            r = client::connect(socket_path(), device, sms, 500, kernel);
        if (r) {
            process_client_slot() = r;
            std::atexit(say_bye);
        }
        if (std::getenv("SLATE_LOG"))
            std::fprintf(stderr, "slate: serve: %s %s (%lld us%s)\n", r ? "registering with" : "no daemon at", socket_path().c_str(),
                         micros(clock_type::now() - t0), how);
        return r;
    }();
    return c;
}
#else
inline bool socket_present(const std::string&) { return false; }
class client {
public:
    bool alive() const { return false; }
    int sms() const { return 0; }
    bool take_native(const char* = 0) { return true; }
    bool take_small(unsigned long long, const char* = 0) { return true; }
    void set_native_drain(void (*)()) {}
    void set_native_marks(bool (*)(void*, bool), bool (*)()) {}
    void native_launched(void*, bool = true) {}
    bool run(const launch_spec&, launch_ops&) { return false; }
    bool begin_queued(const launch_spec&, unsigned int*, unsigned int*, double*, unsigned long long*) { return false; }
    void end_queued(unsigned long long) {}
};
inline void process_dial(int) {}
inline client* process_client(int, int, const char* = 0) { return 0; }
#endif

} // namespace slate_serve
#endif // SLATE_SERVE_CLIENT_H
