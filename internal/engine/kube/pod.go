package kube

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"

	"github.com/cnibench/cnibench/internal/engine"
)

// Pod is a workload pod. IP is its own address (servers bind to it);
// clients are given Addr: for server pods the Service's DNS name or
// ClusterIP (see dns.go), as the paper addressed its servers, for other
// pods their own address.
type Pod struct {
	ns, name, node string
	ip             net.IP
	// front is the Service's ClusterIP and addr what clients are given;
	// both empty for pods without a Service.
	front net.IP
	addr  string
	exec  Execer
	// oldShim: the image's `agent exec` predates the start mark (startMarked).
	oldShim atomic.Bool
}

var (
	_ engine.Pod     = (*Pod)(nil)
	_ engine.Fronted = (*Pod)(nil)
	_ engine.Helper  = (*Pod)(nil)
)

// HelperArgv runs `cnibench agent ARGS...` from the image.
func (p *Pod) HelperArgv(args ...string) []string {
	return append([]string{BinPath, "agent"}, args...)
}

func (p *Pod) Name() string { return p.name }
func (p *Pod) Node() string { return p.node }
func (p *Pod) IP() net.IP   { return p.ip }

// Addr is the Service's DNS name or ClusterIP, else the pod's address.
func (p *Pod) Addr() string {
	if p.addr != "" {
		return p.addr
	}
	return p.ip.String()
}

// FrontIP is the Service's ClusterIP, else the pod's address.
func (p *Pod) FrontIP() net.IP {
	if p.front != nil {
		return p.front
	}
	return p.ip
}

// Start execs argv in the pod through `cnibench agent exec`, which ends
// the program when Stop closes the exec's stdin. It returns once the
// program runs there (the shim's start mark, startMarked), as the local
// engine's Start returns after fork and exec: drivers open the metric
// window when Start returns, and the exec's trip through the API server,
// the kubelet and the runtime (0.1-0.5 s) must not fall inside it.
func (p *Pod) Start(ctx context.Context, argv []string) (engine.Process, error) {
	return p.start(ctx, argv, nil)
}

// StartWatched implements engine.Watcher: the exec's stdout streams as
// the program prints it. It returns when Start does.
func (p *Pod) StartWatched(ctx context.Context, argv []string, line func(string)) (engine.Process, error) {
	return p.start(ctx, argv, line)
}

func (p *Pod) start(ctx context.Context, argv []string, line func(string)) (engine.Process, error) {
	proc, err := startMarked(ctx, p.exec, target{p.ns, p.name, "main"}, argv, line, &p.oldShim)
	if err != nil {
		return nil, err // no typed nil in the interface
	}
	return proc, nil
}

// target is where an exec runs.
type target struct{ ns, pod, container string }

type process struct {
	argv           []string
	stdinW         *io.PipeWriter
	stdout, stderr bytes.Buffer
	// started is closed when the shim's start mark came (never without
	// a mark); cancel ends the exec's stream.
	started  chan struct{}
	cancel   context.CancelFunc
	done     chan struct{}
	err      error
	stopOnce sync.Once
}

// startExec runs shim (argv in the shim) in t and returns at once; with
// a mark, the mark is taken out of stderr and closes started when it
// comes.
func startExec(ctx context.Context, ex Execer, t target, argv, shim []string, line func(string), mark string) *process {
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(ctx)
	p := &process{argv: argv, stdinW: pw, started: make(chan struct{}), cancel: cancel, done: make(chan struct{})}
	var stdout io.Writer = &p.stdout
	if line != nil {
		stdout = io.MultiWriter(&p.stdout, engine.NewLines(line))
	}
	var stderr io.Writer = &p.stderr
	var mw *markWriter
	if mark != "" {
		mw = newMarkWriter(&p.stderr, mark, func() { close(p.started) })
		stderr = mw
	}
	go func() {
		defer close(p.done)
		defer cancel()
		err := ex.Exec(ctx, t.ns, t.pod, t.container, shim, pr, stdout, stderr)
		if mw != nil {
			mw.flush() // a held tail that was not the mark after all
		}
		p.Stop() // ends the stream's stdin copy with EOF
		if err != nil {
			p.err = &engine.ExitError{Argv: argv, Err: err}
		}
	}()
	return p
}

// Wait implements engine.Process.
func (p *process) Wait() ([]byte, []byte, error) {
	<-p.done
	if p.err != nil {
		var ee *engine.ExitError
		if errors.As(p.err, &ee) {
			ee.Stdout, ee.Stderr = p.stdout.Bytes(), p.stderr.Bytes()
		}
	}
	return p.stdout.Bytes(), p.stderr.Bytes(), p.err
}

// Stop implements engine.Process: closing stdin makes the shim stop the
// program (SIGTERM, then SIGKILL).
func (p *process) Stop() {
	p.stopOnce.Do(func() { p.stdinW.Close() })
}
