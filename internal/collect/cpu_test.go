package collect

import (
	"context"
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/metrics"
	"github.com/cnibench/cnibench/internal/results"
)

// coreKernel's CPU window has one core, numbered as given; stopErr
// fails its Stop.
type coreKernel struct {
	fakeKernel
	cpu     int
	stopErr error
}

func (k *coreKernel) CPU() engine.Sampler { return coreSampler{k.cpu, k.stopErr} }

type coreSampler struct {
	cpu int
	err error
}

func (coreSampler) Start() error { return nil }
func (s coreSampler) Stop() (metrics.Window, error) {
	return metrics.Window{Cores: []results.CoreStat{{CPU: s.cpu}}}, s.err
}

// The client node's cores are sampled when it runs a kernel of its own
// (a cluster's), not when the nodes share one (its cores are the
// server's window then); a client window that fails is a warning, not a
// failed trial.
func TestCPUCollectorClientNode(t *testing.T) {
	for _, c := range []struct {
		name      string
		shared    bool
		clientErr error
		want      []results.CoreStat
		warnings  int
	}{
		{"one kernel", true, nil, nil, 0},
		{"client's own kernel", false, nil, []results.CoreStat{{CPU: 7}}, 0},
		{"client's window failed", false, errors.New("agent gone"), nil, 1},
	} {
		kernels := map[string]engine.Kernel{"srv": &coreKernel{cpu: 3}, "cli": &coreKernel{cpu: 7, stopErr: c.clientErr}}
		r, err := window(t, cpuEntry, Trial{Cluster: namedCluster{}, SharedKernel: c.shared, Kernel: func(n engine.Node) engine.Kernel { return kernels[n.Name()] }})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if r.CPU == nil || len(r.CPU.Cores) != 1 || r.CPU.Cores[0].CPU != 3 {
			t.Errorf("%s: server window %+v, want core 3", c.name, r.CPU)
		}
		var got []results.CoreStat
		if r.Client != nil {
			got = r.Client.Cores
		}
		if len(got) != len(c.want) || (len(c.want) > 0 && got[0].CPU != c.want[0].CPU) || len(r.Warnings) != c.warnings {
			t.Errorf("%s: client cores %+v, warnings %q; want %+v and %d warning(s)", c.name, got, r.Warnings, c.want, c.warnings)
		}
	}
}

// The cpu collector's description names only softirqs the window
// records: each NET_* it names has a per-core rate in results.CoreStat
// (NET_RX: net_rx_softirqs_per_s).
func TestCPUDescriptionSoftirqs(t *testing.T) {
	tags := map[string]bool{}
	ct := reflect.TypeOf(results.CoreStat{})
	for i := range ct.NumField() {
		tags[strings.Split(ct.Field(i).Tag.Get("json"), ",")[0]] = true
	}
	named := regexp.MustCompile(`NET_[A-Z]+`).FindAllString(cpuEntry.Description, -1)
	if len(named) == 0 {
		t.Fatal("the description names no softirq")
	}
	for _, n := range named {
		if tag := strings.ToLower(n) + "_softirqs_per_s"; !tags[tag] {
			t.Errorf("description names %s, but cores have no %s", n, tag)
		}
	}
}

// window runs a collector of the entry over one window of the trial:
// New and Start must succeed; Stop's result and error are returned.
func window(t *testing.T, e Entry, tr Trial) (Result, error) {
	t.Helper()
	c, err := e.New(tr)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c.Stop(context.Background())
}
