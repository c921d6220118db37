package cpp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/metrics/ifstats"
)

// Why perf is started disabled: perf record -a builds its record of the
// machine's running threads before it samples, about 150 ms on an idle
// machine (more under load), while the packet counters were read before
// it started. A window of 3 s (the quick profiles') then divided the
// samples of 2.85 s by the packets of 3: every cost per packet about 5%
// low. Started with its events off (-D -1) and a control FIFO, perf is
// told to enable them once it is ready, says so (ack), and only then are
// the counters read. Start does not wait for that (it would hold every
// other collector's window closed for perf's start-up): it happens
// beside the window, and Stop waits for it. A perf without the control
// options exits at once saying so; then it is started again as before.

// perfReady bounds how long perf may take to get ready and answer.
const perfReady = 30 * time.Second

// noControl is set once a perf refused the control options (perf before
// 5.11, which says so: oldPerf): later windows of the process start perf
// as before. Only that refusal sets it: a perf that exited for another
// reason fails its window, and the next tries again.
var noControl atomic.Bool

// errOldPerf is a perf that refused -D -1 or --control.
var errOldPerf = errors.New("perf does not take -D -1 --control (perf before 5.11)")

// oldPerf says whether perf's stderr, as it exited before it opened its
// control FIFO, refuses the control options.
func oldPerf(stderr string) bool {
	// perf's option parser: "Error: unknown option `control'", "switch
	// `D' expects ...". Not "control" alone: its permission error says
	// perf_event_paranoid "controls use of the performance events".
	for _, s := range []string{"unknown option", "unknown switch", "`D'", "`control'"} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return false
}

// begun is what a window's start read once perf sampled: the counters,
// segments and flows of its devices; and perf, where it had to be
// started again without the control options.
type begun struct {
	before []ifstats.Counters
	segs   []segment
	flows  []flows
	perf   engine.Process
	err    error
}

// startControlled starts argv (perf record) with its events off and a
// control FIFO in the recording's directory, and returns at once; what
// comes on r.begun is the window's start, read once perf said its events
// are on.
func (r *Recorder) startControlled(ctx context.Context, argv []string) error {
	ctl, ack := filepath.Join(r.dir, "ctl.fifo"), filepath.Join(r.dir, "ack.fifo")
	for _, f := range []string{ctl, ack} {
		if err := syscall.Mkfifo(f, 0o600); err != nil {
			return fmt.Errorf("perf control FIFO: %w", err)
		}
	}
	p, err := r.start(ctx, append(argv, "-D", "-1", "--control", "fifo:"+ctl+","+ack))
	if err != nil {
		return err
	}
	r.perf = p
	r.begun = make(chan begun, 1)
	go func(out chan<- begun) {
		err := enable(ctx, p, ctl, ack)
		switch {
		case errors.Is(err, errOldPerf):
			// As perf was started before: the counters, then perf.
			noControl.Store(true)
			b := r.readStart()
			if b.err == nil {
				b.perf, b.err = r.start(ctx, argv)
			}
			out <- b
		case err != nil:
			out <- begun{err: err}
		default:
			out <- r.readStart()
		}
	}(r.begun)
	return nil
}

// readStart reads the window's start on every measured device.
func (r *Recorder) readStart() begun {
	var b begun
	for _, ifc := range r.Ifaces {
		c, err := ifstats.Read(ifc)
		if err != nil {
			return begun{err: err}
		}
		b.before = append(b.before, c)
	}
	b.segs = make([]segment, len(r.Ifaces))
	r.readSegmentsInto(b.segs)
	b.flows = r.readAllFlows()
	return b
}

// enable sends perf the enable command once it has opened its control
// FIFO and waits for its ack.
func enable(ctx context.Context, p engine.Process, ctl, ack string) error {
	exited := make(chan struct{})
	go func() { p.Wait(); close(exited) }()
	deadline := time.Now().Add(perfReady)
	// perf opens both FIFOs read-write (evlist__parse_control_fifo) as
	// it parses its options: until it has, a writer's open finds no
	// reader (ENXIO).
	var w *os.File
	for {
		f, err := os.OpenFile(ctl, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			w = f
			break
		}
		select {
		case <-exited:
			_, stderr, _ := p.Wait()
			if oldPerf(string(stderr)) {
				return errOldPerf
			}
			return fmt.Errorf("perf exited before it opened its control FIFO: %s", clip(string(stderr)))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("perf did not open its control FIFO within %v", perfReady)
		}
	}
	defer w.Close()
	a, err := os.OpenFile(ack, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return fmt.Errorf("perf ack FIFO: %w", err)
	}
	defer a.Close()
	if _, err := w.WriteString("enable\n"); err != nil {
		return fmt.Errorf("perf control: %w", err)
	}
	if err := a.SetReadDeadline(deadline); err != nil {
		return fmt.Errorf("perf ack FIFO: %w", err)
	}
	line, err := bufio.NewReader(a).ReadString('\n')
	if err != nil || line != "ack\n" {
		return fmt.Errorf("perf did not acknowledge enabling its events (%q): %v", line, err)
	}
	return nil
}
