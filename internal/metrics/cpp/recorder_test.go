package cpp

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/netns"
)

// fakePerfScript is a perf on PATH that logs each subcommand: record
// waits for its control FIFO's enable and acknowledges it (as perf -D -1
// --control does; it refuses the option where CNIBENCH_FAKE_PERF_OLD is
// set, as a perf before 5.11 would, and opens its FIFOs only once the
// file CNIBENCH_FAKE_PERF_HOLD names exists, where that is set), writes
// its data on SIGTERM, as perf does, and report prints one veth sample
// (none, and perf's warning, where CNIBENCH_FAKE_PERF_UNFINISHED is set,
// as for a recording perf was killed before it finished), and the lines
// of CNIBENCH_FAKE_PERF_EXTRA after it where that is set. It keeps its
// record arguments in the log's .args file.
const fakePerfScript = `#!/bin/sh
case "$1" in
record)
	echo "$@" > "$CNIBENCH_FAKE_PERF_LOG.args"
	while [ $# -gt 0 ]; do
		[ "$1" = -o ] && out=$2
		[ "$1" = --control ] && ctl=${2#fifo:}
		shift
	done
	if [ -n "$ctl" ]; then
		[ -n "$CNIBENCH_FAKE_PERF_OLD" ] && { echo "unknown option 'control'" >&2; exit 129; }
		while [ -n "$CNIBENCH_FAKE_PERF_HOLD" ] && [ ! -e "$CNIBENCH_FAKE_PERF_HOLD" ]; do sleep 0.05; done
		ack=${ctl#*,}; ctl=${ctl%%,*}
		exec 3<>"$ctl" 4<>"$ack"
		trap 'echo data > "$out"; exit 0' TERM
		read cmd <&3
		echo record >> "$CNIBENCH_FAKE_PERF_LOG"
		[ "$cmd" = enable ] && echo ack >&4
	else
		trap 'echo data > "$out"; exit 0' TERM
		echo record >> "$CNIBENCH_FAKE_PERF_LOG"
	fi
	while :; do sleep 0.05; done;;
report)
	echo report >> "$CNIBENCH_FAKE_PERF_LOG"
	if [ -n "$CNIBENCH_FAKE_PERF_UNFINISHED" ]; then
		echo "  WARNING: The perf.data file's data size field is 0 which is unexpected." >&2
		exit 0
	fi
	echo "10;iperf3;[k] veth_xmit"
	[ -z "$CNIBENCH_FAKE_PERF_EXTRA" ] || printf '%s\n' "$CNIBENCH_FAKE_PERF_EXTRA";;
esac
`

func withFakePerf(t *testing.T) (log string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "perf"), []byte(fakePerfScript), 0o755); err != nil {
		t.Fatal(err)
	}
	log = filepath.Join(dir, "log")
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("CNIBENCH_FAKE_PERF_LOG", log)
	return log
}

// waitPerfRecord waits up to 10 s for the fake perf to log its record.
func waitPerfRecord(t *testing.T, log string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(perfCalls(t, log), "record"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the fake perf logged no record within 10 s (log %q)", perfCalls(t, log))
		}
	}
}

func perfCalls(t *testing.T, log string) string {
	t.Helper()
	b, _ := os.ReadFile(log)
	return strings.Join(strings.Fields(string(b)), " ")
}

// loRecorder records on lo, where the test makes its own packets.
func loRecorder(t *testing.T, log string) *Recorder {
	t.Helper()
	m, err := DefaultMap()
	if err != nil {
		t.Fatal(err)
	}
	// The packets go once the window's start is read (readStart reads
	// the counters, then the segments), not once perf logs its record:
	// perf logs it before it acks the enable, and under load packets
	// sent then came before the counters were read ("no packets").
	read := make(chan struct{})
	var once sync.Once
	r := &Recorder{Map: m, Ifaces: []netns.Iface{{Name: "lo"}}}
	r.segmentOf = func(netns.Iface) (segment, error) {
		once.Do(func() { close(read) })
		return segment{PathMTU: 1500}, nil
	}
	// perf is the fake on PATH and lo is in every namespace: nothing
	// here can be missing, so a failed Start is the recorder's own.
	if err := r.Start(context.Background()); err != nil {
		t.Fatalf("start on lo with the fake perf: %v", err)
	}
	select {
	case <-read:
	case <-time.After(10 * time.Second):
		r.Close()
		t.Fatalf("the window's start was not read within 10 s (perf log %q)", perfCalls(t, log))
	}
	c, err := net.Dial("udp", "127.0.0.1:9")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for range 10 {
		_, _ = c.Write([]byte("x"))
	}
	return r
}

