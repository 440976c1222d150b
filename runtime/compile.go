package runtime

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/slatec/slatec/internal/cachekey"
)

// EnvCacheDir overrides the CUBIN cache directory.
const EnvCacheDir = "SLATEC_CACHE_DIR"

// CompileRequest is one CUDA translation unit to compile to CUBIN.
type CompileRequest struct {
	// Name is the file name NVRTC shows in diagnostics (e.g. "saxpy.cu").
	Name   string
	Source string
	// Arch is a real architecture such as "sm_90". Use DeviceInfo.Arch for
	// the device at hand; naming it explicitly compiles with no GPU.
	Arch string
	// Options are extra NVRTC options (e.g. "-DTILE=32", "-lineinfo").
	Options []string
	// NameExpressions are the kernels to find by their source names, e.g.
	// "saxpy__slate" or "scale__slate<float>"; NVRTC instantiates templates
	// named here and reports each one's mangled symbol (Compiled.Lowered).
	NameExpressions []string
}

// Compiled is a compiled module image. Results for one key share CUBIN and
// Lowered between callers: treat them as read-only.
type Compiled struct {
	Arch    string
	CUBIN   []byte
	Lowered map[string]string // name expression -> symbol in CUBIN
	Log     string            // NVRTC's warnings, if any
	Key     string            // cache key (hex sha256)
	// CacheHit is true when the CUBIN came from the disk cache.
	CacheHit bool
	// CacheErr is a failure to store the result in the cache. The result is
	// still good; the next compile will just miss again.
	CacheErr error
}

// Compiler compiles CUDA source with NVRTC, caching CUBINs on disk. A zero
// Compiler is ready to use; it is safe for concurrent use, and concurrent
// processes may share one cache directory (entries are written to a temporary
// file and renamed into place, so readers never see a partial entry).
type Compiler struct {
	// CacheDir holds cached CUBINs. Empty means $SLATEC_CACHE_DIR, else
	// os.UserCacheDir()/slatec/cubin.
	CacheDir string
	// NoCache disables reading and writing the cache.
	NoCache bool
	// IncludeDirs are passed to NVRTC as --include-path; nil means
	// DefaultIncludeDirs().
	IncludeDirs []string
	// Std is the C++ dialect; empty means c++17.
	Std string

	mu       sync.Mutex
	inflight map[string]*compileCall
}

type compileCall struct {
	done chan struct{}
	res  *Compiled
	err  error
}

// DefaultCacheDir returns the directory used when Compiler.CacheDir is empty.
func DefaultCacheDir() (string, error) {
	if d := os.Getenv(EnvCacheDir); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("runtime: no cache directory (set %s): %w", EnvCacheDir, err)
	}
	return filepath.Join(d, "slatec", "cubin"), nil
}

// options returns the full NVRTC option list for a request.
func (c *Compiler) options(req *CompileRequest) []string {
	std := c.Std
	if std == "" {
		std = "c++17"
	}
	opts := []string{"--gpu-architecture=" + req.Arch, "--std=" + std}
	inc := c.IncludeDirs
	if inc == nil {
		inc = DefaultIncludeDirs()
	}
	for _, d := range inc {
		opts = append(opts, "--include-path="+d)
	}
	return append(opts, req.Options...)
}

// cacheKey hashes everything that determines the CUBIN. Each field is
// length-prefixed so that no two different inputs hash the same bytes.
func cacheKey(nvrtcMajor, nvrtcMinor int, arch string, opts, exprs []string, src string) string {
	k := cachekey.New("slatec-cubin-v1")
	k.Put(fmt.Sprintf("nvrtc %d.%d", nvrtcMajor, nvrtcMinor))
	k.Put(arch)
	k.Put(fmt.Sprint(len(opts)))
	for _, o := range opts {
		k.Put(o)
	}
	k.Put(fmt.Sprint(len(exprs)))
	for _, e := range exprs {
		k.Put(e)
	}
	k.Put(src)
	return k.Hex()
}

