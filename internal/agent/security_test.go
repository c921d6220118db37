package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/tune"
	"github.com/cnibench/cnibench/internal/version"
)

// TestWriteAllowlist: the agent writes the knobs cnibench tunes and
// refuses any other path, changing nothing.
func TestWriteAllowlist(t *testing.T) {
	fs := testNode()
	fs.vals[key("", "proc", "/proc/sys/kernel/core_pattern")] = "core"
	fs.vals[key("", "sysfs", "class/net/eth1/mtu")] = "1500"
	fs.vals[key("", "sysfs", "devices/system/cpu/cpu1/power/pm_qos_resume_latency_us")] = "0"
	fs.vals[key("", "proc", "/proc/sys/net/core/busy_read")] = "0"
	fs.vals[key("podns1", "proc", "/proc/sys/net/ipv4/tcp_rmem")] = "4096\t131072\t6291456"
	c, wait := session(t, Config{Run: "r1", FS: fs, Pods: fakePods{"ns/srv-0": "podns1"}, JournalDir: t.TempDir()})
	for _, ok := range []struct{ ns, fs, p string }{
		{"", "proc", tune.SockFlowEntriesPath},
		{"", "sysfs", "class/net/eth1/queues/rx-0/rps_cpus"},
		{PodNetns("ns", "srv-0"), "sysfs", "class/net/eth0/queues/rx-0/rps_cpus"},
		// A tuning's network sysctls, of the node and of a pod.
		{"", "proc", "/proc/sys/net/core/busy_read"},
		{PodNetns("ns", "srv-0"), "proc", "/proc/sys/net/ipv4/tcp_rmem"},
		// A cpuIdle tuning's idle latency limit.
		{"", "sysfs", "devices/system/cpu/cpu1/power/pm_qos_resume_latency_us"},
	} {
		if err := c.Write(ok.ns, ok.fs, ok.p, "1"); err != nil {
			t.Errorf("write %s %s: %v", ok.fs, ok.p, err)
		}
	}
	for _, bad := range []struct{ fs, p string }{
		{"proc", "/proc/sys/kernel/core_pattern"},
		{"sysfs", "class/net/eth1/mtu"},
		{"sysfs", "class/net/eth1/queues/rx-0/../../mtu"},
		{"sysfs", "class/net/eth1/queues/tx-0/xps_cpus"},
		{"proc", "/proc/sys/net/core/../../kernel/core_pattern"},
		{"proc", "/proc/sys/netx/core"},
		{"proc", "/proc/sys/net"},
		{"sysfs", "devices/system/cpu/cpu1/cpufreq/scaling_governor"},
		{"sysfs", "devices/system/cpu/cpu1/cpuidle/state2/disable"},
		{"sysfs", "devices/system/cpu/cpu1/power/control"},
		{"sysfs", "devices/system/cpu/cpu1/online"},
	} {
		err := c.Write("", bad.fs, bad.p, "|/tmp/x")
		if err == nil || !errors.Is(err, tune.ErrBadPath) || !strings.Contains(err.Error(), "not a knob cnibench tunes") {
			t.Errorf("write %s %s: err = %v, want a refusal", bad.fs, bad.p, err)
		}
	}
	if fs.vals[key("", "proc", "/proc/sys/kernel/core_pattern")] != "core" || fs.vals[key("", "sysfs", "class/net/eth1/mtu")] != "1500" {
		t.Error("a refused write changed a value")
	}
	c.Close()
	if err := wait(); err != nil {
		t.Fatal(err)
	}
}

// TestRequestOfAnotherRunRefused: a session answers only requests that
// carry its run's identity.
func TestRequestOfAnotherRunRefused(t *testing.T) {
	fs := testNode()
	c, wait := session(t, Config{Run: "r1", FS: fs, JournalDir: t.TempDir()})
	c.SetRun("r2")
	err := c.Write("", "sysfs", "class/net/eth1/queues/rx-0/rps_cpus", "3")
	if err == nil || !strings.Contains(err.Error(), `request for run "r2" refused: this session serves run "r1"`) {
		t.Fatalf("err = %v", err)
	}
	c.SetRun("")
	if _, err := c.Call(Request{Op: OpPing}); err == nil {
		t.Fatal("a request without a run was answered")
	}
	if fs.vals[key("", "sysfs", "class/net/eth1/queues/rx-0/rps_cpus")] != "0" {
		t.Error("refused request changed the knob")
	}
	c.SetRun("r1")
	if v, err := c.Hello("v9"); err != nil || v != version.Version {
		t.Fatalf("hello = %q, %v; want %q", v, err, version.Version)
	}
	c.Close()
	if err := wait(); err != nil {
		t.Fatal(err)
	}
}

// TestCallDeadline: an agent that never answers fails the call with
// ErrTimeout instead of hanging, and the session stays broken.
func TestCallDeadline(t *testing.T) {
	inR, inW := io.Pipe()
	outR, _ := io.Pipe()
	go io.Copy(io.Discard, inR) // reads requests, never answers
	c := NewClient(inW, outR)
	c.SetRun("r1")
	c.SetTimeouts(50*time.Millisecond, 50*time.Millisecond)
	_, err := c.Read("", "sysfs", "class/net/eth1/mtu")
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "read (request 1)") {
		t.Fatalf("err = %v, want ErrTimeout naming the op", err)
	}
	if _, err := c.Call(Request{Op: OpPing}); !errors.Is(err, ErrTimeout) {
		t.Fatalf("after a timeout: err = %v, want the sticky timeout", err)
	}
}

// TestStopSessionsOnlyOwnRun: a run's daemon signals only its own
// run's live sessions (journals RUN_PID), not another run's, even one
// whose ID begins with its own and '_'.
func TestStopSessionsOnlyOwnRun(t *testing.T) {
	dir := t.TempDir()
	mine := exec.Command("sleep", "60")
	other := exec.Command("sleep", "60")
	for _, c := range []*exec.Cmd{mine, other} {
		if err := c.Start(); err != nil {
			t.Skip("no sleep:", err)
		}
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	}
	// Run IDs may hold '_': run runa_b's journal begins with "runa_"
	// too, and is not runa's.
	liveJournal(t, dir, fmt.Sprintf("runa_%d", mine.Process.Pid), mine.Process.Pid)
	liveJournal(t, dir, fmt.Sprintf("runa_b_%d", other.Process.Pid), other.Process.Pid)
	if got := livePIDs(dir, "runa"); len(got) != 1 || got[0] != mine.Process.Pid {
		t.Fatalf("livePIDs(runa) = %v, want [%d]", got, mine.Process.Pid)
	}
	if got := livePIDs(dir, ""); len(got) != 2 {
		t.Fatalf("livePIDs(all) = %v, want both", got)
	}
	stopSessions(dir, "runa", 2*time.Second)
	if err := mine.Wait(); err == nil {
		t.Error("own session was not signalled")
	}
	if err := other.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("other run's session was signalled: %v", err)
	}
}

// liveJournal writes a journal owned by pid.
func liveJournal(t *testing.T, dir, id string, pid int) {
	t.Helper()
	start, err := journal.ProcessStart(pid)
	if err != nil {
		t.Skip("process start time:", err)
	}
	hdr := map[string]any{"header": journal.Header{Version: 1, RunID: id, PID: pid, PIDStart: start, Started: time.Now(), Prefix: "cnb-"}}
	b, _ := json.Marshal(hdr)
	if err := os.WriteFile(filepath.Join(dir, id+journal.Ext), append(b, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
}
