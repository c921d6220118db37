package impair

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// readDist parses a .dist file as tc's get_distribution does.
func readDist(t *testing.T, path string) []int16 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []int16
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		for _, w := range strings.Fields(line) {
			v, err := strconv.ParseInt(w, 0, 16)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			out = append(out, int16(v))
		}
	}
	return out
}

// TestDistTablesMatchIproute2: testdata/*.dist are the output of
// iproute2's netem/{normal,pareto,paretonormal}.c (built with gcc, glibc's
// erf and pow); the Go tables must be the same, entry for entry, and the
// same as the machine's installed files where there are some.
func TestDistTablesMatchIproute2(t *testing.T) {
	for _, d := range []Distribution{Normal, Pareto, ParetoNormal} {
		got, err := DistTable(d)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 4096 {
			t.Errorf("%s: %d entries, want 4096", d, len(got))
		}
		paths := []string{filepath.Join("testdata", string(d)+".dist")}
		for _, dir := range []string{"/usr/lib/tc", "/usr/lib64/tc", "/usr/share/tc"} {
			if p := filepath.Join(dir, string(d)+".dist"); fileExists(p) {
				paths = append(paths, p)
			}
		}
		for _, p := range paths {
			want := readDist(t, p)
			if len(want) != len(got) {
				t.Errorf("%s: %d entries, %s has %d", d, len(got), p, len(want))
				continue
			}
			diff := 0
			for i := range want {
				if got[i] != want[i] {
					if diff < 5 {
						t.Errorf("%s[%d] = %d, %s has %d", d, i, got[i], p, want[i])
					}
					diff++
				}
			}
			if diff > 0 {
				t.Errorf("%s: %d entries differ from %s", d, diff, p)
			}
		}
	}
	if tb, err := DistTable(Uniform); tb != nil || err != nil {
		t.Errorf("uniform: %v, %v; want no table", tb, err)
	}
	if _, err := DistTable("experimental"); err == nil {
		t.Error("experimental: want an error")
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }
