package serve

import (
	"net"
	"syscall"
)

// peerUID returns the uid of the process at the other end of c (SO_PEERCRED).
func peerUID(c *net.UnixConn) (int, bool) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, false
	}
	var cred *syscall.Ucred
	var serr error
	if err := raw.Control(func(fd uintptr) {
		cred, serr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil || serr != nil {
		return 0, false
	}
	return int(cred.Uid), true
}
