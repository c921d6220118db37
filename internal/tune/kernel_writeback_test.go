package tune_test

import (
	"testing"

	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/tune"
)

// TestKernelEmptyValueRevert: ip_local_reserved_ports (per namespace)
// reads "" by default; a run that reserved ports puts "" back, and the
// kernel ignores a zero-length write, so LocalFS writes a newline as
// sysctl -w does and the ports are free again.
func TestKernelEmptyValueRevert(t *testing.T) {
	kerneltest.RequireRoot(t)
	id := kerneltest.RunID()
	ns := kerneltest.Netns(t, kerneltest.Journal(t, id), id, "ports")
	const p = "/proc/sys/net/ipv4/ip_local_reserved_ports"
	fs := tune.LocalFS{}
	if v, err := fs.Read(ns, tune.FSProc, p); err != nil || v != "" {
		t.Skipf("%s in a new namespace = %q, %v; the test needs it empty", p, v, err)
	}
	if err := fs.Write(ns, tune.FSProc, p, "5201-5300"); err != nil {
		t.Fatal(err)
	}
	if err := tune.WriteBack(fs, ns, tune.FSProc, p, ""); err != nil {
		t.Fatalf("writing the empty value back: %v", err)
	}
}
