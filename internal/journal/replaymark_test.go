package journal

import (
	"os"
	"testing"
)

// A kept journal's Replay appends undo marks that a later read sees,
// under its lock only, and none after a cut last line, which they would
// turn into a damaged line.
func TestReplayMarkDone(t *testing.T) {
	dir := t.TempDir()
	j, err := Open(dir, "r3", "cnb-")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := j.RecordSet(Set{FS: FSProc, Path: "/proc/sys/a", Old: "0", New: "1"})
	j.RecordSet(Set{FS: FSProc, Path: "/proc/sys/b", Old: "1", New: "2"})
	j.Close()
	r, err := ReadReplay(j.Path())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.MarkDone([]int{a}); err == nil {
		t.Error("MarkDone without the lock succeeded")
	}
	if r.lock, err = os.Open(j.Path()); err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	if err := r.MarkDone([]int{a, a}); err != nil {
		t.Fatal(err)
	}
	again, err := ReadReplay(j.Path())
	if err != nil || len(again.Pending()) != 1 || again.Pending()[0].Set.Path != "/proc/sys/b" {
		t.Fatalf("after MarkDone: %v, pending %+v; want /proc/sys/b alone", err, again.Pending())
	}

	f, _ := os.OpenFile(j.Path(), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"reverted":`) // cut by a crash
	f.Close()
	cut, err := ReadReplay(j.Path())
	if err != nil || !cut.Truncated {
		t.Fatalf("cut journal: %v, truncated %v", err, cut != nil && cut.Truncated)
	}
	before, _ := os.ReadFile(j.Path())
	cut.lock = r.lock
	if err := cut.MarkDone([]int{2}); err != nil {
		t.Fatal(err)
	}
	// Glued to the cut line, the mark would be lost, and the next
	// line appended would make the cut one a damaged line.
	if after, _ := os.ReadFile(j.Path()); string(after) != string(before) {
		t.Errorf("marks appended after a cut last line:\n%s", after[len(before):])
	}
}
