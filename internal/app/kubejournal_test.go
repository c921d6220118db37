package app

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A kube run changes nothing on this machine, so its controller journal
// and host lock need no root: root keeps /run/cnibench/kube, any other
// user a directory of their own. Before, every user got
// /run/cnibench/kube, root's, and a run without sudo was refused.
func TestKubeJournalDirFor(t *testing.T) {
	for _, tc := range []struct {
		euid int
		env  map[string]string
		want string
	}{
		{0, map[string]string{"XDG_RUNTIME_DIR": "/run/user/0", "HOME": "/root"}, "/run/cnibench/kube"},
		{1000, map[string]string{"XDG_RUNTIME_DIR": "/run/user/1000", "HOME": "/home/jane"}, "/run/user/1000/cnibench/kube"},
		{1000, map[string]string{"XDG_CACHE_HOME": "/home/jane/c", "HOME": "/home/jane"}, "/home/jane/c/cnibench/kube"},
		{1000, map[string]string{"HOME": "/home/jane"}, "/home/jane/.cache/cnibench/kube"},
		// Relative values are not directories of the user's (XDG).
		{1000, map[string]string{"XDG_RUNTIME_DIR": "run", "XDG_CACHE_HOME": "c", "HOME": "/home/jane"}, "/home/jane/.cache/cnibench/kube"},
	} {
		got, err := kubeJournalDirFor(tc.euid, func(k string) string { return tc.env[k] })
		if err != nil || got != tc.want {
			t.Errorf("euid %d, %v: %q, %v; want %q", tc.euid, tc.env, got, err, tc.want)
		}
	}
	if d, err := kubeJournalDirFor(1000, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "set XDG_RUNTIME_DIR or HOME") {
		t.Errorf("no environment: %q, %v; want the error saying what to set", d, err)
	}
}

// nobody is the user the unprivileged tests run as.
const nobody = 65534

// `cnibench run --engine kube` as a user other than root (nobody, as jane
// in docs/kubernetes.md) takes its host lock in its own runtime
// directory, made 0700, and reaches the cluster's preflight: here a
// cluster that does not answer, said as such (exit 2), not "permission
// denied" on /run/cnibench/kube.
func TestKubeRunWithoutRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run a child as nobody")
	}
	dir, bin := nobodyDir(t)
	runtime := filepath.Join(dir, "run")
	if err := os.Mkdir(runtime, 0o700); err != nil {
		t.Fatal(err)
	}
	kc := filepath.Join(dir, "kubeconfig")
	// Port 1 of the loopback: refused at once.
	cfg := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \"https://127.0.0.1:1\"}}]\n" +
		"users: [{name: u, user: {token: x}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n"
	if err := os.WriteFile(kc, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, runtime, kc} {
		if err := os.Chown(p, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	cmd := exec.Command(bin, "-test.run=^TestMainAsChild$")
	cmd.Dir = dir
	cmd.Env = []string{"CNIBENCH_APP_CHILD=run rps-rfs --quick --engine kube --kubeconfig " + kc + " --out " + filepath.Join(dir, "out"),
		"HOME=" + dir, "XDG_RUNTIME_DIR=" + runtime, "PATH=/usr/bin:/bin"}
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v\n%s", err, out.String())
	}
	if s := out.String(); !strings.Contains(s, "exit 2\n") || !strings.Contains(s, "cluster unreachable") || strings.Contains(s, "host lock") {
		t.Errorf("run --engine kube as nobody said:\n%s\nwant exit 2 for the unreachable cluster, past the host lock", s)
	}
	st, err := os.Stat(filepath.Join(runtime, "cnibench", "kube"))
	if err != nil {
		t.Fatalf("nobody's kube journal directory: %v", err)
	}
	if sys := st.Sys().(*syscall.Stat_t); st.Mode().Perm() != 0o700 || sys.Uid != nobody {
		t.Errorf("nobody's kube journal directory: mode %v, owner %d; want 0700 and %d", st.Mode().Perm(), sys.Uid, nobody)
	}
}

// nobodyDir is a directory nobody may enter, holding a copy of this test
// binary nobody may run (the build's own directory is private).
func nobodyDir(t *testing.T) (dir, bin string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "cnibench-app-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	bin = filepath.Join(dir, "app.test")
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, bin
}

// TestMainAsChild runs Main with the words of $CNIBENCH_APP_CHILD and
// prints its output and exit code, for a test running it as another user.
func TestMainAsChild(t *testing.T) {
	args := os.Getenv("CNIBENCH_APP_CHILD")
	if args == "" {
		t.Skip("run by TestKubeRunWithoutRoot")
	}
	var out, errb bytes.Buffer
	code := Main(context.Background(), strings.Fields(args), &out, &errb)
	fmt.Printf("%s%sexit %d\n", out.String(), errb.String(), code)
}
