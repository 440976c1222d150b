package emit

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
)

// maxLinks bounds how many symbolic links WriteFileAtomic follows.
const maxLinks = 40

// WriteFileAtomic writes data to path the way compilers treat -o:
//
//   - "-" writes to stdout;
//   - a regular file (or a path that does not exist yet) is written through
//     a temporary file in the same directory and a rename, so readers never
//     see a partial file and a failed write leaves the old file in place;
//     the old file's permissions are kept;
//   - a symbolic link is followed: its target is replaced the same way and
//     the link is kept;
//   - a character device (/dev/null, a terminal) or a named pipe (FIFO) is
//     opened and written through, as gcc and clang do;
//   - /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N (directly or
//     through links) write to the process's open descriptor N, whatever it
//     is (a pipe, a terminal, a file opened for appending);
//   - a directory, block device, socket or other special file is refused.
//
// Errors name path, never the temporary file.
func WriteFileAtomic(path string, data []byte, stdout io.Writer) (err error) {
	if path == "-" {
		_, err = stdout.Write(data)
		return err
	}
	if fd, ok := openDescriptor(path); ok {
		return writeDescriptor(path, fd, data, stdout)
	}
	target, st, err := resolveOutput(path)
	if err != nil {
		return err
	}
	if st != nil && !st.Mode().IsRegular() {
		return writeThrough(path, target, st, data)
	}
	return replaceAtomically(path, target, st, data)
}

// resolveOutput follows symbolic links from path to the file that output
// goes to; st is nil when that file does not exist yet.
func resolveOutput(path string) (target string, st fs.FileInfo, err error) {
	target = path
	for i := 0; ; i++ {
		lst, err := os.Lstat(target)
		if errors.Is(err, fs.ErrNotExist) {
			return target, nil, nil
		}
		if err != nil {
			return "", nil, fmt.Errorf("%s: %w", path, unwrapPathError(err))
		}
		if lst.Mode()&fs.ModeSymlink == 0 {
			return target, lst, nil
		}
		if i == maxLinks {
			return "", nil, fmt.Errorf("%s: too many levels of symbolic links", path)
		}
		dest, err := os.Readlink(target)
		if err != nil {
			return "", nil, fmt.Errorf("%s: %w", path, unwrapPathError(err))
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(target), dest)
		}
		target = dest
	}
}

var fdPathRE = regexp.MustCompile(`^/(?:dev|proc/self)/fd/([0-9]+)$`)

// openDescriptor reports whether path, or a link on the way from it, names
// one of the process's open file descriptors, and which.
func openDescriptor(path string) (int, bool) {
	p := path
	for range maxLinks {
		switch filepath.Clean(p) {
		case "/dev/stdout":
			return 1, true
		case "/dev/stderr":
			return 2, true
		}
		if m := fdPathRE.FindStringSubmatch(filepath.Clean(p)); m != nil {
			n, err := strconv.Atoi(m[1])
			return n, err == nil
		}
		dest, err := os.Readlink(p)
		if err != nil {
			return 0, false
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(p), dest)
		}
		p = dest
	}
	return 0, false
}

func writeDescriptor(path string, fd int, data []byte, stdout io.Writer) error {
	var w io.Writer
	switch {
	case fd == 1 && stdout != nil:
		w = stdout
	case fd == 1:
		w = os.Stdout
	case fd == 2:
		w = os.Stderr
	default:
		w = os.NewFile(uintptr(fd), path)
	}
	if _, err := w.Write(data); err != nil {
		return fmt.Errorf("%s: %w", path, unwrapPathError(err))
	}
	return nil
}

func writeThrough(path, target string, st fs.FileInfo, data []byte) error {
	m := st.Mode()
	switch {
	case m&fs.ModeCharDevice != 0, m&fs.ModeNamedPipe != 0:
	case m.IsDir():
		return fmt.Errorf("%s: is a directory", path)
	case m&fs.ModeDevice != 0:
		return fmt.Errorf("%s: is a block device; refusing to write output to it", path)
	case m&fs.ModeSocket != 0:
		return fmt.Errorf("%s: is a socket; refusing to write output to it", path)
	default:
		return fmt.Errorf("%s: is not a regular file; refusing to write output to it", path)
	}
	f, err := os.OpenFile(target, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", path, unwrapPathError(err))
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, unwrapPathError(err))
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, unwrapPathError(err))
	}
	return nil
}

func replaceAtomically(path, target string, st fs.FileInfo, data []byte) (err error) {
	wrap := func(err error) error { return fmt.Errorf("%s: %w", path, unwrapPathError(err)) }
	dir := filepath.Dir(target)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(target)+".slatec-*")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: directory %s does not exist", path, dir)
		}
		return wrap(err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return wrap(err)
	}
	if err = tmp.Sync(); err != nil {
		return wrap(err)
	}
	mode := os.FileMode(0o644)
	if st != nil {
		mode = st.Mode().Perm()
	}
	if err = tmp.Chmod(mode); err != nil {
		return wrap(err)
	}
	if err = tmp.Close(); err != nil {
		return wrap(err)
	}
	if err = os.Rename(tmp.Name(), target); err != nil {
		return wrap(err)
	}
	return nil
}

// unwrapPathError drops the file name from *fs.PathError and *os.LinkError
// (which may be a temporary file's) and keeps the cause.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
