package local

import (
	"context"
	"errors"
	"strings"
	"testing"

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
