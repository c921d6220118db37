package ab

import (
	"strings"
	"testing"
)

// Requests ab counted as complete but that got no good response: all of
// them non-2xx (a wrong path), or most of them failed after nginx went
// away mid-test, fail the pair; a few mark the trial with a warning; none
// leave it as it was.
func TestBadRequests(t *testing.T) {
	notFound, err := Parse(read(t, "err-404.txt"))
	if err != nil {
		t.Fatal(err)
	}
	good, err := Parse(read(t, "c1-1M.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// ab prints "Write errors" only when there were some.
	b := strings.Replace(string(read(t, "c1-1M.txt")), "Failed requests:        0\n", "Failed requests:        0\nWrite errors:           4\n", 1)
	if w, err := Parse([]byte(b)); err != nil || w.WriteErrors != 4 || w.Bad() != 4 {
		t.Errorf("write errors: %+v %v, want 4", w, err)
	}
	gone := &Report{Complete: 50000, Failed: 49000, TotalBytes: 1 << 30, Percent: map[int]float64{}}
	few := &Report{Complete: 1000, Failed: 3, Non2xx: 2, Percent: map[int]float64{}}
	for _, c := range []struct {
		name string
		r    *Report
		want string
	}{
		{"all non-2xx", notFound, "2937 of 2937 completed requests were no good response (0 failed, 2937 non-2xx, 0 write errors)"},
		{"nginx gone", gone, "49000 of 50000"},
		{"a few", few, ""},
		{"none", good, ""},
	} {
		err := checkGood(c.r)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if res := result([]*Report{few}, 0); len(res.Warnings) != 1 || res.Warnings[0] != badWarning {
		t.Errorf("a few bad requests: warnings %q", res.Warnings)
	}
	if res := result([]*Report{good}, 0); len(res.Warnings) != 0 {
		t.Errorf("no bad request: warnings %q", res.Warnings)
	}
}
