package tune

import (
	"path"

	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/study"
)

// Snapshot reads the current RPS/RFS values of ifaces (every receive
// queue's rps_cpus and rps_flow_cnt) and the host's rps_sock_flow_entries,
// for the run's environment record (env.json). Keys are
// "NETNS/DEV/rx-N/rps_cpus" (NETNS "host" for the host) and
// "net.core.rps_sock_flow_entries". A value that cannot be read is
// recorded as "error: ..." rather than dropped, so the record shows it.
func Snapshot(fs FS, ifaces []netns.Iface) map[string]string {
	out := map[string]string{}
	put := func(key string, v string, err error) {
		if err != nil {
			v = "error: " + err.Error()
		}
		out[key] = v
	}
	v, err := fs.Read("", FSProc, SockFlowEntriesPath)
	put(SockFlowEntriesSysctl, v, err)
	for _, ifc := range ifaces {
		ns := ifc.Netns
		if ns == "" {
			ns = "host"
		}
		queues, err := RxQueues(fs, ifc)
		if err != nil {
			put(ns+"/"+ifc.Name, "", err)
			continue
		}
		for _, q := range queues {
			for _, knob := range []string{"rps_cpus", "rps_flow_cnt"} {
				v, err := fs.Read(ifc.Netns, FSSysfs, path.Join(q, knob))
				put(ns+"/"+ifc.Name+"/"+path.Base(q)+"/"+knob, v, err)
			}
		}
	}
	return out
}

// SysctlSnapshot reads the named network sysctls as found, where a
// tuning writes each (sysctlChanges): in the node's namespace nodeNS
// when it has its own, else on the host. A value that cannot be read is
// recorded as "error: ...".
func SysctlSnapshot(fs FS, nodeNS string, names []string) map[string]string {
	out := map[string]string{}
	for _, name := range names {
		p := study.SysctlPath(name)
		perNS, err := perNamespace(p, Target{NodeNetns: nodeNS}, fs)
		ns := ""
		if perNS {
			ns = nodeNS
		}
		v := ""
		if err == nil {
			v, err = fs.Read(ns, FSProc, p)
		}
		if err != nil {
			v = "error: " + err.Error()
		}
		out[name] = v
	}
	return out
}
