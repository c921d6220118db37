package probe

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cnibench/cnibench/internal/netns"
)

// rfsTable is the global RFS flow table size; it exists in the initial
// namespace only, which is where cnibench reads it (through
// netns.InitRef where this process is elsewhere: the node agent of a
// cluster whose nodes are namespaces of one machine).
const rfsTable = "/proc/sys/net/core/rps_sock_flow_entries"

// tryRPS checks that a device has the per-queue RPS mask
// (CONFIG_RPS). Equivalent to: cat /sys/class/net/cnbp-p0/queues/rx-0/rps_cpus
func (s *scratch) tryRPS() (bool, string) {
	return s.queueFile("rps_cpus", "RPS (receive packet steering), CONFIG_RPS")
}

// tryRFS checks the global flow table and the per-queue flow count
// (CONFIG_RFS_ACCEL is not needed; RFS comes with CONFIG_RPS).
// Equivalent to: cat /proc/sys/net/core/rps_sock_flow_entries
// /sys/class/net/cnbp-p0/queues/rx-0/rps_flow_cnt
func (s *scratch) tryRFS() (bool, string) {
	if ok, detail := rfsTableIn("/proc"); !ok {
		return false, detail
	}
	return s.queueFile("rps_flow_cnt", "RFS (receive flow steering), CONFIG_RPS")
}

// rfsTableIn checks the RFS table in the init network namespace of
// procRoot's PID 1. Missing where this process is not provably in the
// init namespace (a container with network and PID namespaces of its
// own, whose PID 1 is its own init), it says so: the table exists in
// the host's network namespace only, and the kernel may well have RFS.
// Found, it must be writable there (the kernel's answer: a container's
// read-only /proc/sys shows it with its usual mode), since an RFS
// tuning writes it.
func rfsTableIn(procRoot string) (bool, string) {
	var inInit bool
	var denied error
	err := netns.Do(netns.InitRef(procRoot), func() error {
		inInit = netns.InInit(procRoot)
		_, err := os.Stat(rfsTable)
		if err == nil {
			denied = writeDenied(rfsTable)
		}
		return err
	})
	switch {
	case err == nil && denied != nil:
		return false, writeRefused(rfsTable, denied)
	case err == nil:
		return true, ""
	case errors.Is(err, os.ErrNotExist) && !inInit:
		return false, rfsTable + " does not exist in this network namespace, which is not the host's (a container with its own network namespace?): " +
			"the RFS table exists in the host's network namespace only; run cnibench there (e.g. docker run --network host --privileged)"
	case errors.Is(err, os.ErrNotExist):
		return false, rfsTable + " does not exist (this kernel was built without RFS, CONFIG_RPS)"
	}
	return false, "checking " + rfsTable + " failed: " + reason("rps", err)
}

// queueFile checks rx-0/NAME of the parent veth in a sysfs mounted for
// the scratch namespace (the host's /sys does not show its devices).
func (s *scratch) queueFile(name, feature string) (bool, string) {
	if s.parent == nil {
		return false, "not probed: needs a veth device to look at, and creating one failed (see veth)"
	}
	var detail string
	err := netns.WithSysfs(s.ns, netns.Read, func(sys string) error {
		p := filepath.Join(sys, "class/net", s.parent.Attrs().Name, "queues/rx-0", name)
		_, err := os.Stat(p)
		if errors.Is(err, os.ErrNotExist) {
			detail = fmt.Sprintf("a veth has no queues/rx-0/%s in sysfs (this kernel was built without %s)", name, feature)
		}
		return err
	})
	if err != nil && detail == "" {
		detail = "not probed: " + err.Error()
	}
	return err == nil, detail
}
