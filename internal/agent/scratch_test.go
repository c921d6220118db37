package agent

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/probe"
)

// fakeScratch is a node's /var/run/netns with the probers that live.
type fakeScratch struct {
	names   []string
	live    map[int]uint64 // pid -> start
	deleted []string
	fail    string // a name whose delete fails
}

func (f *fakeScratch) ops() *scratchNetns {
	return &scratchNetns{
		list: func(prefix string) ([]string, error) {
			var out []string
			for _, n := range f.names {
				if strings.HasPrefix(n, prefix) {
					out = append(out, n)
				}
			}
			return out, nil
		},
		alive: func(pid int, start uint64) bool { s, ok := f.live[pid]; return ok && s == start },
		delete: func(name string) error {
			if name == f.fail {
				return errors.New("umount: device or resource busy")
			}
			f.deleted = append(f.deleted, name)
			f.names = slices.DeleteFunc(f.names, func(n string) bool { return n == name })
			return nil
		},
	}
}

// A scratch namespace a killed session's probe left in the agent is
// deleted by the agent's replay (its daemon's, and `cleanup --kube`'s);
// a live prober's, one whose pid was reused by another process (start
// differs: the prober is gone), and an older cnibench's without pid and
// start are told apart as `cnibench cleanup` tells them.
func TestReplayDeletesDeadProbesScratchNetns(t *testing.T) {
	dead := probe.ScratchName(4711, 100, "0a1b2c3d")
	reused := probe.ScratchName(4712, 200, "0a1b2c3e")
	live := probe.ScratchName(4713, 300, "0a1b2c3f")
	older := probe.NamespacePrefix + "0a1b2c3d"
	f := &fakeScratch{names: []string{dead, reused, live, older, "cnb-r1-srv0"}, live: map[int]uint64{4712: 999, 4713: 300}}
	s := NewServer(Config{Run: "daemon", FS: testNode(), Pods: fakePods{}, JournalDir: t.TempDir()})
	s.scratch = f.ops()
	sum, err := s.replay()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(f.deleted)
	if want := []string{dead, reused}; !slices.Equal(f.deleted, want) {
		t.Errorf("deleted %v; want %v", f.deleted, want)
	}
	if sum.Probes != 2 || !strings.Contains(sum.String(), "deleted 2 scratch namespaces of killed probes") {
		t.Errorf("replay = %+v (%s); want 2 scratch namespaces deleted", sum, sum)
	}

	// One that cannot be deleted is an error naming it; the rest go.
	f.names, f.deleted, f.fail = append(f.names, dead), nil, dead
	f.names = append(f.names, reused)
	if _, err := s.replay(); err == nil || !strings.Contains(err.Error(), "pid 4711") || !slices.Equal(f.deleted, []string{reused}) {
		t.Errorf("replay with a busy namespace = %v, deleted %v; want an error naming pid 4711 and %s deleted", err, f.deleted, reused)
	}
}

// The agent on its node sweeps the node's scratch namespaces; a session
// on a node its FS only models (these tests') touches none of this
// machine's.
func TestScratchSweepOnRealNodeOnly(t *testing.T) {
	if s := NewServer(Config{JournalDir: t.TempDir()}); s.scratch != &nodeScratch {
		t.Error("the agent on its node does not sweep its scratch namespaces")
	}
	if s := NewServer(Config{FS: testNode(), Pods: fakePods{}}); s.scratch != nil {
		t.Error("a session on a modelled node would sweep this machine's scratch namespaces")
	}
}