// Stop ends the recording alone; perf report, seconds at 100% of a core
// on a busy window, runs at Report, which the collectors call once every
// window (the CPU sampler's too) has closed.
func TestRecorderReportsAfterStop(t *testing.T) {
	log := withFakePerf(t)
	r := loRecorder(t, log)
	if err := r.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := perfCalls(t, log); got != "record" {
		t.Errorf("perf ran %q by Stop, want record alone", got)
	}
	dir := r.dir
	res, err := r.Report(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := perfCalls(t, log); got != "record report" {
		t.Errorf("perf ran %q, want record then report", got)
	}
	if res.Breakdown.ByComponent["veth"] != 10*float64(CPUClock.Period) || res.Metrics[MetricPackets] <= 0 {
		t.Errorf("result %+v", res)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("recording %s left after Report (%v)", dir, err)
	}
	if _, err := r.Report(context.Background()); err == nil {
		t.Error("a second Report succeeded")
	}
}

// A window stopped and never reported (the session ended between the
// two) is dropped by Close without running perf report.
func TestRecorderCloseDropsStopped(t *testing.T) {
	log := withFakePerf(t)
	r := loRecorder(t, log)
	if err := r.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	dir := r.dir
	r.Close()
	if got := perfCalls(t, log); got != "record" {
		t.Errorf("perf ran %q, want record alone", got)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("recording %s left after Close (%v)", dir, err)
	}
}

// On a kube node the agent measures pods' devices by namespace path
// (/proc/PID/ns/net): no run's namespace, which no cleanup searches, so
// perf runs in the agent's own, tied to the agent's session
// (proc.StartTied), not inside the pod where it outlived a killed
// session. Only a named namespace (a local run's pod) keeps it.
func TestPerfNetnsTiesPathNamespaces(t *testing.T) {
	for _, ns := range []string{"", "/proc/self/ns/net", "cnibench-no-such-netns"} {
		r := &Recorder{Ifaces: []netns.Iface{{Netns: ns, Name: "eth0"}}}
		if got := r.perfNetns(); got != "" {
			t.Errorf("device in %q: perf runs in %q, want this process's namespace (tied)", ns, got)
		}
	}
}

// resetControl forgets that perf refused the control options.
func resetControl() { noControl.Store(false) }

// perf spends about 150 ms building its record of the machine's threads
// before it samples, and the counters were read before it started: a 3 s
// window's costs were about 5% low. perf now starts with its events off
// and the counters are read once it says they are on, beside the window:
// Start does not wait for perf (it held every other collector's window
// closed for perf's start-up), Stop does. A perf without the control
// options (before 5.11: it exits at once saying so) is started again as
// before, and for the rest of the process.
func TestRecorderCountsFromEnable(t *testing.T) {
	for _, old := range []bool{false, true} {
		log := withFakePerf(t)
		if old {
			t.Setenv("CNIBENCH_FAKE_PERF_OLD", "1")
		}
		resetControl()
		t.Cleanup(resetControl)
		m, err := DefaultMap()
		if err != nil {
			t.Fatal(err)
		}
		// The window's start is the first read: Stop reads a segment
		// with no MSS again, by when the perf started again may have
		// logged its record (a flaky failure under CI's load).
		var atRead string
		reads := 0
		r := &Recorder{Map: m, Ifaces: []netns.Iface{{Name: "lo"}}}
		r.segmentOf = func(netns.Iface) (segment, error) {
			if reads++; reads == 1 {
				atRead = perfCalls(t, log)
			}
			return segment{PathMTU: 1500}, nil
		}
		if err := r.Start(context.Background()); err != nil {
			t.Fatalf("old perf %v: %v", old, err)
		}
		if old {
			// Without --control Start does not wait for perf (there is
			// no ack to wait for), and a TERM that came before the fake
			// set its trap killed it with no data written (a flaky
			// failure under CI's load): Stop once it logs its record,
			// which it does after the trap, as a real trial's seconds
			// of traffic let a real perf.
			waitPerfRecord(t, log)
		}
		if err := r.Stop(context.Background()); err != nil {
			t.Fatalf("old perf %v: stop: %v", old, err)
		}
		r.Close()
		switch {
		case !old && atRead != "record":
			t.Errorf("counters read before perf said it samples (perf log %q)", atRead)
		case old && (!noControl.Load() || atRead != ""):
			t.Errorf("a perf without --control: remembered %v, counters read at %q (want before it started)", noControl.Load(), atRead)
		}
	}
}

// Start does not wait for perf's start-up: a perf that takes seconds to
// be ready left the window closed that long for every collector after
// cpp. The fake perf is held until the test releases it, not slowed by
// a sleep against a time limit (under CI's load Start alone took over
// the second it had); Stop does wait for it.
func TestRecorderStartDoesNotWait(t *testing.T) {
	withFakePerf(t)
	release := filepath.Join(t.TempDir(), "release")
	t.Setenv("CNIBENCH_FAKE_PERF_HOLD", release)
	resetControl()
	t.Cleanup(resetControl)
	m, err := DefaultMap()
	if err != nil {
		t.Fatal(err)
	}
	r := &Recorder{Map: m, Ifaces: []netns.Iface{{Name: "lo"}}}
	r.segmentOf = func(netns.Iface) (segment, error) { return segment{PathMTU: 1500}, nil }
	// A Start that waits for perf returns only once this releases it.
	held := time.AfterFunc(10*time.Second, func() { _ = os.WriteFile(release, nil, 0o600) })
	if err := r.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A failure below leaves no fake perf waiting (Close ends it).
	t.Cleanup(func() { held.Stop(); _ = os.WriteFile(release, nil, 0o600); r.Close() })
	if !held.Stop() {
		t.Error("Start returned only once perf was released (10 s): it waited for perf")
	}
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := r.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	r.Close()
}

// Only perf's refusal of the options marks it old: its permission error
// ("... perf_event_paranoid, which controls use of ...") fails the
// window instead of starting perf again for the rest of the process.
func TestOldPerfIsItsOptionRefusal(t *testing.T) {
	for stderr, old := range map[string]bool{
		"Error: unknown option `control'\n\n Usage: perf record [<options>] [<command>]": true,
		"  Error: switch `D' expects a numerical value":                                  true,
		"Error:\nAccess to performance monitoring and observability operations is limited.\nConsider adjusting /proc/sys/kernel/perf_event_paranoid setting, which controls use of the performance events system": false,
	} {
		if got := oldPerf(stderr); got != old {
			t.Errorf("%q: old %v, want %v", stderr, got, old)
		}
	}
}

// A recording perf did not finish (killed while writing after SIGTERM)
// holds no sample, and perf report says so on stderr and exits 0: the
// window fails with perf's words, where its cost read 0 per packet.
func TestRecorderUnfinishedRecordingFails(t *testing.T) {
	log := withFakePerf(t)
	t.Setenv("CNIBENCH_FAKE_PERF_UNFINISHED", "1")
	r := loRecorder(t, log)
	if err := r.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	res, err := r.Report(context.Background())
	if err == nil || !strings.Contains(err.Error(), "no samples") || !strings.Contains(err.Error(), "data size field is 0") {
		t.Errorf("Report = %+v, %v; want an error quoting perf's warning", res, err)
	}
}

// perf record runs without its build-id pass and cache: by default it
// copies every binary its samples hit into ~/.debug (gigabytes after a
// few runs, left on the host) and spends seconds on it after SIGTERM.
func TestRecorderSkipsBuildIDs(t *testing.T) {
	log := withFakePerf(t)
	r := loRecorder(t, log)
	defer r.Close()
	if err := r.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(log + ".args")
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Fields(string(b))
	for _, want := range []string{"--no-buildid", "--no-buildid-cache"} {
		if !slices.Contains(args, want) {
			t.Errorf("perf record %q lacks %s", args, want)
		}
	}
}
