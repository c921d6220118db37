package collect

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/cnibench/cnibench/internal/datapath"
)

// clockTicks is USER_HZ, the unit of utime/stime in /proc/PID/stat. Linux
// exports 100 on every architecture it runs on (the in-kernel HZ differs,
// but the value shown to user space is fixed for ABI reasons).
const clockTicks = 100

// DaemonLister is implemented by clusters whose datapath runs processes
// on this machine (flanneld, etcd): the paper reports their CPU and
// memory. The local engine's clusters implement it.
type DaemonLister interface{ Daemons() []datapath.Daemon }

var daemonsEntry = Entry{
	Name: "daemons",
	Description: "CPU (percent of one CPU) over the window and resident memory at its end of the datapath's " +
		"daemons (flanneld, etcd, BIRD...), from /proc/PID of clusters that list them",
	Metrics: []string{"daemon_NAME_NODE_cpu_pct", "daemon_NAME_NODE_rss_bytes", "daemons_cpu_pct", "daemons_rss_bytes"},
	Enabled: always,
	New: func(t Trial) (Collector, error) {
		dl, ok := t.Cluster.(DaemonLister)
		if !ok {
			return &daemonWatch{}, nil
		}
		return &daemonWatch{daemons: dl.Daemons()}, nil
	},
}

// daemonWatch records the CPU time of a datapath's daemons over a trial
// and their resident memory at its end.
type daemonWatch struct {
	daemons []datapath.Daemon
	ticks   []uint64
	start   time.Time
}

func (w *daemonWatch) Start(context.Context) error {
	w.start, w.ticks = time.Now(), nil
	for _, d := range w.daemons {
		t, _ := procTicks(d.PID)
		w.ticks = append(w.ticks, t)
	}
	return nil
}

func (w *daemonWatch) Stop(context.Context) (Result, error) {
	if len(w.daemons) == 0 {
		return Result{}, nil
	}
	return Result{Metrics: w.metrics()}, nil
}

// metrics returns, per daemon and summed, CPU in percent of one CPU over
// the trial and resident memory in bytes. A daemon that died during the
// trial is skipped (its absence shows as a missing value, not a zero).
func (w *daemonWatch) metrics() map[string]float64 {
	m := map[string]float64{}
	elapsed := time.Since(w.start).Seconds()
	if len(w.daemons) == 0 || elapsed <= 0 {
		return m
	}
	var cpu, rss float64
	for i, d := range w.daemons {
		t, err := procTicks(d.PID)
		if err != nil || t < w.ticks[i] {
			continue
		}
		r, err := procRSS(d.PID)
		if err != nil {
			continue
		}
		pct := float64(t-w.ticks[i]) / clockTicks / elapsed * 100
		key := "daemon_" + d.Name + "_" + d.Node
		m[key+"_cpu_pct"] = pct
		m[key+"_rss_bytes"] = r
		cpu += pct
		rss += r
	}
	m["daemons_cpu_pct"] = cpu
	m["daemons_rss_bytes"] = rss
	return m
}

// procTicks returns utime+stime of a process from /proc/PID/stat.
func procTicks(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStatTicks(b)
}

// parseStatTicks reads fields 14 and 15 of /proc/PID/stat. The command
// name (field 2) may hold spaces and parentheses, so fields are counted
// from the last ')'.
func parseStatTicks(b []byte) (uint64, error) {
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

// procRSS returns VmRSS from /proc/PID/status in bytes.
func procRSS(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	return parseRSS(b)
}

func parseRSS(b []byte) (float64, error) {
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
