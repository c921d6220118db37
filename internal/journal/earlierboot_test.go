package journal

import "testing"

// A journal is of an earlier boot when its header names a boot ID and
// this boot's differs; no ID on either side says nothing.
func TestFromEarlierBoot(t *testing.T) {
	defer func(f func() string) { currentBootID = f }(currentBootID)
	for _, c := range []struct {
		header, now string
		want        bool
	}{
		{"a", "a", false},
		{"a", "b", true},
		{"", "b", false}, // an older cnibench's journal
		{"a", "", false}, // this boot's ID unreadable
	} {
		currentBootID = func() string { return c.now }
		r := &Replay{Header: Header{BootID: c.header}}
		if got := r.FromEarlierBoot(); got != c.want {
			t.Errorf("header %q, now %q: FromEarlierBoot = %v, want %v", c.header, c.now, got, c.want)
		}
	}
}
