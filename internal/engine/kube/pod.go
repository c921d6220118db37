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

// Pod is a workload pod. IP is the address clients use: the Service's
// ClusterIP for server pods (as the paper addressed its servers), the
// pod IP otherwise.
type Pod struct {
	ns, name, node string
	ip             net.IP
	podIP          net.IP
	exec           Execer
}

var _ engine.Pod = (*Pod)(nil)

func (p *Pod) Name() string { return p.name }
func (p *Pod) Node() string { return p.node }
func (p *Pod) IP() net.IP   { return p.ip }

// PodIP is the pod's own address.
func (p *Pod) PodIP() net.IP { return p.podIP }

// Start execs argv in the pod through `cnibench agent exec`, which ends
// the program when Stop closes the exec's stdin.
func (p *Pod) Start(ctx context.Context, argv []string) (engine.Process, error) {
	return startExec(ctx, p.exec, p.ns, p.name, "main", argv), nil
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

func startExec(ctx context.Context, ex Execer, ns, pod, container string, argv []string) *process {
	pr, pw := io.Pipe()
	p := &process{argv: argv, stdinW: pw, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		err := ex.Exec(ctx, ns, pod, container, shimArgv(argv), pr, &p.stdout, &p.stderr)
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
