// Package procs reads processes' CPU time and memory from /proc: a
// datapath's daemons on this machine, or, through a node's agent, a real
// cluster's network daemons on that node.
package procs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ClockTicks is USER_HZ, the unit of utime/stime in /proc/PID/stat. Linux
// exports 100 on every architecture it runs on (the in-kernel HZ differs,
// but the value shown to user space is fixed for ABI reasons).
const ClockTicks = 100

// Proc is one process's CPU time so far and resident memory.
type Proc struct {
	Name     string  `json:"name"`
	PID      int     `json:"pid"`
	Ticks    uint64  `json:"ticks"`
	RSSBytes float64 `json:"rss_bytes"`
}

// Ticks returns utime+stime of a process from PROC/PID/stat.
func Ticks(procRoot string, pid int) (uint64, error) {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, err
	}
	return ParseStatTicks(b)
}

// ParseStatTicks reads fields 14 and 15 of /proc/PID/stat. The command
// name (field 2) may hold spaces and parentheses, so fields are counted
// from the last ')'.
func ParseStatTicks(b []byte) (uint64, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("no command name in /proc/PID/stat")
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); utime is field 14, stime field 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/PID/stat has %d fields after the name", len(f))
	}
	u, err1 := strconv.ParseUint(f[11], 10, 64)
	s, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("bad utime/stime %q %q", f[11], f[12])
	}
	return u + s, nil
}

// RSS returns VmRSS from PROC/PID/status in bytes.
func RSS(procRoot string, pid int) (float64, error) {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, err
	}
	return ParseRSS(b)
}

// ParseRSS reads VmRSS from /proc/PID/status, in bytes.
func ParseRSS(b []byte) (float64, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || k != "VmRSS" {
			continue
		}
		f := strings.Fields(v)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("bad VmRSS line %q", sc.Text())
		}
		kb, err := strconv.ParseUint(f[0], 10, 64) // the kernel prints a count: no sign, NaN or exponent
		if err != nil {
			return 0, fmt.Errorf("bad VmRSS value %q", f[0])
		}
		return float64(kb) * 1024, nil
	}
	return 0, fmt.Errorf("no VmRSS (kernel thread or zombie)")
}

// NetnsIno is the inode of a network namespace file (/proc/PID/ns/net,
// /proc/self/ns/net): two processes share a network namespace when
// theirs are equal.
func NetnsIno(path string) (uint64, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}

// Find lists the processes under procRoot whose command name (comm) is
// one of names and whose network namespace has inode netns: the daemons
// of one node, where host-network daemons of several nodes share a PID
// namespace (nodes as namespaces of one machine). Processes that exit
// while they are read are left out.
func Find(procRoot string, names []string, netns uint64) ([]Proc, error) {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	ents, err := os.ReadDir(procRoot)
	if err != nil {
		return nil, err
	}
	var out []Proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		comm, err := os.ReadFile(filepath.Join(procRoot, e.Name(), "comm"))
		name := strings.TrimSpace(string(comm))
		if err != nil || !want[name] {
			continue
		}
		ino, err := NetnsIno(filepath.Join(procRoot, e.Name(), "ns", "net"))
		if err != nil || ino != netns {
			continue
		}
		p := Proc{Name: name, PID: pid}
		if p.Ticks, err = Ticks(procRoot, pid); err == nil {
			p.RSSBytes, err = RSS(procRoot, pid)
		}
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s (pid %d): %w", name, pid, err)
		}
		out = append(out, p)
	}
	return out, nil
}
