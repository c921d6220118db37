package runner

import (
	"fmt"
	"syscall"

	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// checkFileLimit refuses, before anything is built, a concurrency whose
// requests in flight would hold more open files than this machine lets
// a process have: the tools inherit cnibench's limit, whose soft value
// main raises to the hard one, and a process without CAP_SYS_RESOURCE
// can go no higher (nginx's worker_rlimit_nofile included), so every
// trial would fail on "Too many open files". hard is that hard limit
// (fileLimit); 0 skips the check. Only for nodes on this machine: a
// cluster's pods have their runtime's limit, which this one does not see.
func checkFileLimit(s *study.Study, hard uint64) error {
	if hard == 0 {
		return nil
	}
	for i, base := range s.Spec.Workloads {
		t, ok := registry.Describe(base.Tool)
		if !ok || t.FilesPerRequest == 0 {
			continue
		}
		for _, w := range base.Variants() {
			c := w.Concurrent()
			need := uint64(c)*uint64(t.FilesPerRequest) + uint64(t.FilesBase)
			if need <= hard {
				continue
			}
			most := 0
			if hard > uint64(t.FilesBase) {
				most = int((hard - uint64(t.FilesBase)) / uint64(t.FilesPerRequest))
			}
			return study.At(fmt.Sprintf("spec.workloads[%d]", i), fmt.Errorf(
				"workload %s: concurrency %d needs about %d open files in one process of the %s workload (%d per request in flight, %d besides), "+
					"more than this machine's hard limit of %d (ulimit -Hn): lower concurrency to at most %d, or raise the limit "+
					"(LimitNOFILE= of the service or session, /etc/security/limits.conf)",
				w.Name, c, need, base.Tool, t.FilesPerRequest, t.FilesBase, hard, most))
		}
	}
	return nil
}

// fileLimit is this process's hard limit of open files, 0 when unknown
// or unlimited.
func fileLimit() uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Max == ^uint64(0) {
		return 0
	}
	return lim.Max
}
