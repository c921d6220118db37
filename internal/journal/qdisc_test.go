package journal

import (
	"encoding/json"
	"testing"
)

// A journaled qdisc reads back pending until marked done, with its
// previous state intact.
func TestQdiscRecordReplay(t *testing.T) {
	dir := t.TempDir()
	j, err := open(dir, Header{Version: version, RunID: "q1", PID: 1, Prefix: "cnb-"})
	if err != nil {
		t.Fatal(err)
	}
	prev := json.RawMessage(`{"netns":"cnb-q1-c","dev":"flannel.1","kind":"noqueue","default":true,"parent":4294967295}`)
	seq, err := j.RecordQdisc(Qdisc{Netns: "cnb-q1-c", Dev: "flannel.1", Prev: prev})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.RecordQdisc(Qdisc{Dev: "x"}); err == nil {
		t.Fatal("a qdisc record without its previous state was accepted")
	}
	r, err := ReadReplay(j.Path())
	if err != nil {
		t.Fatal(err)
	}
	p := r.Pending()
	if len(p) != 1 || p[0].Qdisc == nil || p[0].Qdisc.Dev != "flannel.1" || string(p[0].Qdisc.Prev) != string(prev) {
		t.Fatalf("pending = %+v", p)
	}
	if err := j.MarkDone(seq); err != nil {
		t.Fatal(err)
	}
	if r, err = ReadReplay(j.Path()); err != nil || len(r.Pending()) != 0 {
		t.Fatalf("after MarkDone: %v pending, err %v", len(r.Pending()), err)
	}
	j.f.Close()
}
