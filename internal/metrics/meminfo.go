package metrics

import (
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
	var total, avail float64
	hasAvail := false
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			continue
		}
		switch f[0] {
		case "MemTotal:":
			total = v
		case "MemAvailable:":
			avail, hasAvail = v, true
		}
	}
	if total <= 0 {
		return 0, fmt.Errorf("%s: no MemTotal", path)
	}
	// Kernels before 3.14 have no MemAvailable: reading it as 0 would
	// say the node's memory is all in use.
	if !hasAvail {
		return 0, fmt.Errorf("%s: no MemAvailable (kernel before 3.14)", path)
	}
	return 100 * (total - avail) / total, nil
}
