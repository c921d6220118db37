package workloadtest

import (
	"context"
	"net"
	"sync"

	"github.com/cnibench/cnibench/internal/engine"
)

// RecPod is a fake pod for drivers' argv tests: it records the argument
// vectors it is started with. With Reply nil a program runs until its
// context ends or it is stopped (a server); otherwise it exits at once,
// having printed Reply (a client). Addr and FrontIP make it look like a
// pod behind a Service (the kube engine's pods).
type RecPod struct {
	PodName string
	PodIP   net.IP
	Front   net.IP
	Address string
	Reply   []byte

	mu    sync.Mutex
	argvs [][]string
}

func (p *RecPod) Name() string {
	if p.PodName == "" {
		return "p"
	}
	return p.PodName
}
func (p *RecPod) Node() string    { return "n" }
func (p *RecPod) IP() net.IP      { return p.PodIP }
func (p *RecPod) Addr() string    { return p.Address }
func (p *RecPod) FrontIP() net.IP { return p.Front }

// Argvs returns the argument vectors started so far.
func (p *RecPod) Argvs() [][]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([][]string(nil), p.argvs...)
}

// Start implements engine.Pod.
func (p *RecPod) Start(ctx context.Context, argv []string) (engine.Process, error) {
	p.mu.Lock()
	p.argvs = append(p.argvs, argv)
	p.mu.Unlock()
	pr := &recProc{out: p.Reply, done: make(chan struct{})}
	if p.Reply == nil {
		go func() { <-ctx.Done(); pr.Stop() }()
	} else {
		pr.Stop()
	}
	return pr, nil
}

type recProc struct {
	out  []byte
	once sync.Once
	done chan struct{}
}

func (f *recProc) Wait() ([]byte, []byte, error) { <-f.done; return f.out, nil, nil }
func (f *recProc) Stop()                         { f.once.Do(func() { close(f.done) }) }
