package ovsdp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// An ovs-dpctl that hangs (a test fixture: a script that never exits)
// fails at the deadline with an error naming the call.
func TestDpctlThatHangsMeetsTheDeadline(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, Tool), []byte("#!/bin/sh\nsleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
	saved := dpctlTimeout
	dpctlTimeout = 200 * time.Millisecond
	t.Cleanup(func() { dpctlTimeout = saved })
	done := make(chan error, 1)
	go func() { _, err := Dpctl("", "show", "cnb"); done <- err }()
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute): // far beyond the deadline plus the wait delay
		t.Fatal("Dpctl did not return a minute after its 200ms deadline")
	}
	if err == nil || !strings.Contains(err.Error(), "ovs-dpctl show cnb did not finish within 200ms") {
		t.Errorf("Dpctl = %v, want the deadline", err)
	}
}
