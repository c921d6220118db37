package tune

import (
	"errors"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/journal"
)

const reservedPorts = "/proc/sys/net/ipv4/ip_local_reserved_ports"

// emptyIgnoringFS is a fakeFS whose ip_local_reserved_ports ignores a
// write of "": the kernel's proc_sys_call_handler returns 0 for a
// zero-length write, nothing parsed, nothing stored.
type emptyIgnoringFS struct{ *fakeFS }

func (f emptyIgnoringFS) Write(ns, fs, p, v string) error {
	if p == reservedPorts && v == "" {
		return nil
	}
	return f.fakeFS.Write(ns, fs, p, v)
}

func reservedPortsFixture() emptyIgnoringFS {
	f, _ := fixture()
	f.vals[key(nodeNS, FSProc, reservedPorts)] = "" // the default: nothing reserved
	return emptyIgnoringFS{f}
}

// TestRevertReadsBack: a revert whose write the kernel took without
// storing it (the empty old value of ip_local_reserved_ports) leaves the
// entry pending and says so; before, the ports stayed reserved and the
// entry was marked restored.
func TestRevertReadsBack(t *testing.T) {
	f := reservedPortsFixture()
	j := openJournal(t)
	a := &Applied{j: j, fs: f}
	if err := a.apply(Change{Netns: nodeNS, FS: FSProc, Path: reservedPorts, Value: "5201-5300"}); err != nil {
		t.Fatal(err)
	}
	err := a.Revert()
	var me *MismatchError
	if !errors.As(err, &me) {
		t.Fatalf("Revert = %v, want the value read back reported", err)
	}
	if j.Pending() != 1 {
		t.Errorf("journal pending %d, want the unrestored entry kept", j.Pending())
	}
}

// TestReplayReadsBack: likewise for cleanup's replay of a dead run.
func TestReplayReadsBack(t *testing.T) {
	f := reservedPortsFixture()
	j := openJournal(t)
	if _, err := j.RecordSet(journal.Set{Netns: nodeNS, FS: FSProc, Path: reservedPorts, Old: "", New: "5201-5300"}); err != nil {
		t.Fatal(err)
	}
	f.vals[key(nodeNS, FSProc, reservedPorts)] = "5201-5300"
	r, err := journal.ReadReplay(j.Path())
	if err != nil {
		t.Fatal(err)
	}
	outs, err := RevertReplayOutcomes(r, f, false)
	var me *MismatchError
	if !errors.As(err, &me) || len(outs) != 0 {
		t.Fatalf("replay = %v, %v; want no outcome and the value read back reported", outs, err)
	}
}

// A mask the kernel narrowed asks about isolated CPUs, which Linux 5.10+
// keeps RPS off; other knobs' mismatches do not.
func TestMismatchNamesIsolatedCPUs(t *testing.T) {
	rps := &MismatchError{Change: Change{FS: FSSysfs, Path: "class/net/eth0/queues/rx-0/rps_cpus", Value: "ff"}, Got: "3"}
	if !strings.Contains(rps.Error(), "isolated CPUs (isolcpus/nohz_full)?") {
		t.Errorf("rps_cpus mismatch %q does not ask about isolated CPUs", rps)
	}
	other := &MismatchError{Change: Change{FS: FSProc, Path: reservedPorts, Value: ""}, Got: "5201-5300"}
	if strings.Contains(other.Error(), "isolated") {
		t.Errorf("sysctl mismatch %q asks about isolated CPUs", other)
	}
}
