package cpp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cnibench/cnibench/internal/engine"
)

// Why perf is started disabled: perf record -a builds its record of the
// machine's running threads before it samples, about 150 ms on an idle
// machine (more under load), while the packet counters were read before
// it started. A window of 3 s (the quick profiles') then divided the
// samples of 2.85 s by the packets of 3: every cost per packet about 5%
// low. Started with its events off (-D -1) and a control FIFO, perf is
// told to enable them once it is ready, says so (ack), and only then are
// the counters read.

// perfReady bounds how long perf may take to get ready and answer.
const perfReady = 30 * time.Second

// noControl is set once a perf has refused the control options (perf
// before 5.11): later windows start perf as before, without waiting.
var noControl atomic.Bool

// errNoControl is a perf that exited before it opened its control FIFO.
var errNoControl = errors.New("perf exited before it opened its control FIFO")

// startEnabled starts argv (perf record) with its events off, enables
// them and returns once perf says they are on. A perf without the
// control options is started as it was before (see noControl).
func (r *Recorder) startEnabled(ctx context.Context, argv []string) (engine.Process, error) {
	if noControl.Load() {
		return r.start(ctx, argv)
	}
	ctl, ack := filepath.Join(r.dir, "ctl.fifo"), filepath.Join(r.dir, "ack.fifo")
	for _, f := range []string{ctl, ack} {
		if err := syscall.Mkfifo(f, 0o600); err != nil {
			return nil, fmt.Errorf("perf control FIFO: %w", err)
		}
	}
	p, err := r.start(ctx, append(argv, "-D", "-1", "--control", "fifo:"+ctl+","+ack))
	if err != nil {
		return nil, err
	}
	err = enable(ctx, p, ctl, ack)
	if errors.Is(err, errNoControl) {
		noControl.Store(true)
		return r.start(ctx, argv)
	}
	if err != nil {
		p.Stop()
		_, stderr, _ := p.Wait()
		return nil, fmt.Errorf("%w: %s", err, clip(string(stderr)))
	}
	return p, nil
}

// enable sends perf the enable command once it has opened its control
// FIFO and waits for its ack.
func enable(ctx context.Context, p engine.Process, ctl, ack string) error {
	exited := make(chan struct{})
	go func() { p.Wait(); close(exited) }()
	deadline := time.Now().Add(perfReady)
	// perf opens both FIFOs read-write: until it has, a writer's open
	// finds no reader (ENXIO).
	var w *os.File
	for {
		f, err := os.OpenFile(ctl, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			w = f
			break
		}
		select {
		case <-exited:
			return errNoControl
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
