package journal

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ErrNoProcess means no live process has the pid (it does not exist or is
// a zombie: a zombie has already released its namespaces and files; a
// process whose first thread exited while others run is no zombie).
var ErrNoProcess = errors.New("no such process")

// ProcessStart returns field 22 of /proc/PID/stat, the time the process
// started in clock ticks after boot. A pid plus its start time names one
// process for the life of the machine, where a pid alone can be recycled.
func ProcessStart(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if errors.Is(err, os.ErrNotExist) {
		return 0, fmt.Errorf("pid %d: %w", pid, ErrNoProcess)
	}
	if err != nil {
		return 0, fmt.Errorf("pid %d: %w", pid, err)
	}
	state, start, err := parseStat(string(b))
	if err != nil {
		return 0, fmt.Errorf("pid %d: %w", pid, err)
	}
	if (state == "Z" || state == "X") && !liveThread(pid) {
		return 0, fmt.Errorf("pid %d (exited): %w", pid, ErrNoProcess)
	}
	return start, nil
}

// liveThread says whether a thread of process pid other than its first
// runs: a process whose first thread exited shows that thread's Z in
// /proc/PID/stat while the others run on (or sit in D after a SIGKILL),
// holding its namespaces and files, so it must be killed and waited for
// like any live process.
func liveThread(pid int) bool {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if e.Name() == strconv.Itoa(pid) {
			continue
		}
		b, err := os.ReadFile(dir + "/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if state, _, err := parseStat(string(b)); err == nil && state != "Z" && state != "X" {
			return true
		}
	}
	return false
}

// parseStat returns the state (field 3) and start time (field 22) of a
// /proc/PID/stat line. The command name (field 2) is in parentheses and
// may itself contain spaces and ')', so fields are counted after the last
// ')'.
func parseStat(s string) (state string, start uint64, err error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", 0, fmt.Errorf("malformed stat line %q", s)
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3; field 22 is f[19].
	if len(f) < 20 {
		return "", 0, fmt.Errorf("malformed stat line %q", s)
	}
	start, err = strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return "", 0, fmt.Errorf("malformed start time in stat line %q", s)
	}
	return f[0], start, nil
}

// ProcessAlive reports whether pid is the live process that started at
// start.
func ProcessAlive(pid int, start uint64) bool {
	if pid <= 0 {
		return false
	}
	st, err := ProcessStart(pid)
	return err == nil && st == start
}
