package local

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/cniexec"
	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/engine"
)

// detachFails is a datapath whose pods cannot be wired (AttachPod fails)
// and whose pod state cannot be undone (DetachPod returns detach).
type detachFails struct {
	closes
	detach error
}

func (detachFails) AttachPod(datapath.Node, datapath.Pod) (datapath.Attachment, error) {
	return datapath.Attachment{}, errors.New("add route: no space left on device")
}

func (d detachFails) DetachPod(datapath.Node, datapath.Pod) error { return d.detach }

// fakeNetns makes netns.Add succeed creating nothing, and netns.Delete
// return del deleting nothing, for the test: no namespace is touched.
func fakeNetns(t *testing.T, del error) {
	t.Helper()
	add, rm := netnsAdd, netnsDelete
	netnsAdd = func(string) error { return nil }
	netnsDelete = func(string) error { return del }
	t.Cleanup(func() { netnsAdd, netnsDelete = add, rm })
}

// podCluster is a cluster of two nodes on datapath d, built by hand
// (no namespace), each node with pods pods already.
func podCluster(d datapath.Datapath, pods int) *Cluster {
	c := &Cluster{cfg: Config{RunID: "abc123", Datapath: d}}
	c.server = &Node{cluster: c, name: ServerNode, index: 0, ns: c.nsName("node-server")}
	c.client = &Node{cluster: c, name: ClientNode, index: 1, ns: c.nsName("node-client")}
	for _, n := range c.Nodes() {
		for len(n.pods) < pods {
			name := c.podName(n)
			n.pods = append(n.pods, &Pod{node: n, name: name, index: len(n.pods), ns: c.nsName(name)})
		}
	}
	return c
}

// A Scale whose own cleanup failed, of a pod it could not wire (its
// datapath state or namespace left) or of a pod it scaled down, says
// so: engine.ErrLeftBehind, on which the runner ends the run. Before,
// the error was plain, and the runner, taking it for a set-up undone,
// made the pods again beside the leftover (the same pod names: srv0)
// and gave up every later replica count as they failed on it. One
// whose failure made nothing (a namespace that could not be created) is
// not marked: it may be tried again.
func TestScaleSaysWhatItLeft(t *testing.T) {
	ebusy := errors.New("umount: device or resource busy")
	for _, tc := range []struct {
		name       string
		d          detachFails
		pods, to   int
		del        error
		failAdd    bool
		want       string
		leftBehind bool
	}{
		{name: "pod not wired, its state not undone", d: detachFails{detach: errors.New("del-flows: timed out")}, to: 1,
			want: "del-flows: timed out", leftBehind: true},
		{name: "pod not wired, nothing of it undone", d: detachFails{detach: errors.New("del-flows: timed out")}, to: 1, del: ebusy,
			want: "device or resource busy", leftBehind: true},
		{name: "pod not deleted on scaling down", pods: 2, to: 1, del: ebusy, want: "device or resource busy", leftBehind: true},
		{name: "namespace not made", to: 1, failAdd: true, want: "operation not permitted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fakeNetns(t, tc.del)
			if tc.failAdd {
				failAdd(t)
			}
			c := podCluster(tc.d, tc.pods)
			_, _, err := c.Scale(context.Background(), tc.to)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Scale(%d) = %v; want its error saying %q", tc.to, err, tc.want)
			}
			if errors.Is(err, engine.ErrLeftBehind) != tc.leftBehind {
				t.Errorf("Scale(%d) = %v: left behind %v, want %v", tc.to, err, !tc.leftBehind, tc.leftBehind)
			}
		})
	}
}

// cniDelegate is a datapath wired through the reference plugins
// (datapath.CNIDelegate), for a faked CNI runtime.
type cniDelegate struct{ closes }

func (cniDelegate) CNIPlugins() []string { return []string{"bridge", "host-local"} }

func (cniDelegate) CNIConfig(datapath.Node) ([]byte, error) {
	return []byte(`{"cniVersion":"1.0.0","name":"cbr0","plugins":[{"type":"bridge"}]}`), nil
}

// cniFails is a node's CNI runtime whose ADD fails and whose DEL
// returns del; it counts the DELs.
type cniFails struct {
	del  error
	dels *int
}

func (cniFails) Add(context.Context, cniexec.Pod, []byte) (cniexec.Result, error) {
	return cniexec.Result{}, errors.New("cni ADD cbr0: bridge: failed to set bridge addr: file exists")
}

func (f cniFails) Del(context.Context, cniexec.Pod, []byte) error {
	*f.dels++
	return f.del
}

// With wiring cni, a pod whose ADD failed and whose DEL after it failed
// too may still hold what the ADD allocated: host-local's lease in the
// state directory, keyed by the pod's name, and a plugin's rules in the
// node's namespace. Deleting the pod's namespace does not take them;
// only the cluster's Close does. Before, the error was not marked, and
// the runner, after dropping the pods, made them again on the same
// cluster beside it (the same names: srv0). One whose DEL succeeded left
// nothing: the runner may try again.
func TestScaleSaysWhatAFailedDELLeft(t *testing.T) {
	for _, tc := range []struct {
		name       string
		del        error
		leftBehind bool
	}{
		{name: "DEL failed", del: errors.New("cni DEL cbr0: host-local: timed out"), leftBehind: true},
		{name: "DEL released it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fakeNetns(t, nil)
			c := podCluster(cniDelegate{}, 0)
			dels := 0
			for _, n := range c.Nodes() {
				n.cni = cniFails{del: tc.del, dels: &dels}
			}
			_, _, err := c.Scale(context.Background(), 1)
			if err == nil || !strings.Contains(err.Error(), "file exists") {
				t.Fatalf("Scale(1) = %v; want the ADD's error", err)
			}
			if dels != 1 {
				t.Errorf("%d DELs after the failed ADD, want 1", dels)
			}
			if tc.del != nil && !strings.Contains(err.Error(), tc.del.Error()) {
				t.Errorf("Scale(1) = %v; want it to say the DEL's error too", err)
			}
			if errors.Is(err, engine.ErrLeftBehind) != tc.leftBehind {
				t.Errorf("Scale(1) = %v: left behind %v, want %v", err, !tc.leftBehind, tc.leftBehind)
			}
		})
	}
}
