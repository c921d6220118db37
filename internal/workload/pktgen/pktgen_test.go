package pktgen

import (
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/study"
)

func flow() Flow {
	mac, _ := net.ParseMAC("02:42:ac:11:00:02")
	return Flow{Netns: "cli", Dev: "eth0", Src: net.ParseIP("10.244.1.2"), Dst: net.ParseIP("10.244.2.2"), DstMAC: mac,
		SrcPort: 40000, DstPort: 5201, Payload: 1472, Rate: 117.76e6, Duration: 2 * time.Second}
}

// The flow's pace and packets: 117.76 Mbit/s of 1472-byte payloads is
// 10000 packets a second, 20000 in 2 s, in 1514-byte frames.
func TestCommands(t *testing.T) {
	f := flow()
	if f.PPS() != 10000 || f.Count() != 20000 {
		t.Fatalf("pps %v count %v", f.PPS(), f.Count())
	}
	for _, name := range []string{"eth0", "eth0@3"} {
		cmds, err := f.Commands("kpktgend_1", name)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, c := range cmds {
			lines = append(lines, c.File+": "+c.Text)
		}
		got := strings.Join(lines, "\n")
		for _, want := range []string{
			"kpktgend_1: add_device " + name + "\n",
			": count 20000", ": pkt_size 1514", ": ratep 10000", ": dst 10.244.2.2",
			": dst_mac 02:42:ac:11:00:02", ": src_min 10.244.1.2", ": udp_dst_min 5201", ": udp_src_max 40000",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("commands lack %q:\n%s", want, got)
			}
		}
		// Every setting goes to the flow's own generator device.
		for _, l := range lines[1:] {
			if !strings.HasPrefix(l, name+": ") {
				t.Errorf("%q is not written to %s", l, name)
			}
		}
	}
}

