package nftrace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"net/netip"

	"github.com/cnibench/cnibench/internal/journal"
)

// Starter starts a command where the trace belongs: in a node's network
// namespace (netns.Start) or, for the node agent, where it runs (Cmd.Start).
type Starter func(*exec.Cmd) error

// Trace is a running trace in one network namespace.
type Trace struct {
	table  string
	start  Starter
	mon    *exec.Cmd
	count  *Counter
	done   chan error
	stderr bytes.Buffer
}

// Start reads trace events, then creates the trace table marking the
// packets between addrs. The table is named for this process (OwnTable).
func Start(addrs []netip.Addr, start Starter) (*Trace, error) {
	table, err := OwnTable()
	if err != nil {
		return nil, err
	}
	t := &Trace{table: table, start: start, count: NewCounter(table), done: make(chan error, 1)}
	t.mon = exec.Command("nft", "-a", "monitor", "trace")
	out, err := t.mon.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("nft monitor trace: %w", err)
	}
	t.mon.Stderr = &t.stderr
	if err := start(t.mon); err != nil {
		return nil, fmt.Errorf("nft monitor trace: %w", err)
	}
	go func() { t.done <- t.count.Read(out) }()
	// The monitor runs where the trace belongs, so its /proc/PID/net is
	// that namespace's.
	if err := CheckLegacy(filepath.Join("/proc", strconv.Itoa(t.mon.Process.Pid), "net")); err != nil {
		return nil, errors.Join(err, t.endMonitor())
	}
	if err := waitSubscribed(t.mon.Process.Pid, subscribeLimit); err != nil {
		return nil, errors.Join(err, t.endMonitor())
	}
	if err := run(start, Script(table, addrs)); err != nil {
		t.endMonitor()
		_ = run(start, "delete table inet "+table) // a half-made table; usually absent
		return nil, err
	}
	return t, nil
}

// Stop deletes the trace table, ends the monitor and returns what the
// marked packets traversed.
func (t *Trace) Stop() (Path, error) {
	del := run(t.start, "delete table inet "+t.table)
	read := t.endMonitor()
	return t.count.Path(), errors.Join(del, read)
}

func (t *Trace) endMonitor() error {
	_ = t.mon.Process.Signal(syscall.SIGTERM)
	var err error
	select {
	case err = <-t.done:
	case <-time.After(5 * time.Second):
		_ = t.mon.Process.Kill()
		err = <-t.done
	}
	if werr := t.mon.Wait(); werr != nil && t.stderr.Len() > 0 {
		err = errors.Join(err, fmt.Errorf("nft monitor trace: %w: %s", werr, strings.TrimSpace(t.stderr.String())))
	}
	return err
}

// run runs `nft CMD` (one argument: nft parses it, no shell does).
func run(start Starter, script string) error {
	cmd := exec.Command("nft", script)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := start(cmd); err != nil {
		return fmt.Errorf("nft: %w", err)
	}
	if err := cmd.Wait(); err != nil {
		// nft's first line says what failed; the rest repeats the
		// command with a marker under the part it refused.
		verb, _, _ := strings.Cut(script, ";")
		msg, _, _ := strings.Cut(strings.TrimSpace(out.String()), "\n")
		return fmt.Errorf("nft %s: %w: %s", verb, err, msg)
	}
	return nil
}

// OwnTable names this process's trace table: TablePrefix, its PID and its
// start time, so Sweep can tell a live owner from a recycled PID.
func OwnTable() (string, error) {
	pid := os.Getpid()
	st, err := journal.ProcessStart(pid)
	if err != nil {
		return "", fmt.Errorf("trace table: %w", err)
	}
	return fmt.Sprintf("%s%d_%d", TablePrefix, pid, st), nil
}

// Sweep deletes the trace tables (in the namespace start runs in) whose
// owner process is gone: what a trace killed before its Stop left. It
// returns the tables it deleted.
func Sweep(start Starter) ([]string, error) {
	cmd := exec.Command("nft", "list", "tables", "inet")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := start(cmd); err != nil {
		return nil, fmt.Errorf("nft list tables: %w", err)
	}
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("nft list tables: %w: %s", err, strings.TrimSpace(errb.String()))
	}
	var gone []string
	var errs []error
	s := bufio.NewScanner(&out)
	for s.Scan() {
		f := strings.Fields(s.Text())
		if len(f) != 3 || f[0] != "table" || f[1] != "inet" || !strings.HasPrefix(f[2], TablePrefix) || ownerAlive(f[2]) {
			continue
		}
		if err := run(start, "delete table inet "+f[2]); err != nil {
			errs = append(errs, err)
			continue
		}
		gone = append(gone, f[2])
	}
	return gone, errors.Join(errs...)
}

// ownerAlive says whether the process a table is named for still runs. A
// name that does not parse is not ours to delete.
func ownerAlive(table string) bool {
	pidS, stS, ok := strings.Cut(strings.TrimPrefix(table, TablePrefix), "_")
	pid, err1 := strconv.Atoi(pidS)
	st, err2 := strconv.ParseUint(stS, 10, 64)
	if !ok || err1 != nil || err2 != nil || pid <= 0 {
		return true
	}
	now, err := journal.ProcessStart(pid)
	return err == nil && now == st
}
