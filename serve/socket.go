package serve

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// DefaultSocket is the daemon's socket path: $SLATEC_SOCKET, else
// $XDG_RUNTIME_DIR/slatec/serve.sock, else /tmp/slatec-$UID/serve.sock.
func DefaultSocket() string {
	if s := os.Getenv("SLATEC_SOCKET"); s != "" {
		return s
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "slatec", "serve.sock")
	}
	return filepath.Join("/tmp", "slatec-"+strconv.Itoa(os.Getuid()), "serve.sock")
}

// ErrDaemonRunning is returned by Listen when another daemon answers on
// the socket.
var ErrDaemonRunning = errors.New("serve: another daemon answers on the socket")

// Listen creates the socket's directory (0700; an existing one must be
// ours and is tightened to 0700), refuses when another daemon answers on
// path, removes a stale socket file (one nobody listens on), and listens
// with mode 0600.
func Listen(path string) (*net.UnixListener, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("serve: socket directory: %w", err)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("serve: socket directory: %w", err)
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Getuid() {
		return nil, fmt.Errorf("serve: socket directory %s belongs to uid %d, not to this user", dir, sys.Uid)
	}
	if st.Mode().Perm()&0o077 != 0 && dir != "/tmp" && dir != os.TempDir() {
		if err := os.Chmod(dir, 0o700); err != nil {
			return nil, fmt.Errorf("serve: socket directory: %w", err)
		}
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("serve: %s exists and is not a socket; not removing it", path)
		}
		c, err := net.DialTimeout("unix", path, 100*time.Millisecond)
		if err == nil {
			c.Close()
			return nil, fmt.Errorf("%w: %s", ErrDaemonRunning, path)
		}
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return nil, fmt.Errorf("serve: removing stale socket: %w", err)
		}
	}
	old := syscall.Umask(0o177)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	syscall.Umask(old)
	if err != nil {
		return nil, fmt.Errorf("serve: listen: %w", err)
	}
	ln.SetUnlinkOnClose(true)
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("serve: socket mode: %w", err)
	}
	return ln, nil
}
