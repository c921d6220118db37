package journal

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// What a run's journal, namespaces and directories are named: the run
// IDs and name prefixes a journal may carry (cleanup acts on names built
// from them, so they are checked before any is used), and the run's
// state and temporary directories.

var (
	// ErrBadRunID means a run ID cannot name a journal or namespaces.
	ErrBadRunID = errors.New("bad run ID")
	// ErrBadPrefix means a name prefix is not one a run uses.
	ErrBadPrefix = errors.New("bad name prefix")
)

// StateSubdir is the directory, inside the journal directory, that holds
// each run's state directory.
const StateSubdir = "state"

// StateDir is the directory of files a run keeps while it lives (the
// reference CNI plugins' IPAM leases and libcni's result cache, per
// node): DIR/state/RUN, beside the journals in DIR. Like the journals it
// is on /run's tmpfs, so it never outlives the state it describes;
// cleanup removes it for a dead run.
func StateDir(dir, runID string) string { return filepath.Join(dir, StateSubdir, runID) }

// TempPrefix starts the name of a run's temporary directory.
const TempPrefix = "cnibench-"

// TempDir is a run's temporary directory below base (the system's
// temporary directory): the TMPDIR of its helpers. It is not inside the
// state directory because helpers that drop root (nginx's workers) must
// reach their files, and the journal directory is private to root.
func TempDir(base, runID string) string { return filepath.Join(base, TempPrefix+runID) }

// IsTempDir reports whether p names run's temporary directory under
// some base, as TempDir makes it.
func IsTempDir(p, runID string) bool {
	return filepath.IsAbs(p) && filepath.Base(p) == TempPrefix+runID && filepath.Clean(p) == p
}

// GeneratedRunID says whether id has the form of the run IDs cnibench
// makes: hex digits (six: the runner's; eight: the kernel tests'), after
// at most one lower-case letter (a test's prefix).
func GeneratedRunID(id string) bool { return generatedRunID.MatchString(id) }

var generatedRunID = regexp.MustCompile(`^[a-z]?[0-9a-f]{6,16}$`)

// CheckRunID accepts IDs made of letters, digits, '_' and '.', at most 64
// long, not starting with '.'. No '-': namespaces are named
// PREFIX<run>-<what>, and cleanup finds the run as the part before '-'.
func CheckRunID(id string) error {
	if id == "" || len(id) > 64 || id[0] == '.' {
		return fmt.Errorf("%w %q", ErrBadRunID, id)
	}
	for _, c := range id {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.'
		if !ok {
			return fmt.Errorf("%w %q: only letters, digits, '_' and '.'", ErrBadRunID, id)
		}
	}
	return nil
}

// CheckPrefix accepts name prefixes as runs use them ("cnb-"): a lower
// case letter, then lower case letters, digits and '-' (at least one),
// at most 32 long. Cleanup deletes namespaces and links by this prefix
// (and only when it extends its own), so a journal must not be able to
// name a wider one ("" or "c") or one with path characters.
func CheckPrefix(p string) error {
	bad := len(p) < 2 || len(p) > 32 || p[0] < 'a' || p[0] > 'z' || !strings.Contains(p, "-")
	for _, c := range p {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			bad = true
		}
	}
	if bad {
		return fmt.Errorf("%w %q: want a lower case letter, then lower case letters, digits and at least one '-'", ErrBadPrefix, p)
	}
	return nil
}
