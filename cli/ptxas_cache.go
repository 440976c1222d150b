package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/slatec/slatec/internal/cachekey"
)

// The ptxas cache keeps what `nvcc -Xptxas -v` printed for a compile, so
// that --match-regs and --report do not compile an unchanged input again
// (one compile of a transformed file takes seconds; --match-regs makes up to
// three a file and architecture). As ccache's direct mode does, an entry is
// found by a key over the nvcc binary (path, size, modification time), the
// architecture, the arguments, the source's path and bytes, and holds every
// file the compile read (nvcc -MD) with the sha256 of its bytes: it is used
// only while all of them are unchanged. Entries are written to a temporary
// file and renamed into place. $SLATEC_PTXAS_CACHE=0 turns it off; the
// directory is $SLATEC_CACHE_DIR/ptxas, else os.UserCacheDir()/slatec/ptxas.

// envPtxasCache turns the ptxas cache off when "0".
const envPtxasCache = "SLATEC_PTXAS_CACHE"

// ptxasEntry is one cached compile.
type ptxasEntry struct {
	Deps   []ptxasDep `json:"deps"`
	Output string     `json:"output"`
}

type ptxasDep struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// ptxasCacheDir is the cache's directory, "" when it is off or there is none.
func ptxasCacheDir() string {
	if os.Getenv(envPtxasCache) == "0" {
		return ""
	}
	if d := os.Getenv("SLATEC_CACHE_DIR"); d != "" {
		return filepath.Join(d, "ptxas")
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "slatec", "ptxas")
}

// ptxasKey hashes what selects an entry: the nvcc binary, the arguments (the
// object's temporary path left out), the path standing for the source
// (keyPath) and the source's bytes. Each field is length-prefixed, so that
// no two different inputs hash the same bytes. "" when nvcc or the source
// cannot be read.
func ptxasKey(nvcc string, args []string, src, keyPath string) string {
	st, err := os.Stat(nvcc)
	if err != nil {
		return ""
	}
	abs, err := filepath.Abs(keyPath)
	if err != nil {
		return ""
	}
	sum, err := fileSHA256(src)
	if err != nil {
		return ""
	}
	k := cachekey.New("slatec-ptxas-v1")
	k.Put(nvcc)
	k.Put(fmt.Sprint(st.Size(), st.ModTime().UnixNano()))
	k.Put(fmt.Sprint(len(args)))
	for _, a := range args {
		k.Put(a)
	}
	k.Put(abs)
	k.Put(sum)
	return k.Hex()
}

// ptxasLookup returns the cached output for key while every file its compile
// read is unchanged.
func ptxasLookup(dir, key string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(dir, key+".json"))
	if err != nil {
		return "", false
	}
	var e ptxasEntry
	if json.Unmarshal(b, &e) != nil {
		return "", false
	}
	for _, d := range e.Deps {
		if sum, err := fileSHA256(d.Path); err != nil || sum != d.SHA256 {
			return "", false
		}
	}
	return e.Output, true
}

// ptxasStore records a compile's output under key, with the files listed in
// its nvcc -MD dependency file but src (whose bytes the key holds; it may
// be a temporary file), read as they are now, after the compile: a file
// changed meanwhile only makes the entry miss later. Failures leave the
// cache as it was.
func ptxasStore(dir, key, src, depFile, output string) {
	b, err := os.ReadFile(depFile)
	if err != nil {
		return
	}
	self, err := filepath.Abs(src)
	if err != nil {
		return
	}
	e := ptxasEntry{Output: output}
	for _, p := range parseDepFile(string(b)) {
		if p == filepath.Clean(self) {
			continue
		}
		sum, err := fileSHA256(p)
		if err != nil {
			return
		}
		e.Deps = append(e.Deps, ptxasDep{Path: p, SHA256: sum})
	}
	data, err := json.Marshal(e)
	if err != nil || os.MkdirAll(dir, 0o755) != nil {
		return
	}
	tmp, err := os.CreateTemp(dir, key+".*.tmp")
	if err != nil {
		return
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), filepath.Join(dir, key+".json")) != nil {
		os.Remove(tmp.Name())
	}
}

// parseDepFile returns the prerequisites of a Makefile rule as nvcc -MD
// writes it ("out.o : a.cu \<newline> b.h ..."; a space in a path is
// written "\ "), made absolute.
func parseDepFile(s string) []string {
	s = strings.ReplaceAll(s, "\\\r\n", " ")
	s = strings.ReplaceAll(s, "\\\n", " ")
	i := strings.Index(s, ": ")
	if i < 0 {
		return nil
	}
	s = s[i+2:]
	var out []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			p := cur.String()
			if abs, err := filepath.Abs(p); err == nil {
				p = filepath.Clean(abs)
			}
			out = append(out, p)
			cur.Reset()
		}
	}
	for j := 0; j < len(s); j++ {
		switch c := s[j]; {
		case c == '\\' && j+1 < len(s) && s[j+1] == ' ':
			cur.WriteByte(' ')
			j++
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			flush()
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	return out
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
