package metrics

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// MemoryPercent is the memory in use, (MemTotal - MemAvailable) /
// MemTotal in percent, from a meminfo file (/proc/meminfo of a node).
func MemoryPercent(path string) (float64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	v, err := parseMeminfo(b)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

// parseMeminfo reads MemTotal and MemAvailable ("MemTotal:  1000 kB") and
// returns the percentage in use, always within 0-100. The two values are
// whole kB counts, read as such: a float parser would take NaN, Inf or
// -5 and yield a percentage that is no number or out of range. Other
// lines are not read.
func parseMeminfo(b []byte) (float64, error) {
	var total, avail uint64
	hasTotal, hasAvail := false, false
	for n, line := range bytes.Split(b, []byte("\n")) {
		f := strings.Fields(string(line))
		if len(f) < 2 || (f[0] != "MemTotal:" && f[0] != "MemAvailable:") {
			continue
		}
		v, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("line %d: %s %q is not a count of kB", n+1, strings.TrimSuffix(f[0], ":"), f[1])
		}
		if f[0] == "MemTotal:" {
			total, hasTotal = v, true
		} else {
			avail, hasAvail = v, true
		}
	}
	if !hasTotal || total == 0 {
		return 0, errors.New("no MemTotal")
	}
	// Kernels before 3.14 have no MemAvailable: reading it as 0 would
	// say the node's memory is all in use.
	if !hasAvail {
		return 0, errors.New("no MemAvailable (kernel before 3.14)")
	}
	if avail > total {
		return 0, fmt.Errorf("MemAvailable %d kB is more than MemTotal %d kB", avail, total)
	}
	return 100 * float64(total-avail) / float64(total), nil
}
