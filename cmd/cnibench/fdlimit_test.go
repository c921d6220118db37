package main

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// A program cnibench starts gets the hard open-file limit as its soft
// one, not the soft limit cnibench was started with (which Go restores
// for children unless told otherwise). The test starts itself under a
// soft limit of 1024, as a login shell would, and that process runs a
// shell that prints its limit.
func TestProgramsGetTheHardFileLimit(t *testing.T) {
	if os.Getenv("CNIBENCH_FDLIMIT_CHILD") == "1" {
		if err := raiseFileLimit(); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("sh", "-c", "ulimit -Sn").Output()
		if err != nil {
			t.Fatal(err)
		}
		os.Stdout.WriteString("soft=" + strings.TrimSpace(string(out)) + "\n")
		return
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Max <= 1024 {
		t.Skipf("skipped: the hard open-file limit is %d, no room above a soft 1024", lim.Max)
	}
	cmd := exec.Command("sh", "-c", `ulimit -Sn 1024 && exec "$0" -test.run='^TestProgramsGetTheHardFileLimit$' -test.v`, os.Args[0])
	cmd.Env = append(os.Environ(), "CNIBENCH_FDLIMIT_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := "soft=" + strconv.FormatUint(lim.Max, 10) + "\n"
	if !strings.Contains(string(out), want) {
		t.Errorf("a started program's limit: %s, want %q", out, want)
	}
}
