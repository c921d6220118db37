package cniexec

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hangingPlugins is a test fixture: a plugin directory whose loopback and
// fakeplug never exit, and leave a child holding their output pipes; the
// child's PID goes to PLUGIN.child beside the plugin.
func hangingPlugins(t *testing.T) string {
	dir := t.TempDir()
	for _, p := range []string{"loopback", "fakeplug"} {
		if err := os.WriteFile(filepath.Join(dir, p), []byte("#!/bin/sh\nsleep 600 &\necho $! > \"$0.child\"\nwait\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A plugin that hangs fails ADD and DEL at the node's deadline, with an
// error naming the operation and the deadline; DEL is bounded even with
// a context that is never cancelled (teardown's).
func TestPluginThatHangsMeetsTheDeadline(t *testing.T) {
	n := &Node{Name: "server", Dir: filepath.Join(t.TempDir(), "server"), Path: []string{hangingPlugins(t)},
		Timeout: 300 * time.Millisecond}
	pod := Pod{ID: "cnb-test-srv0", Netns: "cnb-test-srv0", IfName: "eth0"}
	for _, op := range []string{"ADD", "DEL"} {
		done := make(chan error, 1)
		go func() {
			if op == "ADD" {
				_, err := n.Add(context.Background(), pod, []byte(fakeConf))
				done <- err
			} else {
				done <- n.Del(context.Background(), pod, []byte(fakeConf))
			}
		}()
		var err error
		select {
		case err = <-done:
		case <-time.After(time.Minute): // far beyond the deadline plus pluginStopGrace
			t.Fatalf("%s did not return a minute after its 300ms deadline", op)
		}
		want := "cni " + op + " for pod cnb-test-srv0 on node server did not finish within 300ms"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s = %v, want %q", op, err, want)
		}
		// The plugins' children went with them.
		kids, _ := filepath.Glob(filepath.Join(n.Path[0], "*.child"))
		for _, k := range kids {
			b, _ := os.ReadFile(k)
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			for end := time.Now().Add(5 * time.Second); pid > 0 && alive(pid) && time.Now().Before(end); {
				time.Sleep(20 * time.Millisecond)
			}
			if pid > 0 && alive(pid) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Errorf("%s: the hung plugin's child %d outlived it", op, pid)
			}
			os.Remove(k)
		}
	}
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err == nil && !strings.Contains(string(st), ") Z ")
}
