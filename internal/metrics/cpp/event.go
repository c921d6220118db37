package cpp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/proc"
)

// Event is what perf record samples and the unit a sample is worth.
//
// Hardware cycles are what seed 004 reported, but most VMs do not pass
// the PMU through (perf stat says "<not supported>"), so the event is
// chosen per run by trying (ChooseEvent): cycles where the machine
// counts them, else the cpu-clock software timer, whose samples are
// nanoseconds of CPU time. The two are different quantities and get
// different metric names and units, never one for the other.
type Event struct {
	// Name is perf's event name (-e).
	Name string `json:"name"`
	// Period is perf record -c: one sample per Period units of the event.
	Period int `json:"period"`
	// Unit is what a sample period counts: UnitNs or UnitCycles. Metric
	// names end in "_" + Unit.
	Unit string `json:"unit"`
	// Reason says why the event was chosen (for env.json notes).
	Reason string `json:"reason,omitempty"`
}

// Units of CPU cost.
const (
	UnitNs     = "ns"
	UnitCycles = "cycles"
)

// The two events. cpu-clock's period is in ns of CPU time: 1 ms, one
// sample per ms per busy CPU. cycles' period is 2M cycles, about one
// sample per ms at 2 GHz, so both cost perf about the same.
var (
	CPUClock = Event{Name: "cpu-clock", Period: DefaultPeriodNs, Unit: UnitNs}
	Cycles   = Event{Name: "cycles", Period: 2_000_000, Unit: UnitCycles}
)

// RunFunc runs argv and returns what it printed (stdout and stderr); it
// is injected so the choice can be tested without perf.
type RunFunc func(ctx context.Context, argv []string) ([]byte, error)

// RunPerf runs argv on this machine (in cnibench's own namespace).
func RunPerf(ctx context.Context, argv []string) ([]byte, error) {
	p, err := proc.Start(ctx, "", nil, argv)
	if err != nil {
		return nil, err
	}
	out, stderr, err := p.Wait()
	return append(out, stderr...), err
}

// StatArgv is the probe: count cycles on every CPU while `true` runs,
// with perf stat's ";"-separated output (commas are not quoted in it,
// so perf's manual recommends another separator).
func StatArgv() []string {
	return []string{"perf", "stat", "-a", "-x", ";", "-e", Cycles.Name, "--", "true"}
}

// RecordProbeArgv samples cycles on every CPU, at the period trials
// use, while `true` runs, writing to out.
func RecordProbeArgv(out string) []string {
	return append(append([]string{"perf", "record", "-q", "-a"}, noBuildIDs...),
		"-e", Cycles.Name, "-c", strconv.Itoa(Cycles.Period), "-o", out, "--", "true")
}

// noBuildIDs keeps perf record from its build-id pass and cache. By
// default, once sampling ends, perf record reads every sample again to
// find the binaries they hit and copies each (the kernel's symbols, the
// workload tools, every test binary) into ~/.debug: gigabytes left on
// the host after a few runs, and seconds of writing after SIGTERM, past
// the grace after which Stop kills perf and its perf.data stays
// unfinished (a header with no data). perf report reads the running
// kernel's symbols and the binaries at their paths at once, on the same
// machine, so it needs neither.
var noBuildIDs = []string{"--no-buildid", "--no-buildid-cache"}

func firstLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// ProbeTemp names the sampling probe's temporary directory
// (journal.OwnTempPattern).
const ProbeTemp = "perf-probe"

// ChooseEvent probes whether hardware cycles are countable here and
// returns Cycles if so, else CPUClock; Reason says which and why. It
// never fails: any trouble with the probe means cpu-clock, with the
// trouble in Reason.
func ChooseEvent(ctx context.Context, run RunFunc) Event {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	argv := StatArgv()
	cmd := strings.Join(argv, " ")
	out, runErr := run(ctx, argv)
	st, err := ParseStat(out, Cycles.Name)
	ev := CPUClock
	switch {
	case err != nil && runErr != nil:
		ev.Reason = fmt.Sprintf("hardware cycles could not be probed (%s: %v: %v); sampling cpu-clock, costs in ns of CPU time", cmd, runErr, err)
	case err != nil:
		ev.Reason = fmt.Sprintf("hardware cycles could not be probed (%s: %v); sampling cpu-clock, costs in ns of CPU time", cmd, err)
	case st.Countable:
		// Counting is not sampling: some virtual PMUs count cycles but
		// deliver no overflow interrupts, and perf record then fails.
		// Try the sampling a trial will do before choosing it.
		// Named after this process (pid and start time), so that
		// `cnibench cleanup` removes it should the process be killed
		// before the deferred RemoveAll (journal.DeadOwnTemps).
		dir, derr := os.MkdirTemp("", journal.OwnTempPattern(ProbeTemp))
		if derr != nil {
			ev.Reason = fmt.Sprintf("hardware cycles are countable (%s) but the sampling probe could not start (%v); sampling cpu-clock, costs in ns of CPU time", cmd, derr)
			break
		}
		defer os.RemoveAll(dir)
		rec := RecordProbeArgv(filepath.Join(dir, "perf.data"))
		if out, rerr := run(ctx, rec); rerr != nil {
			ev.Reason = fmt.Sprintf("hardware cycles are countable (%s counted %.0f) but cannot be sampled here (%s: %v: %s); sampling cpu-clock, costs in ns of CPU time",
				cmd, st.Value, strings.Join(rec, " "), rerr, firstLine(out))
			break
		}
		ev = Cycles
		ev.Reason = fmt.Sprintf("hardware cycles are countable here (%s counted %.0f) and can be sampled; sampling cycles, costs in cycles", cmd, st.Value)
	default:
		ev.Reason = fmt.Sprintf("hardware cycles are not countable here (%s: %s); sampling cpu-clock, costs in ns of CPU time", cmd, st.Reason)
	}
	return ev
}

