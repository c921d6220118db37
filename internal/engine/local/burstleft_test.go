package local

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/cniexec"
	"github.com/cnibench/cnibench/internal/engine"
)

// cniWires is a node's CNI runtime whose ADD wires the pod and whose
// DEL returns del. It keeps no state: a burst calls it from several
// goroutines.
type cniWires struct{ del error }

func (cniWires) Add(context.Context, cniexec.Pod, []byte) (cniexec.Result, error) {
	return cniexec.Result{IP: net.IPv4(10, 244, 0, 2)}, nil
}

func (w cniWires) Del(context.Context, cniexec.Pod, []byte) error { return w.del }

// A pod start-up burst whose pod could not be deleted leaves it, in
// part: its namespace, its devices, its lease. The next burst makes its
// pods under the same names at the same indices (srvb0: the same
// namespace, host veth name, CNI container ID and address), so the
// runner must stop rather than run the trial again beside it. Before,
// the deletion's error came back unmarked, and the runner retried the
// trial, then gave the cell up and went on, each later burst failing on
// the leftover. The leftover namespace stays the cluster's (Close
// deletes it). A burst whose pods all went is no error.
func TestStartPodsSaysWhatItLeft(t *testing.T) {
	ebusy := errors.New("umount: device or resource busy")
	for _, tc := range []struct {
		name       string
		del        error // CNI DEL's error
		rmNetns    error // the namespace's deletion's error
		kill       error // stopping the pod's processes
		want       string
		leftBehind bool
	}{
		{name: "DEL failed", del: errors.New("cni DEL cbr0: host-local: timed out"), want: "host-local: timed out", leftBehind: true},
		{name: "namespace not deleted", rmNetns: ebusy, want: "device or resource busy", leftBehind: true},
		{name: "processes not stopped", kill: errors.New("pid 4711 still alive after SIGKILL"), want: "still alive", leftBehind: true},
		{name: "every pod deleted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fakeNetns(t, tc.rmNetns)
			c := podCluster(cniDelegate{}, 0)
			if tc.kill != nil {
				c.cfg.Kill = func(string) error { return tc.kill }
			}
			for _, n := range c.Nodes() {
				n.cni = cniWires{del: tc.del}
			}
			times, err := c.StartPods(context.Background(), ServerNode, 2, 2)
			if tc.want == "" {
				if err != nil || len(times) != 2 {
					t.Fatalf("StartPods = %d times, %v; want 2 and no error", len(times), err)
				}
				if left := c.Namespaces(); len(left) != 0 {
					t.Errorf("namespaces %v left after a burst whose pods were deleted", left)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "delete pod srvb0 from node server") {
				t.Fatalf("StartPods = %v; want it to name pod srvb0 and say %q", err, tc.want)
			}
			if errors.Is(err, engine.ErrLeftBehind) != tc.leftBehind {
				t.Errorf("StartPods = %v: left behind %v, want %v", err, !tc.leftBehind, tc.leftBehind)
			}
			if !slices.Contains(c.Namespaces(), c.nsName("srvb0")) {
				t.Errorf("namespaces %v: the burst's leftover %s is not the cluster's to delete", c.Namespaces(), c.nsName("srvb0"))
			}
		})
	}
}
