package agent

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/advise/inspect"
	"github.com/cnibench/cnibench/internal/tune"
)

// advise's inspection on a node reads the host-global sysctls
// (rps_sock_flow_entries, busy_poll, busy_read) through the init
// namespace and the conntrack ones in the node's own: each namespace
// has its own conntrack count, held to the max it shows, and every read
// used to go to the init namespace, so a kind node's conntrack usage
// was the machine's. The init namespace here is a path that does not
// exist: a read sent there fails, naming it.
func TestInspectSysctlNamespaces(t *testing.T) {
	const initRef = "/nonexistent/cnibench-test-init-ns"
	fs := newMemFS()
	node := map[string]string{
		inspect.SysConntrackCount:   "17",
		inspect.SysConntrackMax:     "262144",
		inspect.SysConntrackBuckets: "65536",
	}
	for name, v := range node {
		fs.vals[key("", tune.FSProc, sysctlPath(name))] = v
	}
	s := NewServer(Config{Run: "r1", FS: fs, Pods: fakePods{}, JournalDir: t.TempDir()})
	s.fs.host = &hostProc{}
	s.fs.host.once.Do(func() {})
	s.fs.host.ref = initRef
	env := s.inspectEnv()
	for name, want := range node {
		if v, err := env.Sysctl(sysctlPath(name)); err != nil || v != want {
			t.Errorf("%s = %q, %v; want the node namespace's %s", name, v, err, want)
		}
	}
	for _, name := range []string{inspect.SysRPSSockFlowEntries, inspect.SysBusyPoll, inspect.SysBusyRead} {
		if _, err := env.Sysctl(sysctlPath(name)); err == nil || !strings.Contains(err.Error(), initRef) {
			t.Errorf("%s: %v, want it read through the init namespace (%s)", name, err, initRef)
		}
	}
}

func sysctlPath(name string) string { return "/proc/sys/" + strings.ReplaceAll(name, ".", "/") }
