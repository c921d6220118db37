package app

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/advise"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/runner"
)

// noMachineLock replaces the machine's lock with one that is refused,
// counting the tries, and the record of journal directories with one of
// the test's: a command refused as bad input must not get that far, and
// one that does stops there, the host untouched.
func noMachineLock(t *testing.T) *int {
	oldRecord, oldLock := dirsRecord, lockMachine
	dirsRecord = filepath.Join(t.TempDir(), "journal-dirs")
	tries := 0
	lockMachine = func(runner.Options) (*journal.Lock, error) {
		tries++
		return nil, errors.New("the test refuses the machine's lock")
	}
	t.Cleanup(func() { dirsRecord, lockMachine = oldRecord, oldLock })
	return &tries
}

// refusedFirst runs args and wants exit 2 with one line on stderr
// holding want, nothing on stdout, no try at the machine's lock and
// nothing of nowhere made.
func refusedFirst(t *testing.T, args []string, want string, tries *int, nowhere ...string) {
	t.Helper()
	*tries = 0
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, &out, &errb)
	if code != ExitBadInput || !strings.Contains(errb.String(), want) || strings.Count(errb.String(), "\n") != 1 || out.Len() != 0 {
		t.Errorf("%q: exit %d, stderr %q, stdout %q; want 2 and one line with %q", args, code, errb.String(), out.String(), want)
	}
	if *tries != 0 {
		t.Errorf("%q: the machine's lock was tried %d time(s) before the refusal", args, *tries)
	}
	for _, p := range nowhere {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%q: %s was made before the refusal", args, p)
		}
	}
}

// advise --prove with the --out of an earlier one (its prove-rfs/ run
// in it) is refused before the inspection, exit 2. Before, the
// inspection ran, the machine's lock was taken, each candidate's run
// refused its directory (a run's --out must be new; advise has no
// --resume) and the advice said every candidate failed, exit 0. An
// --out that is a file failed only once the pages were written, after
// the inspection, exit 1.
func TestAdviseRefusesUsedOut(t *testing.T) {
	tries := noMachineLock(t)
	out := t.TempDir()
	if err := os.MkdirAll(filepath.Join(out, "prove-rfs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "prove-rfs", "samples.jsonl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	jdir := filepath.Join(t.TempDir(), "j")
	refusedFirst(t, []string{"advise", "--prove", "--rule", "rfs", "--out", out, "--journal-dir", jdir},
		"--out "+out+": prove-rfs/ holds an earlier A/B; choose another --out", tries, jdir, filepath.Join(out, advise.FileJSON))
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"advise", "--rule", "rfs", "--out", file}, {"advise", "--prove", "--rule", "rfs", "--out", file, "--journal-dir", jdir}} {
		refusedFirst(t, args, "--out "+file+" exists and is not a directory", tries, jdir)
	}
	// An empty prove-rfs/ (a run refused before it began) is no A/B.
	empty := t.TempDir()
	if err := os.Mkdir(filepath.Join(empty, "prove-rfs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := checkAdviseOut(empty, true); err != nil {
		t.Errorf("--out with an empty prove-rfs/: %v", err)
	}
}

// cleanup --journal-dir of a directory that does not exist (a typo of
// /run/cnibench) is refused, exit 2, naming the directories runs
// journaled in. Before, cleanup made it for its lock, found nothing,
// said "nothing to clean up" and exited 0: the journals meant were not
// replayed. Its dry run said the same "nothing", and is refused too.
func TestCleanupRefusesMissingJournalDir(t *testing.T) {
	tries := noMachineLock(t)
	known := t.TempDir()
	if err := journal.NoteDir(dirsRecord, known); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "cnibnech")
	for name, args := range map[string][]string{
		"dry-run": {"cleanup", "--dry-run", "--journal-dir", missing},
		"cleanup": {"cleanup", "--journal-dir", missing},
	} {
		t.Run(name, func(t *testing.T) {
			refusedFirst(t, args, "--journal-dir "+missing+" does not exist: no run journaled there (runs journaled in "+
				journal.DefaultDir+", "+known+"; cnibench cleanup without --journal-dir replays them all)", tries, missing)
		})
	}
	// The default directory, gone at reboot, is no typo.
	if err := checkJournalDir(journal.DefaultDir + "/"); err != nil {
		t.Errorf("the default directory: %v", err)
	}
}

// run --out of a directory that holds anything (or of a file) is
// refused before the locks make their files: before, /run/cnibench
// (here --journal-dir's) and its lock were made, and the machine's
// lock taken, first.
func TestRunRefusesUsedOutFirst(t *testing.T) {
	tries := noMachineLock(t)
	study := filepath.Join(t.TempDir(), "one.yaml")
	if err := os.WriteFile(study, []byte(`apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: one}
spec:
  datapaths: [bridge]
  workloads: [{name: tcp, tool: iperf3}]
  trials: 2
  duration: 5s
`), 0o644); err != nil {
		t.Fatal(err)
	}
	used := t.TempDir()
	if err := os.WriteFile(filepath.Join(used, "samples.jsonl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	jdir := filepath.Join(t.TempDir(), "j")
	refusedFirst(t, []string{"run", study, "--out", used, "--journal-dir", jdir},
		"--out "+used+" holds a run that ended before it recorded its environment (no env.json), which --resume cannot continue; choose another directory", tries, jdir)
	file := filepath.Join(used, "samples.jsonl")
	refusedFirst(t, []string{"run", study, "--out", file, "--journal-dir", jdir},
		"--out "+file+" exists and is not a directory", tries, jdir)
}
