// ---- slatec serve client (host C++, docs/SERVE.md) --------------------------
// The drop-in launcher's side of the `slatec serve` protocol, version 1: find
// the daemon once per process, register, announce each served launch, run it
// on the SM range the daemon gives, retreat and relaunch when told to resize,
// and report completion. It touches no CUDA API: everything a launch does on
// the device goes through launch_ops (the seam), which the prelude implements
// with the CUDA runtime and templates/serve_client_test.go with a fake device.
//
// Design (docs/SERVE.md, "The C++ client"): a served launch is synchronous.
// The launching host thread sends `launch`, waits for `accepted` and `start`,
// launches the queue worker on the range, and then stays in the launcher until
// the launch has completed, handling resize commands itself (the listener
// thread only decodes frames and wakes it). Because the launcher returns only
// after the work is done, a relaunch after a retreat can go on the program's
// own stream: nothing the program enqueues after the launch can be in that
// stream before it. The cost is host/device overlap for served launches.
//
// Failure: no daemon, a refused or slow handshake (100 ms), a frame that does
// not decode, EOF, `shutdown` or an unsolicited `error` all mean "lost": later
// launches run natively, running ones are grown to all SMs, waiting ones run
// on all SMs. Every wait has a bound (100 ms for welcome, 1 s for accepted
// and for a frame to be taken) or ends with the connection, except the wait
// for `start`, which lasts as long as the daemon keeps the launch queued
// (like a queued kernel). A child process after fork() runs natively (the
// connection is its parent's).
#ifndef SLATE_SERVE_CLIENT_H
#define SLATE_SERVE_CLIENT_H

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#if defined(__unix__) || defined(__APPLE__)
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>
#define SLATE_SERVE_POSIX 1
#endif

