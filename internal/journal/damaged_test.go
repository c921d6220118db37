package journal

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// damage plays a corrupted journal: a line in the middle that cannot be
// read, with records before and after it.
func damage(t *testing.T, dir, run string) string {
	t.Helper()
	j := openAs(t, dir, run, deadPID(t), 1)
	j.RecordSet(Set{FS: FSProc, Path: "/proc/sys/a", Old: "0", New: "1"})
	j.RecordObject(Object{Kind: KindNetns, Name: "cnb-" + run + "-node"})
	abandon(j)
	f, err := os.OpenFile(j.Path(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("{\"seq\":3,\"set\":{\"fs\":\"proc\",\"pa\x00\x00\n")
	f.WriteString(`{"seq":4,"set":{"netns":"","fs":"proc","path":"/proc/sys/c","old":"5","new":"6"}}` + "\n")
	f.Close()
	return j.Path()
}

// TestDamagedJournal: a dead run's journal with an unreadable line in
// the middle. Before, BeginRun refused every run with "undo them first
// with: cnibench cleanup" while cleanup only reported the read error and
// never replayed it, so the advice looped forever. Now the refusal names
// the line, says it cannot be replayed in full, lists the changes it can
// read and what cleanup will do; cleanup gets it (Dead) with what it can
// read, and once it is set aside runs start again.
func TestDamagedJournal(t *testing.T) {
	dir := t.TempDir()
	p := damage(t, dir, "dmg")
	_, err := BeginRun(dir, "")
	var se *StaleError
	if !errors.As(err, &se) || len(se.Damaged) != 1 {
		t.Fatalf("BeginRun beside a damaged journal = %v", err)
	}
	for _, want := range []string{p, "line 4", "cannot be replayed in full", `host:/proc/sys/a "0"->"1"`, "netns cnb-dmg-node", `host:/proc/sys/c "5"->"6"`, "3 change(s)", p + CorruptExt, "check by hand"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal does not say %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "undo them first") {
		t.Errorf("refusal gives the plain advice for a damaged journal:\n%v", err)
	}
	// The agent's and kube cleanup's Stale still skip it, reporting why.
	if st, err := Stale(dir); len(st) != 0 || err == nil {
		t.Fatalf("Stale = %d journals, %v; want none and the error", len(st), err)
	}
	rs, err := Dead(dir, false)
	if err != nil || len(rs) != 1 {
		t.Fatalf("Dead = %d journals, %v", len(rs), err)
	}
	r := rs[0]
	if len(r.Damaged) != 1 || r.Damaged[0].Line != 4 || len(r.Pending()) != 3 || !locked(p) {
		t.Fatalf("Dead read %+v (locked %v); want line 4 damaged, 3 pending, the lock held", r, locked(p))
	}
	if !strings.Contains(r.Damaged[0].Quoted(), `\x00`) {
		t.Errorf("damaged line quoted as %s", r.Damaged[0].Quoted())
	}
	to, err := r.SetAside()
	if err != nil || to != p+CorruptExt {
		t.Fatalf("SetAside = %q, %v", to, err)
	}
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("damaged journal still in place (%v)", err)
	}
	if _, err := os.Stat(to); err != nil {
		t.Fatal(err)
	}
	l, err := BeginRun(dir, "")
	if err != nil {
		t.Fatalf("BeginRun after the damaged journal was set aside: %v", err)
	}
	l.Release()
}

// TestUntrustedJournal: a file that cannot be read as a journal at all
// (no header) refuses runs with what the operator can do: cleanup leaves
// it alone, so the refusal must not send them to cleanup.
func TestUntrustedJournal(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "bad"+Ext)
	os.WriteFile(p, []byte(`{"seq":1,"set":{"fs":"proc"}}`+"\n"), 0o600)
	_, err := BeginRun(dir, "")
	var se *StaleError
	if !errors.As(err, &se) || len(se.Untrusted) != 1 {
		t.Fatalf("BeginRun = %v", err)
	}
	for _, want := range []string{p, "cannot be trusted", "leaves it alone", "move it out of " + dir} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal does not say %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "undo them first") {
		t.Errorf("refusal sends the user to cleanup, which leaves the file alone:\n%v", err)
	}
	_, err = Dead(dir, false)
	var u Untrusted
	if !errors.As(err, &u) || !errors.Is(err, ErrNoHeader) || !strings.Contains(err.Error(), "move it out of") {
		t.Fatalf("Dead = %v, want an Untrusted naming what to do", err)
	}
}
