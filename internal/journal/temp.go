package journal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// A journal is born as a temporary file, .RUN-PID-START-RANDOM.tmp in
// its directory, that Open writes the header to and links into place as
// RUN.journal, then unlinks. A process killed in between leaves the
// temporary file; its name carries its owner's pid and start time (as a
// probe's scratch namespace does, probe.ScratchName), so cleanup can
// remove it once that process is gone (DeadTemps). The file also names
// the owner's run while it lives: the open journal of a run, as
// /proc/PID/fd shows it, is that unlinked temporary file (busyHost).

// tempPattern is the os.CreateTemp pattern of a journal's temporary
// file for the header h.
func tempPattern(h Header) string {
	return fmt.Sprintf(".%s-%d-%d-*.tmp", h.RunID, h.PID, h.PIDStart)
}

// parseTemp reads a temporary file's name (a base name, as tempPattern
// makes them).
func parseTemp(name string) (run string, pid int, start uint64, ok bool) {
	rest, ok := strings.CutPrefix(name, ".")
	if !ok {
		return "", 0, 0, false
	}
	if rest, ok = strings.CutSuffix(rest, ".tmp"); !ok {
		return "", 0, 0, false
	}
	f := strings.Split(rest, "-")
	if len(f) != 4 || CheckRunID(f[0]) != nil || f[3] == "" {
		return "", 0, 0, false
	}
	pid, err := strconv.Atoi(f[1])
	if err != nil || pid <= 0 || strconv.Itoa(pid) != f[1] {
		return "", 0, 0, false
	}
	start, err = strconv.ParseUint(f[2], 10, 64)
	if err != nil || strconv.FormatUint(start, 10) != f[2] {
		return "", 0, 0, false
	}
	return f[0], pid, start, true
}

// openJournalOf is the journal of the run pid owns ("" if none is seen):
// a run keeps its journal open for its whole life, through the file
// descriptor of the temporary file it was made as, which /proc/PID/fd
// shows as "DIR/.RUN-PID-START-RANDOM.tmp (deleted)".
func openJournalOf(pid int) string {
	fds := "/proc/" + strconv.Itoa(pid) + "/fd"
	ents, err := os.ReadDir(fds)
	if err != nil {
		return ""
	}
	for _, e := range ents {
		t, err := os.Readlink(filepath.Join(fds, e.Name()))
		if err != nil || !filepath.IsAbs(t) {
			continue
		}
		t = strings.TrimSuffix(t, " (deleted)")
		if run, p, _, ok := parseTemp(filepath.Base(t)); ok && p == pid {
			return filepath.Join(filepath.Dir(t), run+Ext)
		}
	}
	return ""
}

// DeadTemp is a temporary file of a journal whose owner is gone.
type DeadTemp struct {
	Path string
	Run  string
	PID  int
}

// DeadTemps lists the temporary files in dir of journals whose owner is
// gone: killed between creating the file and linking it into place (or
// before unlinking it). A live owner's are not listed; nor is a file
// whose name does not say its owner (an older cnibench's), which is no
// harm: it is no journal, and /run goes at reboot.
func DeadTemps(dir string) ([]DeadTemp, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list journal temporary files: %w", err)
	}
	var out []DeadTemp
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		if run, pid, start, ok := parseTemp(e.Name()); ok && !ProcessAlive(pid, start) {
			out = append(out, DeadTemp{Path: filepath.Join(dir, e.Name()), Run: run, PID: pid})
		}
	}
	return out, nil
}

// OwnTempPattern is the os.MkdirTemp pattern of a temporary directory a
// process makes for itself outside any run, what naming it (perf's
// sampling probe: "perf-probe"): cnibench-WHAT-PID-START-*, so that
// cleanup can remove it once the process is gone, killed before it could
// (DeadOwnTemps). Without its own start time it is cnibench-WHAT-*,
// which cleanup leaves alone.
func OwnTempPattern(what string) string {
	start, err := ProcessStart(os.Getpid())
	if err != nil {
		return TempPrefix + what + "-*"
	}
	return fmt.Sprintf("%s%s-%d-%d-*", TempPrefix, what, os.Getpid(), start)
}

// DeadOwnTemps lists the directories in base that OwnTempPattern named
// for a process that is gone, with their owner's pid. Only directories
// (not links) of this process's user are listed: base is world-writable
// (/tmp), and cleanup runs as root.
func DeadOwnTemps(base string) ([]DeadTemp, error) {
	ents, err := os.ReadDir(base)
	if err != nil {
		return nil, fmt.Errorf("list temporary directories: %w", err)
	}
	var out []DeadTemp
	for _, e := range ents {
		pid, start, ok := parseOwnTemp(e.Name())
		if !ok || !e.IsDir() || ProcessAlive(pid, start) {
			continue
		}
		p := filepath.Join(base, e.Name())
		var st unix.Stat_t
		if unix.Lstat(p, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != os.Geteuid() {
			continue
		}
		out = append(out, DeadTemp{Path: p, PID: pid})
	}
	return out, nil
}

// parseOwnTemp reads cnibench-WHAT-PID-START-RANDOM (WHAT: lower case
// letters and '-', RANDOM os.MkdirTemp's digits).
func parseOwnTemp(name string) (pid int, start uint64, ok bool) {
	rest, ok := strings.CutPrefix(name, TempPrefix)
	if !ok {
		return 0, 0, false
	}
	f := strings.Split(rest, "-")
	if len(f) < 4 {
		return 0, 0, false
	}
	for _, w := range f[:len(f)-3] {
		if w == "" || strings.Trim(w, "abcdefghijklmnopqrstuvwxyz") != "" {
			return 0, 0, false
		}
	}
	n := len(f)
	if f[n-1] == "" || strings.Trim(f[n-1], "0123456789") != "" {
		return 0, 0, false
	}
	pid, err := strconv.Atoi(f[n-3])
	if err != nil || pid <= 0 || strconv.Itoa(pid) != f[n-3] {
		return 0, 0, false
	}
	start, err = strconv.ParseUint(f[n-2], 10, 64)
	if err != nil || strconv.FormatUint(start, 10) != f[n-2] {
		return 0, 0, false
	}
	return pid, start, true
}