namespace slate_serve {

enum { kMaxFrame = 65536, kProtocol = 1, kMaxDepth = 64 };

// ---- the seam: what a served launch does on the device ----------------------
struct launch_ops {
    // start launches the worker on SMs [lo, hi] with the launch's control
    // block, keeping the progress (no self-reset): the first launch and every
    // relaunch after a retreat.
    virtual void start(unsigned int lo, unsigned int hi) = 0;
    // query reports, without blocking, whether the last start has completed
    // (also: it failed; a device error counts as completed).
    virtual bool query() = 0;
    // retreat sets the retreat word, waits until the workers have drained,
    // clears it, and reports whether every logical block has been handed out
    // (then nothing is left to relaunch: the launch is complete).
    virtual bool retreat() = 0;
    // finish runs after completion: resets the control block for reuse.
    virtual void finish() = 0;
    // detach leaves a launch that has not completed to finish on its own:
    // the control block's reset follows it in stream order, and nothing will
    // move it again (a kernel may wait for the host to act after its
    // launch; a served launch that waited for it would never return).
    virtual void detach() = 0;
    virtual ~launch_ops() {}
};

// launch_spec is what `launch` announces.
struct launch_spec {
    const char* kernel;
    unsigned int grid[3], block[3];
    unsigned long long shmem;
    const char* cls; // a Slate class or null
};

// ---- JSON: a writer for the requests, a strict reader for replies/pushes ----
class json_writer {
public:
    json_writer() : s_("{\"v\":1"), n_(1) {}
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
    void dim3(const char* k, const unsigned int v[3])
    {
        key(k);
        s_ += "[" + std::to_string(v[0]) + "," + std::to_string(v[1]) + "," + std::to_string(v[2]) + "]";
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
    unsigned long long v, re, id, launch, client, cmd, sms;
    bool has_v, has_range, finished;
    unsigned long long lo, hi;
    std::string type, code;
    msg() : v(0), re(0), id(0), launch(0), client(0), cmd(0), sms(0), has_v(false), has_range(false), finished(false), lo(0), hi(0) {}
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
        } else if (k == "launch") {
            u = &m->launch;
        } else if (k == "client") {
            u = &m->client;
        } else if (k == "cmd") {
            u = &m->cmd;
        } else if (k == "sms") {
            u = &m->sms;
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
        if (k == "finished") {
            if (lit("true"))
                m->finished = true;
            else if (lit("false"))
                m->finished = false;
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

// decode checks a daemon frame: one object, v 1, a type.
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

// client is the process's one connection to the daemon.
class client {
public:
    // connect dials the daemon and registers (hello, at most timeout_ms for
    // welcome). Null: no daemon, a refusal or a slow one; run natively.
    static client* connect(const std::string& path, int device, int sms, int timeout_ms)
    {
        if (path.empty() || path.size() >= sizeof(((sockaddr_un*)0)->sun_path) || sms <= 0)
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
        if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0 || ::connect(fd, (sockaddr*)&a, sizeof(a)) != 0) {
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
        if (!c->handshake(device, sms, timeout_ms) || fcntl(fd, F_SETFL, fl) != 0) {
            ::close(fd);
            delete c;
            return 0;
        }
        timeval tv = {1, 0}; // a daemon that takes no frame for 1 s is lost
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
        std::thread(&client::listen, c).detach();
        return c;
    }

    bool alive()
    {
        if (getpid() != pid_)
            return false; // a child after fork(): the connection is the parent's
        std::lock_guard<std::mutex> l(mu_);
        return !lost_;
    }
    int sms() const { return sms_; }
    unsigned long long id() const { return client_id_; }

    // run makes one served launch and returns when it has completed. False:
    // nothing was started (the daemon is gone, refused the launch or never
    // started it); the caller runs the launch itself.
    bool run(const launch_spec& s, launch_ops& ops)
    {
        if (!valid(s) || getpid() != pid_)
            return false;
        launch_rec L;
        unsigned long long rid;
        {
            std::lock_guard<std::mutex> l(mu_);
            if (lost_)
                return false;
            L.id = ++next_launch_;
            rid = ++next_id_;
            launches_[L.id] = &L;
            pending_[rid] = &L.rep;
        }
        json_writer w;
        w.str("type", "launch");
        w.num("id", rid);
        w.num("launch", L.id);
        w.str("kernel", s.kernel);
        w.dim3("grid", s.grid);
        w.dim3("block", s.block);
        if (s.shmem)
            w.num("shmem", s.shmem);
        if (s.cls && *s.cls)
            w.str("class", s.cls);
        w.num("blocks", (unsigned long long)s.grid[0] * s.grid[1] * s.grid[2]);
        const bool sent = send(w.done());
        std::unique_lock<std::mutex> l(mu_);
        // `accepted` comes at once from a live daemon; one that does not
        // answer within a second is treated as gone.
        const clock_type::time_point deadline = clock_type::now() + std::chrono::seconds(1);
        while (sent && !lost_ && !L.rep.got)
            if (cv_.wait_until(l, deadline) == std::cv_status::timeout && !L.rep.got) {
                lose_locked("no reply to launch within 1 s");
                break;
            }
        pending_.erase(rid);
        if (!L.rep.got || L.rep.m.type != "accepted") {
            // error (duplicate_launch, too_many: non-fatal for the daemon; the
            // launch just runs natively), or lost
            launches_.erase(L.id);
            return false;
        }
        while (!lost_ && !L.started)
            cv_.wait(l); // a queued launch waits like a queued kernel
        if (!L.started) {
            launches_.erase(L.id);
            return false;
        }
        unsigned int lo = L.lo, hi = L.hi;
        l.unlock();
        bool full = lo == 0 && hi + 1 >= (unsigned int)sms_;
        ops.start(lo, hi);
        long quantum_us = 5;
        const clock_type::time_point began = clock_type::now();
        bool detached = false;
        for (;;) {
            l.lock();
            if (L.resize && !lost_) {
                L.resize = false;
                const unsigned long long cmd = L.cmd;
                const unsigned int rlo = L.rlo, rhi = L.rhi;
                l.unlock();
                json_writer a;
                a.str("type", "resized");
                a.num("id", next_request_id());
                a.num("launch", L.id);
                a.num("cmd", cmd);
                if (rlo == lo && rhi == hi && !ops.query()) {
                    a.range(lo, hi); // already there: nothing to move
                    send(a.done());
                    continue;
                }
                if (ops.retreat()) {
                    a.boolean("finished", true);
                    send(a.done());
                    break;
                }
                lo = rlo;
                hi = rhi;
                full = lo == 0 && hi + 1 >= (unsigned int)sms_;
                ops.start(lo, hi);
                a.range(lo, hi);
                send(a.done());
                quantum_us = 5;
                continue;
            }
            if (lost_ && !full) {
                // The daemon is gone: take the whole GPU, acknowledging nothing.
                l.unlock();
                full = true;
                if (ops.retreat())
                    break;
                lo = 0;
                hi = (unsigned int)sms_ - 1u;
                ops.start(lo, hi);
                continue;
            }
            l.unlock();
            if (ops.query())
                break;
            if (detach_after_ms() > 0 && clock_type::now() - began > std::chrono::milliseconds(detach_after_ms())) {
                // A served launch returns when its kernel is done, and a kernel
                // that waits for the host to act after its launch never is:
                // past the limit it runs on by itself, no longer resized.
                if (std::getenv("SLATE_LOG"))
                    std::fprintf(stderr, "slate: serve: %s still running after %ld ms: detached (no more resizes)\n", s.kernel,
                                 detach_after_ms());
                ops.detach();
                detached = true;
                break;
            }
            l.lock();
            if (!(L.resize && !lost_) && !(lost_ && !full))
                cv_.wait_for(l, std::chrono::microseconds(quantum_us));
            l.unlock();
            if (quantum_us < 200)
                quantum_us *= 2;
        }
        if (!detached)
            ops.finish();
        {
            std::lock_guard<std::mutex> g(mu_);
            launches_.erase(L.id);
        }
        json_writer d;
        d.str("type", "done");
        d.num("id", next_request_id());
        d.num("launch", L.id);
        send(d.done());
        return true;
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

private:
    struct reply {
        bool got;
        msg m;
        reply() : got(false) {}
    };
    struct launch_rec {
        unsigned long long id;
        reply rep;
        bool started, resize;
        unsigned int lo, hi, rlo, rhi;
        unsigned long long cmd;
        launch_rec() : id(0), started(false), resize(false), lo(0), hi(0), rlo(0), rhi(0), cmd(0) {}
    };

    client(int fd, int sms) : fd_(fd), closed_(false), lost_(false), quiet_(false), pid_(getpid()), sms_(sms), client_id_(0), next_id_(0), next_launch_(0) {}

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
        }
        if (!ok) {
            std::lock_guard<std::mutex> l(mu_);
            lose_locked("write failed");
        }
        return ok;
    }

    // read_full reads n bytes; with a deadline (the handshake) it polls.
    bool read_full(char* p, size_t n, const clock_type::time_point* deadline)
    {
        while (n > 0) {
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
            const ssize_t k = ::recv(fd_, p, n, 0);
            if (k < 0 && (errno == EINTR || (deadline && (errno == EAGAIN || errno == EWOULDBLOCK))))
                continue;
            if (k <= 0)
                return false;
            p += k;
            n -= (size_t)k;
        }
        return true;
    }

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

    bool handshake(int device, int sms, int timeout_ms)
    {
        char name[64] = "slate";
        if (FILE* f = std::fopen("/proc/self/comm", "r")) {
            if (std::fgets(name, sizeof(name), f))
                name[std::strcspn(name, "\n")] = 0;
            std::fclose(f);
        }
        json_writer w;
        w.str("type", "hello");
        w.num("id", ++next_id_);
        w.num("pid", (unsigned long long)getpid());
        w.str("name", name);
        w.num("device", (unsigned long long)(device < 0 ? 0 : device));
        w.num("sms", (unsigned long long)sms);
        const std::string& body = w.done();
        std::string f(4, '\0');
        for (int i = 0; i < 4; ++i)
            f[i] = (char)((body.size() >> (8 * i)) & 0xffu);
        f += body;
        // The socket is still non-blocking: a hello that does not fit the
        // socket buffer at once is a failure.
        if (::send(fd_, f.data(), f.size(), MSG_NOSIGNAL) != (ssize_t)f.size())
            return false;
        const clock_type::time_point deadline = clock_type::now() + std::chrono::milliseconds(timeout_ms);
        std::string buf;
        for (;;) {
            msg m;
            if (!read_msg(&buf, &m, &deadline))
                return false;
            if (m.re == 0 && m.type != "error")
                continue; // a push before welcome: not expected, harmless
            if (m.re != 1 || m.type != "welcome" || m.client == 0 || m.sms != (unsigned long long)sms)
                return false;
            client_id_ = m.client;
            return true;
        }
    }

    // listen reads frames until the connection ends, routes replies by
    // `re` and pushes by launch, and loses the daemon on anything else.
    void listen()
    {
        std::string buf;
        const char* why = "connection closed";
        for (;;) {
            msg m;
            if (!read_msg(&buf, &m, 0)) {
                why = "EOF or a bad frame";
                break;
            }
            std::lock_guard<std::mutex> l(mu_);
            if (m.re != 0) {
                std::map<unsigned long long, reply*>::iterator it = pending_.find(m.re);
                if (it != pending_.end()) {
                    it->second->m = m;
                    it->second->got = true;
                    cv_.notify_all();
                }
                continue;
            }
            if (m.type == "start" || m.type == "resize") {
                std::map<unsigned long long, launch_rec*>::iterator it = launches_.find(m.launch);
                if (it == launches_.end() || !m.has_range || m.lo > m.hi || m.hi >= (unsigned long long)sms_)
                    continue; // a launch that ended meanwhile, or a range this GPU does not have
                launch_rec* r = it->second;
                if (m.type == "start") {
                    if (!r->started) {
                        r->started = true;
                        r->lo = (unsigned int)m.lo;
                        r->hi = (unsigned int)m.hi;
                    }
                } else if (r->started) { // only the last resize counts
                    r->resize = true;
                    r->cmd = m.id;
                    r->rlo = (unsigned int)m.lo;
                    r->rhi = (unsigned int)m.hi;
                }
                cv_.notify_all();
                continue;
            }
            if (m.type == "shutdown" || m.type == "error") {
                why = m.type == "shutdown" ? "daemon shut down" : "error from the daemon";
                break;
            }
            // other types without `re`: ignored (later minor versions)
        }
        {
            std::lock_guard<std::mutex> l(mu_);
            lose_locked(why);
        }
        std::lock_guard<std::mutex> w(wmu_);
        closed_ = true;
        ::close(fd_);
    }

    // lose_locked marks the daemon gone (mu_ held): waiting launches wake,
    // and the listener's read ends.
    void lose_locked(const char* why)
    {
        if (lost_)
            return;
        lost_ = true;
        if (!quiet_ && std::getenv("SLATE_LOG"))
            std::fprintf(stderr, "slate: serve: daemon lost (%s); running natively\n", why);
        ::shutdown(fd_, SHUT_RDWR);
        cv_.notify_all();
    }

    int fd_;
    std::mutex wmu_; // one frame at a time; guards closed_
    bool closed_;
    std::mutex mu_;
    std::condition_variable cv_;
    bool lost_, quiet_;
    pid_t pid_;
    int sms_;
    unsigned long long client_id_, next_id_, next_launch_;
    std::map<unsigned long long, reply*> pending_;
    std::map<unsigned long long, launch_rec*> launches_;
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

// process_client connects once per process (the first call decides; later
// calls return its answer) and says bye at exit.
inline client* process_client(int device, int sms)
{
    static client* const c = [device, sms]() -> client* {
        client* r = client::connect(socket_path(), device, sms, 100);
        if (r) {
            process_client_slot() = r;
            std::atexit(say_bye);
        }
        if (std::getenv("SLATE_LOG"))
            std::fprintf(stderr, "slate: serve: %s %s\n", r ? "registered with" : "no daemon at", socket_path().c_str());
        return r;
    }();
    return c;
}
#else
inline bool socket_present(const std::string&) { return false; }
class client {
public:
    bool alive() { return false; }
    int sms() const { return 0; }
    bool run(const launch_spec&, launch_ops&) { return false; }
};
inline client* process_client(int, int) { return 0; }
#endif

} // namespace slate_serve
#endif // SLATE_SERVE_CLIENT_H