// Compile returns the CUBIN for req, from the cache when possible.
func (c *Compiler) Compile(req CompileRequest) (*Compiled, error) {
	if req.Name == "" {
		req.Name = "kernel.cu"
	}
	if req.Arch == "" {
		return nil, errors.New("runtime: CompileRequest.Arch is empty (use Device.Info().Arch() or e.g. \"sm_90\")")
	}
	if err := checkArch(req.Arch); err != nil {
		return nil, err
	}
	ma, mi, err := NVRTCVersion()
	if err != nil {
		return nil, err
	}
	opts := c.options(&req)
	key := cacheKey(ma, mi, req.Arch, opts, req.NameExpressions, req.Source)

	// One compile per key at a time in this process; others wait for it.
	c.mu.Lock()
	if call, ok := c.inflight[key]; ok {
		c.mu.Unlock()
		<-call.done
		if call.err != nil {
			return nil, call.err
		}
		r := *call.res
		return &r, nil
	}
	call := &compileCall{done: make(chan struct{})}
	if c.inflight == nil {
		c.inflight = make(map[string]*compileCall)
	}
	c.inflight[key] = call
	c.mu.Unlock()

	call.res, call.err = c.compileKey(&req, opts, key, fmt.Sprintf("%d.%d", ma, mi))
	c.mu.Lock()
	delete(c.inflight, key)
	c.mu.Unlock()
	close(call.done)
	if call.err != nil {
		return nil, call.err
	}
	r := *call.res
	return &r, nil
}

func (c *Compiler) compileKey(req *CompileRequest, opts []string, key, nvrtcVer string) (*Compiled, error) {
	var path string
	if !c.NoCache {
		dir := c.CacheDir
		if dir == "" {
			d, err := DefaultCacheDir()
			if err != nil {
				return nil, err
			}
			dir = d
		}
		path = filepath.Join(dir, key[:2], key+".cubin")
		if res, ok := readCacheEntry(path); ok && res.Arch == req.Arch {
			res.Key, res.CacheHit = key, true
			return res, nil
		}
	}
	cubin, lowered, log, err := nvrtcCompile(req.Name, req.Source, req.Arch, opts, req.NameExpressions)
	if err != nil {
		return nil, err
	}
	res := &Compiled{Arch: req.Arch, CUBIN: cubin, Lowered: lowered, Log: log, Key: key}
	if path != "" {
		res.CacheErr = writeCacheEntry(path, res, nvrtcVer)
	}
	return res, nil
}

// Cache entry format: cacheMagic, a JSON header line, then the CUBIN bytes.
// The header carries the CUBIN's sha256 so that a damaged entry reads as a
// miss (and is rewritten) instead of reaching the driver.
const cacheMagic = "SLATEC-CUBIN-1\n"

type cacheHeader struct {
	Arch    string            `json:"arch"`
	NVRTC   string            `json:"nvrtc"`
	Lowered map[string]string `json:"lowered"`
	Log     string            `json:"log,omitempty"`
	Size    int               `json:"size"`
	SHA256  string            `json:"sha256"`
}

func readCacheEntry(path string) (*Compiled, bool) {
	b, err := os.ReadFile(path)
	if err != nil || !bytes.HasPrefix(b, []byte(cacheMagic)) {
		return nil, false
	}
	b = b[len(cacheMagic):]
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 {
		return nil, false
	}
	var h cacheHeader
	if json.Unmarshal(b[:nl], &h) != nil {
		return nil, false
	}
	cubin := b[nl+1:]
	sum := sha256.Sum256(cubin)
	if len(cubin) != h.Size || hex.EncodeToString(sum[:]) != h.SHA256 {
		return nil, false
	}
	if h.Lowered == nil {
		h.Lowered = map[string]string{}
	}
	return &Compiled{Arch: h.Arch, CUBIN: cubin, Lowered: h.Lowered, Log: h.Log}, true
}

func writeCacheEntry(path string, r *Compiled, nvrtcVer string) error {
	sum := sha256.Sum256(r.CUBIN)
	hdr, err := json.Marshal(cacheHeader{Arch: r.Arch, NVRTC: nvrtcVer, Lowered: r.Lowered, Log: r.Log,
		Size: len(r.CUBIN), SHA256: hex.EncodeToString(sum[:])})
	if err != nil {
		return fmt.Errorf("runtime: encoding cache entry: %w", err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("runtime: cache: %w", err)
	}
	f, err := os.CreateTemp(dir, ".tmp-*.cubin")
	if err != nil {
		return fmt.Errorf("runtime: cache: %w", err)
	}
	tmp := f.Name()
	var buf bytes.Buffer
	buf.WriteString(cacheMagic)
	buf.Write(hdr)
	buf.WriteByte('\n')
	buf.Write(r.CUBIN)
	_, werr := f.Write(buf.Bytes())
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp, 0o644)
	}
	if werr == nil {
		// rename is atomic within a directory: readers see the old entry,
		// no entry, or this whole one. Two writers of one key write the
		// same bytes, so whichever rename lands last is equally good.
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		if rerr := os.Remove(tmp); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			return fmt.Errorf("runtime: cache: %w (and removing %s: %v)", werr, tmp, rerr)
		}
		return fmt.Errorf("runtime: cache: %w", werr)
	}
	return nil
}