// Flows that would send nothing sensible are refused before any write.
func TestCommandsRefuse(t *testing.T) {
	for name, edit := range map[string]func(*Flow){
		"no device":    func(f *Flow) { f.Dev = "" },
		"IPv6":         func(f *Flow) { f.Dst = net.ParseIP("fd00::1") },
		"no MAC":       func(f *Flow) { f.DstMAC = nil },
		"tiny payload": func(f *Flow) { f.Payload = 10 },
		"huge payload": func(f *Flow) { f.Payload = 70000 },
		"port 0":       func(f *Flow) { f.DstPort = 0 },
		"no rate":      func(f *Flow) { f.Rate = 0 },
		"no time":      func(f *Flow) { f.Duration = 0 },
	} {
		f := flow()
		edit(&f)
		if _, err := f.Commands("kpktgend_0", f.Dev); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// The generator's name is the flow's device, alone or with @K.
	for _, name := range []string{"eth1", "eth0x@1", "eth0@" + strings.Repeat("9", 30)} {
		f := flow()
		if _, err := f.Commands("kpktgend_0", name); err == nil {
			t.Errorf("generator %q for device eth0: accepted", name)
		}
	}
}

func TestParseResult(t *testing.T) {
	b, err := os.ReadFile("testdata/result.txt")
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseResult(b)
	if err != nil || s.Packets != 100000 || s.Errors != 0 || s.Elapsed != 15430*time.Microsecond ||
		s.Started != 623913381008*time.Microsecond || s.Stopped != 623913396439*time.Microsecond {
		t.Fatalf("%+v %v", s, err)
	}
	// Times that make no sense are left out, not an error: the run's
	// counts and elapsed time still hold.
	swapped := strings.Replace(string(b), "started: 623913381008us  stopped: 623913396439us", "started: 623913396439us  stopped: 623913381008us", 1)
	if s, err := ParseResult([]byte(swapped)); err != nil || s.Started != 0 || s.Stopped != 0 || s.Elapsed != 15430*time.Microsecond {
		t.Errorf("stopped before started: %+v %v", s, err)
	}
	bad := strings.Replace(string(b), "Result: OK: 15430(c15405+d25) usec", "Result: Idle", 1)
	if _, err := ParseResult([]byte(bad)); err == nil || !strings.Contains(err.Error(), "Idle") {
		t.Errorf("a run that did not finish: %v", err)
	}
	if _, err := ParseResult([]byte("Params: count 1\n")); err == nil {
		t.Error("a report without counters accepted")
	}
}

// Flows sent together were sending from the first start to the last
// stop: a thread that woke late does not shorten the window. Without
// both times from every report, the longest run stands in.
func TestWindow(t *testing.T) {
	at := func(start, stop time.Duration) Sent {
		return Sent{Elapsed: stop - start, Started: start, Stopped: stop}
	}
	s := time.Second
	for _, c := range []struct {
		sent []Sent
		want time.Duration
	}{
		{[]Sent{at(100*s, 103*s)}, 3 * s},
		{[]Sent{at(100*s, 103*s), at(100*s+50*time.Millisecond, 103*s+50*time.Millisecond)}, 3*s + 50*time.Millisecond},
		{[]Sent{at(100*s+50*time.Millisecond, 103*s), at(100*s, 102*s)}, 3 * s},
		{[]Sent{at(100*s, 103*s), {Elapsed: 2 * s}}, 3 * s},
		{[]Sent{{Elapsed: 2 * s}, {Elapsed: 3 * s}}, 3 * s},
		{nil, 0},
	} {
		if got := Window(c.sent); got != c.want {
			t.Errorf("%+v: window %v, want %v", c.sent, got, c.want)
		}
	}
}

// A device's report says it started once pktgen_run set its start
// time; one added for this run shows 0 until then.
func TestHasStarted(t *testing.T) {
	b, err := os.ReadFile("testdata/result.txt")
	if err != nil {
		t.Fatal(err)
	}
	fresh := strings.Replace(string(b), "started: 623913381008us  stopped: 623913396439us", "started: 0us  stopped: 0us", 1)
	if !HasStarted(b) || HasStarted([]byte(fresh)) || HasStarted([]byte("Params: count 1\n")) {
		t.Errorf("started: report %v, fresh device %v, no times %v; want true, false, false",
			HasStarted(b), HasStarted([]byte(fresh)), HasStarted([]byte("Params: count 1\n")))
	}
}

// FuzzParseResult: the device report is the kernel's text; nothing in it
// makes the parser panic, and an accepted run has a non-negative time.
func FuzzParseResult(f *testing.F) {
	b, _ := os.ReadFile("testdata/result.txt")
	f.Add(b)
	f.Add([]byte("pkts-sofar: 5 errors: 1\nResult: OK: 99999999999999999999(c1+d1) usec\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseResult(b)
		if err == nil && (s.Elapsed < 0 || s.Started < 0 || s.Stopped < s.Started || (s.Started == 0) != (s.Stopped == 0)) {
			t.Fatalf("elapsed %v, started %v, stopped %v", s.Elapsed, s.Started, s.Stopped)
		}
	})
}

// Flows take their namespace's threads in turn, only those on the flow's
// CPUs; a namespace sending several flows names their devices Dev@K.
func TestAssign(t *testing.T) {
	f := flow()
	pinned := flow()
	pinned.Netns, pinned.CPUs = "other", cpuset.Set{2, 3}
	threads := map[string][]int{"cli": {0, 1, 2, 3}, "other": {0, 1, 2, 3, 10}}
	gens, err := assign([]Flow{f, pinned, pinned, pinned}, threads)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range gens {
		got = append(got, g.Netns+":"+g.thread+":"+g.name)
	}
	want := []string{"cli:kpktgend_0:eth0", "other:kpktgend_2:eth0@0", "other:kpktgend_3:eth0@1", "other:kpktgend_2:eth0@2"}
	if !slices.Equal(got, want) {
		t.Fatalf("placed %q, want %q", got, want)
	}
	// Unpinned streams spread over every thread, kpktgend_10 after 3.
	f.Netns = "other"
	if gens, err = assign([]Flow{f, f, f, f, f}, threads); err != nil || gens[4].thread != "kpktgend_10" {
		t.Fatalf("fifth unpinned stream on %+v (%v), want kpktgend_10", gens, err)
	}
	// A CPU with no generator thread (offline, or past the machine's) is
	// refused, naming the CPUs asked and those there are.
	pinned.CPUs = cpuset.Set{7}
	_, err = assign([]Flow{pinned}, threads)
	if err == nil || !strings.Contains(err.Error(), "CPUs 7") || !strings.Contains(err.Error(), "0-3,10") {
		t.Fatalf("flow on CPU 7 of threads on 0-3,10: %v", err)
	}
}

// Study validation refuses the lengths a flow refuses, with bounds of its
// own (study cannot import this package): they must be the flow's.
func TestStudyPayloadBounds(t *testing.T) {
	for payload, ok := range map[int]bool{
		study.MinPktgenPayload - 1: false, study.MinPktgenPayload: true,
		study.MaxPktgenPayload: true, study.MaxPktgenPayload + 1: false,
	} {
		f := flow()
		f.Payload = payload
		if err := f.validate(); (err == nil) != ok {
			t.Errorf("payload %d: %v, want accepted %v", payload, err, ok)
		}
	}
}
