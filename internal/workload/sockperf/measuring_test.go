package sockperf

import (
	"context"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
	"github.com/cnibench/cnibench/internal/workload/workloadtest"
)

// printingPod is a client pod whose program prints its output a line at a
// time from a goroutine, as sockperf does over its run, and logs what
// happened in order.
type printingPod struct {
	workloadtest.RecPod
	out string
	log *events
}

type events struct {
	mu sync.Mutex
	ev []string
}

func (e *events) add(s string) { e.mu.Lock(); e.ev = append(e.ev, s); e.mu.Unlock() }
func (e *events) all() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.ev...)
}

func (p *printingPod) StartWatched(ctx context.Context, argv []string, line func(string)) (engine.Process, error) {
	pr := &printed{done: make(chan struct{}), out: p.out}
	go func() {
		defer close(pr.done)
		for l := range strings.Lines(p.out) {
			l = strings.TrimSuffix(l, "\n")
			if l == testStarts {
				p.log.add("client prints: " + l)
			}
			line(l)
			time.Sleep(time.Millisecond) // give a Started called too early its chance
		}
	}()
	return pr, nil
}

type printed struct {
	out  string
	done chan struct{}
}

func (p *printed) Wait() ([]byte, []byte, error) { <-p.done; return []byte(p.out), nil, nil }
func (p *printed) Stop()                         {}

// TestStartedWhenMeasuring: the measured window opens when every client
// prints that its test starts, not when it starts: sockperf sleeps two
// seconds between the two.
func TestStartedWhenMeasuring(t *testing.T) {
	out, err := os.ReadFile("testdata/tcp-64-client.txt")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "\n"+testStarts+"\n") {
		t.Fatalf("captured output lacks %q", testStarts)
	}
	log := &events{}
	var pairs []workload.Pair
	for i := range 2 {
		srv := &workloadtest.RecPod{PodIP: net.IPv4(10, 244, 1, byte(5+i))}
		cli := &printingPod{RecPod: workloadtest.RecPod{PodIP: net.IPv4(10, 244, 2, byte(5+i))}, out: string(out), log: log}
		pairs = append(pairs, workload.Pair{Server: srv, Client: engine.Front(cli, net.IPv4(10, 96, 0, 1))})
	}
	tr := workload.Trial{Pairs: pairs, Duration: 2 * time.Second, BasePort: 5201,
		Spec:    study.Workload{Tool: "sockperf", Protocol: "tcp", MessageSize: 64},
		Started: func(time.Time) { log.add("started") }}
	if _, err := New().Run(context.Background(), tr); err != nil {
		t.Fatal(err)
	}
	want := []string{"client prints: " + testStarts, "client prints: " + testStarts, "started"}
	if got := log.all(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("events %q, want %q", got, want)
	}
}
