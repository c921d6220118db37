package procs

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func TestParseStatTicks(t *testing.T) {
	// A command name with a space and a parenthesis, as the kernel prints it.
	stat := []byte("4242 (flan ne)d) S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 75 0 0 20 0 9 0 12345 123456789 2048 18446744073709551615")
	got, err := ParseStatTicks(stat)
	if err != nil || got != 325 {
		t.Fatalf("ticks = %d, %v; want 325", got, err)
	}
	if _, err := ParseStatTicks([]byte("4242 (x) S 1 2")); err == nil {
		t.Error("short stat accepted")
	}
}

func TestParseRSS(t *testing.T) {
	got, err := ParseRSS([]byte("Name:\tetcd\nVmPeak:\t  100 kB\nVmRSS:\t   2048 kB\n"))
	if err != nil || got != 2048*1024 {
		t.Fatalf("rss = %v, %v", got, err)
	}
	if _, err := ParseRSS([]byte("Name:\tkworker\n")); err == nil {
		t.Error("missing VmRSS accepted")
	}
}

func FuzzParseStatTicks(f *testing.F) {
	f.Add([]byte("1 (init) S 0 1 1 0 -1 4194560 1 0 0 0 5 6 0 0 20 0 1 0 1 1 1 1"))
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = ParseStatTicks(b) })
}

// fakeProc writes PROC/PID with comm, stat, status and ns/net pointing at
// netns.
func fakeProc(t *testing.T, root string, pid int, comm, netns string) {
	t.Helper()
	dir := filepath.Join(root, strconv.Itoa(pid))
	if err := os.MkdirAll(filepath.Join(dir, "ns"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"comm":   comm + "\n",
		"stat":   strconv.Itoa(pid) + " (" + comm + ") S 1 1 1 0 -1 0 0 0 0 0 30 12 0 0 20 0 1 0 1 1 1",
		"status": "Name:\t" + comm + "\nVmRSS:\t  4096 kB\n",
	}
	for f, s := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(netns, filepath.Join(dir, "ns", "net")); err != nil {
		t.Fatal(err)
	}
}

// Find picks the named processes of one network namespace: a daemon of
// the same name in another node's namespace, and other programs, are
// left out.
func TestFind(t *testing.T) {
	root, nsDir := t.TempDir(), t.TempDir()
	mine, other := filepath.Join(nsDir, "mine"), filepath.Join(nsDir, "other")
	for _, f := range []string{mine, other} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fakeProc(t, root, 10, "kube-proxy", mine)
	fakeProc(t, root, 11, "kube-proxy", other)
	fakeProc(t, root, 12, "sshd", mine)
	fakeProc(t, root, 13, "flanneld", mine)
	ino, err := NetnsIno(mine)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Find(root, []string{"kube-proxy", "flanneld"}, ino)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].PID != 10 || got[1].PID != 13 || got[0].Ticks != 42 || got[1].RSSBytes != 4096*1024 {
		t.Errorf("found %+v, want kube-proxy 10 and flanneld 13 (42 ticks, 4 MiB)", got)
	}
}
