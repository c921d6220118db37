package tune

import (
	"errors"
	"maps"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"

	"github.com/cnibench/cnibench/internal/journal"
)

// A journal append that fails (the file may grow no more, as on a full
// file system: here RLIMIT_FSIZE, so write(2) fails with EFBIG) stops
// Apply before the change it could not journal is made, and the journal
// stays failed: every later Apply fails at once with journal.ErrFailed,
// so a run that goes on would stop at its next change too.
func TestApplyStopsOnAFailedJournalAppend(t *testing.T) {
	f, tgt := fixture()
	before := f.snapshot()
	j := openJournal(t)
	st, err := os.Stat(j.Path())
	if err != nil {
		t.Fatal(err)
	}
	signal.Ignore(syscall.SIGXFSZ)
	t.Cleanup(func() { signal.Reset(syscall.SIGXFSZ) })
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	lim := old
	lim.Cur = uint64(st.Size()) + 20 // less than one line
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old) })

	a, err := Apply(j, f, builtin(t, "rfs+"), tgt)
	if err == nil || a != nil || !strings.Contains(err.Error(), "journal") {
		t.Fatalf("Apply = %v, %v; want the journal's error", a, err)
	}
	if len(f.writes) != 0 || !maps.Equal(f.snapshot(), before) {
		t.Fatalf("a change was made without a journal line: %v", f.writes)
	}
	if j.Err() == nil {
		t.Fatal("journal not failed after a failed append")
	}
	syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old) // space again: the failure still sticks
	if _, err := Apply(j, f, builtin(t, "rfs+"), tgt); !errors.Is(err, journal.ErrFailed) {
		t.Fatalf("second Apply = %v, want journal.ErrFailed", err)
	}
	if len(f.writes) != 0 {
		t.Fatalf("changes made after the journal failed: %v", f.writes)
	}
}
