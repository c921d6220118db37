package tune

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/cnibench/cnibench/internal/netns"
)

// LocalFS reaches the knobs of this machine: sysfs of a named namespace
// through netns.WithSysfs (netns "" is the host's /sys; a namespace is a
// name under netns.Dir or a path such as /proc/PID/ns/net), and /proc/sys
// as plain files, opened from inside the namespace.
type LocalFS struct{}

var _ FS = LocalFS{}

// Read returns a knob's value without the trailing newline.
func (LocalFS) Read(ns, fsKind, p string) (string, error) {
	var v string
	err := at(ns, fsKind, p, netns.Read, func(file string) error {
		b, err := os.ReadFile(file)
		v = strings.TrimRight(string(b), "\n")
		return err
	})
	return v, err
}

// Write writes a knob with a trailing newline, as `echo VALUE > FILE`
// and sysctl -w do. Without it an empty value is a zero-length write,
// which proc_sys_call_handler ignores: "" never clears
// ip_local_reserved_ports, whereas "\n" does. Every file written
// through here takes the newline: sysctls (parsed up to whitespace),
// rps_cpus and xps_cpus (bitmap_parse stops at '\n'), rps_flow_cnt and
// pm_qos_resume_latency_us (kstrto* accept one trailing newline).
func (LocalFS) Write(ns, fsKind, p, value string) error {
	if !strings.HasSuffix(value, "\n") {
		value += "\n"
	}
	return at(ns, fsKind, p, netns.Write, func(file string) error {
		f, err := os.OpenFile(file, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		_, err = f.WriteString(value)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	})
}

var _ WritableFS = LocalFS{}

// Writable reports whether the knob's mode lets root write it there: a
// child namespace shows some sysctls read-only (0444), the host's
// value, which only the initial namespace may change.
func (LocalFS) Writable(ns, fsKind, p string) (bool, error) {
	var w bool
	err := at(ns, fsKind, p, netns.Read, func(file string) error {
		st, err := os.Stat(file)
		w = err == nil && st.Mode().Perm()&0o222 != 0
		return err
	})
	return w, err
}

// List returns the names in a directory.
func (LocalFS) List(ns, fsKind, dir string) ([]string, error) {
	var names []string
	err := at(ns, fsKind, dir, netns.Read, func(file string) error {
		ents, err := os.ReadDir(file)
		for _, e := range ents {
			names = append(names, e.Name())
		}
		return err
	})
	return names, err
}

// at resolves p in the namespace's filesystem and runs fn on the result,
// mapping a missing namespace or device to ErrGone. access says whether
// fn writes: a read-only sysfs is then made writable (netns.WithSysfs).
func at(ns, fsKind, p string, access netns.Access, fn func(file string) error) error {
	switch fsKind {
	case FSProc:
		return atProc(ns, p, fn)
	case FSSysfs:
	default:
		return fmt.Errorf("unknown fs kind %q: %w", fsKind, ErrBadPath)
	}
	if path.IsAbs(p) || path.Clean(p) != p || p == ".." || strings.HasPrefix(p, "../") {
		return fmt.Errorf("sysfs path %q must be relative to the sysfs root: %w", p, ErrBadPath)
	}
	if ns != "" && !netns.Exists(ns) {
		return fmt.Errorf("netns %s: %w", ns, ErrGone)
	}
	err := netns.WithSysfs(ns, access, func(root string) error {
		err := fn(filepath.Join(root, p))
		if errors.Is(err, os.ErrNotExist) {
			if deviceGone(root, p) {
				return fmt.Errorf("%w: %w", ErrGone, err)
			}
			if knobMissing(root, p) {
				return fmt.Errorf("%w: %w", ErrNotSupported, err)
			}
		}
		return err
	})
	if err == nil {
		return nil
	}
	if ns != "" && !errors.Is(err, ErrGone) && !netns.Exists(ns) {
		// Deleted between the check and the mount.
		err = fmt.Errorf("%w: %w", ErrGone, err)
	}
	where := ns
	if where == "" {
		where = "host"
	}
	return fmt.Errorf("sysfs of %s: %s: %w", where, p, err)
}

// atProc runs fn on a /proc/sys file as the namespace sees it: in a
// namespace, on a thread that entered it, since /proc/sys/net shows the
// namespace of the task that opens it.
func atProc(ns, p string, fn func(file string) error) error {
	if path.Clean(p) != p || !strings.HasPrefix(p, "/proc/sys/") {
		return fmt.Errorf("%q is not a /proc/sys path: %w", p, ErrBadPath)
	}
	where := "host"
	var err error
	if ns == "" {
		err = fn(p)
	} else {
		where = "netns " + ns
		if !netns.Exists(ns) {
			return fmt.Errorf("%s in %s: %w", p, where, ErrGone)
		}
		err = netns.Do(ns, func() error { return fn(p) })
	}
	switch {
	case errors.Is(err, os.ErrNotExist) && p == SockFlowEntriesPath && ns == "":
		err = fmt.Errorf("%w: %w", ErrNotSupported, err)
	case errors.Is(err, os.ErrNotExist):
		err = fmt.Errorf("%w: %w", ErrNoSysctl, err)
	}
	if err != nil {
		return fmt.Errorf("%s in %s: %w", p, where, err)
	}
	return nil
}

// deviceGone reports whether p names a file of a network device
// (class/net/DEV/...) that does not exist in this sysfs.
func deviceGone(root, p string) bool {
	rest, ok := strings.CutPrefix(p, "class/net/")
	if !ok {
		return false
	}
	dev, _, _ := strings.Cut(rest, "/")
	_, err := os.Lstat(filepath.Join(root, "class/net", dev))
	return errors.Is(err, os.ErrNotExist)
}

// knobMissing reports whether p is an RPS knob of a receive queue that
// exists without it: the kernel was built without CONFIG_RPS.
func knobMissing(root, p string) bool {
	switch path.Base(p) {
	case "rps_cpus", "rps_flow_cnt":
		_, err := os.Stat(filepath.Join(root, path.Dir(p)))
		return err == nil
	}
	return false
}
