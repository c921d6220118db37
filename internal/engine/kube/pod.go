package kube

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"sync"

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
// the program when Stop closes the exec's stdin.
func (p *Pod) Start(ctx context.Context, argv []string) (engine.Process, error) {
	return startExec(ctx, p.exec, p.ns, p.name, "main", argv, nil), nil
}

// StartWatched implements engine.Watcher: the exec's stdout streams as
// the program prints it.
func (p *Pod) StartWatched(ctx context.Context, argv []string, line func(string)) (engine.Process, error) {
	return startExec(ctx, p.exec, p.ns, p.name, "main", argv, line), nil
}

// shimArgv wraps argv in the stop-on-stdin-EOF shim.
func shimArgv(argv []string) []string {
	return append([]string{BinPath, "agent", "exec", "--"}, argv...)
}

type process struct {
	argv           []string
	stdinW         *io.PipeWriter
	stdout, stderr bytes.Buffer
	done           chan struct{}
	err            error
	stopOnce       sync.Once
}

func startExec(ctx context.Context, ex Execer, ns, pod, container string, argv []string, line func(string)) *process {
	pr, pw := io.Pipe()
	p := &process{argv: argv, stdinW: pw, done: make(chan struct{})}
	var stdout io.Writer = &p.stdout
	if line != nil {
		stdout = io.MultiWriter(&p.stdout, engine.NewLines(line))
	}
	go func() {
		defer close(p.done)
		err := ex.Exec(ctx, ns, pod, container, shimArgv(argv), pr, stdout, &p.stderr)
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
