package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/tune"
)

// brnfFS answers the br_netfilter sysctl with a value or an error.
type brnfFS struct {
	tune.FS
	v   string
	err error
}

func (f brnfFS) Read(ns, kind, p string) (string, error) {
	if p != probe.BrNetfilterSysctl || ns != "node-ns" {
		return "", fmt.Errorf("read %s in %q", p, ns)
	}
	return f.v, f.err
}

// The server node's bridge-nf-call-iptables goes on record as read,
// "absent" when br_netfilter is not loaded, "" when unreadable.
func TestBridgeNetfilterRecorded(t *testing.T) {
	for _, c := range []struct {
		fs   brnfFS
		want string
	}{
		{brnfFS{v: "1\n"}, "1"},
		{brnfFS{err: fmt.Errorf("open: %w", fs.ErrNotExist)}, "absent"},
		{brnfFS{err: errors.New("agent gone")}, ""},
	} {
		if got := bridgeNetfilter(c.fs, "node-ns"); got != c.want {
			t.Errorf("%+v: got %q, want %q", c.fs, got, c.want)
		}
	}
}
