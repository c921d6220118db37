package cleanup

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/tune"
)

// vanishedFS reaches a dead run's values through FS, and counts a value
// whose file no longer exists while its namespace (and device) does as
// gone (tune.ErrGone), as the namespace's or device's own end does: a
// sysctl whose module was unloaded (tune.ErrNoSysctl), an rx queue's
// rps_cpus after the device lost queues (a plain ENOENT). There is
// nothing to restore, and an undo that could never succeed would keep
// the journal, and so refuse every later run, for good. It remembers
// which values it found vanished, for the report.
type vanishedFS struct {
	tune.FS
	mu   sync.Mutex
	seen map[string]bool
}

// errVanished wraps the error of a value file that is gone while its
// namespace lives.
type errVanished struct{ err error }

func (e *errVanished) Error() string        { return "its file no longer exists: " + e.err.Error() }
func (e *errVanished) Unwrap() []error      { return []error{tune.ErrGone, e.err} }
func vanishedKey(ns, kind, p string) string { return ns + "|" + kind + "|" + p }

func (v *vanishedFS) Read(ns, kind, p string) (string, error) {
	s, err := v.FS.Read(ns, kind, p)
	return s, v.classify(ns, kind, p, err)
}

func (v *vanishedFS) Write(ns, kind, p, value string) error {
	return v.classify(ns, kind, p, v.FS.Write(ns, kind, p, value))
}

func (v *vanishedFS) classify(ns, kind, p string, err error) error {
	if err == nil || errors.Is(err, tune.ErrGone) {
		return err
	}
	if !errors.Is(err, tune.ErrNoSysctl) && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if ns != "" && !netns.Exists(ns) {
		// The namespace went meanwhile: gone with it.
		return fmt.Errorf("netns %s: %w: %w", ns, tune.ErrGone, err)
	}
	v.mu.Lock()
	if v.seen == nil {
		v.seen = map[string]bool{}
	}
	v.seen[vanishedKey(ns, kind, p)] = true
	v.mu.Unlock()
	return &errVanished{err}
}

// vanished reports whether the value's file was found gone while its
// namespace lives.
func (v *vanishedFS) vanished(ns, kind, p string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.seen[vanishedKey(ns, kind, p)]
}
