package cniexec

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hangingPlugins is a test fixture: a plugin directory whose loopback and
// fakeplug never exit, and leave a child holding their output pipes.
func hangingPlugins(t *testing.T) string {
	dir := t.TempDir()
	for _, p := range []string{"loopback", "fakeplug"} {
		if err := os.WriteFile(filepath.Join(dir, p), []byte("#!/bin/sh\nsleep 600\n"), 0o755); err != nil {
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
	}
}
