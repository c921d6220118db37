package journal

import (
	"strings"
	"testing"
	"time"
)

// TestStaleNewestByBootClock: journals of one boot are replayed newest
// first by the boot clock when they were opened, whatever the wall clock
// says. Set back between two runs (NTP's first step, an operator), the
// wall clock put the later run's journal last: its undo came after the
// earlier run's and left the machine at the later run's "old", the
// earlier run's value. A journal without the boot clock (an older
// cnibench's) or of another boot makes the wall clock decide for all.
func TestStaleNewestByBootClock(t *testing.T) {
	now := time.Now().UTC()
	boot := bootID()
	if boot == "" || bootClock() == 0 {
		t.Skip("no boot id or boot clock here")
	}
	for _, tc := range []struct {
		name string
		ids  [3]string // boot id of a, b, c ("" for none)
		want string
	}{
		{"one boot: the boot clock", [3]string{boot, boot, boot}, "b,a,c"},
		{"an older journal: the wall clock", [3]string{boot, "", boot}, "c,a,b"},
		{"another boot: the wall clock", [3]string{boot, boot, "other"}, "c,a,b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			// Opened in the order c, a, b on the boot clock; the wall clock
			// was set back twice meanwhile, so it says b, a, c.
			for i, h := range []struct {
				id   string
				boot int64
				age  time.Duration
			}{{"a", 20, 2 * time.Hour}, {"b", 30, 3 * time.Hour}, {"c", 10, 1 * time.Hour}} {
				hd := Header{Version: version, RunID: h.id, PID: deadPID(t), PIDStart: 1, Started: now.Add(-h.age), Prefix: "cnb-", BootID: tc.ids[i]}
				if tc.ids[i] != "" {
					hd.Boot = h.boot
				}
				j, err := open(dir, hd)
				if err != nil {
					t.Fatal(err)
				}
				abandon(j)
			}
			got := staleOrder(t, dir)
			if strings.Join(got, ",") != tc.want {
				t.Errorf("replay order %v, want %s", got, tc.want)
			}
		})
	}
}

// Open records when on the boot clock, and which boot.
func TestOpenRecordsTheBootClock(t *testing.T) {
	before := bootClock()
	j, err := Open(t.TempDir(), "b1", "cnb-")
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if h := j.Header(); h.BootID != bootID() || h.Boot < before || h.Boot == 0 {
		t.Errorf("header %+v: want boot id %s and a boot clock at or after %d", h, bootID(), before)
	}
}