// Stat is what perf stat said about one event.
type Stat struct {
	// Countable: no line said "<not supported>", none was restricted by
	// a modifier perf added, and the counts add up above zero (on a
	// hybrid CPU one PMU may count nothing while `true` runs).
	Countable bool
	// Value is the sum of the counted values.
	Value float64
	// Reason is perf's verdict when not countable ("<not supported>",
	// "<not counted>", "counted 0").
	Reason string
}

// ParseStat reads `perf stat -x ';' -e EVENT` output for event. Fields
// (perf-stat(1), CSV FORMAT): counter value; unit; event name; run time;
// percentage of time counted; metric value; metric unit. The value is a
// number or "<not supported>" / "<not counted>". The event field may
// carry modifiers perf added ("cycles:u" when it fell back to user-only
// counting) or a PMU (hybrid CPUs: "cpu_core/cycles/", "cpu_atom/cycles/"),
// one line each. An error means perf printed no line for the event
// (perf failed; the error quotes its first line).
func ParseStat(out []byte, event string) (Stat, error) {
	var st Stat
	found := false
	var first, restricted string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if first == "" {
			first = line
		}
		f := strings.Split(line, ";")
		if len(f) < 3 || !sameEvent(strings.TrimSpace(f[2]), event) {
			continue
		}
		v := strings.TrimSpace(f[0])
		found = true
		if name := strings.TrimSpace(f[2]); strings.Contains(strings.TrimSuffix(name, "/"), ":") {
			// perf fell back to part of the event ("cycles:u": user
			// space only, when kernel profiling is not allowed); CPP
			// needs the kernel's cycles.
			restricted = name
		}
		switch {
		case strings.HasPrefix(v, "<") && strings.HasSuffix(v, ">"):
			if st.Reason == "" || v == "<not supported>" {
				st.Reason = v + " (" + strings.TrimSpace(f[2]) + ")"
			}
		default:
			n, err := strconv.ParseFloat(v, 64)
			if err != nil || n < 0 || n != n || n > 1e300 {
				return Stat{}, fmt.Errorf("perf stat: %s: bad count %q", event, clip(v))
			}
			st.Value += n
		}
	}
	if err := sc.Err(); err != nil {
		return Stat{}, fmt.Errorf("perf stat output: %w", err)
	}
	if math.IsInf(st.Value, 0) {
		return Stat{}, fmt.Errorf("perf stat: %s: counts overflow", event)
	}
	if !found {
		if first == "" {
			return Stat{}, errors.New("perf stat printed nothing")
		}
		return Stat{}, fmt.Errorf("perf stat printed no count of %s: %q", event, clip(first))
	}
	switch {
	case strings.HasPrefix(st.Reason, "<not supported>"):
	case restricted != "":
		st.Reason = "perf counted only " + restricted + ", not the kernel's cycles"
	case st.Value > 0:
		st.Countable, st.Reason = true, ""
	case st.Reason == "":
		st.Reason = "counted 0"
	}
	return st, nil
}

// sameEvent reports whether perf's event field names event: exactly,
// with modifiers ("cycles:u"), or on a PMU ("cpu_core/cycles/").
func sameEvent(field, event string) bool {
	if field == event || strings.HasPrefix(field, event+":") {
		return true
	}
	if i := strings.IndexByte(field, '/'); i > 0 {
		rest := strings.TrimSuffix(field[i+1:], "/")
		return rest == event || strings.HasPrefix(rest, event+":")
	}
	return false
}
