package archtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// goToolchainSh runs script in bash with scripts/go-toolchain.sh sourced,
// from the module's top directory (its functions read go.mod there), and
// returns its stdout and whether it exited 0.
func goToolchainSh(t *testing.T, env []string, script string, args ...string) (string, bool) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	m := findModule(t)
	cmd := exec.Command("bash", append([]string{"-c", ". scripts/go-toolchain.sh && " + script, "bash"}, args...)...)
	cmd.Dir = m.dir
	// GOPROXY only as the test sets it.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOPROXY=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if _, exit := err.(*exec.ExitError); err != nil && !exit {
		t.Fatal(err)
	}
	if stderr.Len() > 0 {
		t.Errorf("%s: stderr: %s", script, stderr.String())
	}
	return strings.TrimSuffix(string(out), "\n"), err == nil
}

// fakeGo makes DIR/go, which answers `go env GOVERSION` with version.
func fakeGo(t *testing.T, version string) string {
	t.Helper()
	d := t.TempDir()
	if err := os.WriteFile(filepath.Join(d, "go"), []byte("#!/bin/sh\necho "+version+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// setup.sh and test.sh take the first Go new enough among the first go on
// PATH and the fixed directories, and put it first on PATH: an old
// distribution Go first on PATH (Debian 12's 1.19) must not hide a new
// enough /usr/local/go, nor make setup.sh fetch a toolchain.
func TestGoDirPicksFirstNewEnough(t *testing.T) {
	want, ok := goToolchainSh(t, nil, "go_want")
	if !ok || want == "" {
		t.Fatalf("go_want = %q (exit 0: %v): go.mod's go line not read", want, ok)
	}
	old, exact, newer, broken := fakeGo(t, "go1.19.8"), fakeGo(t, "go"+want), fakeGo(t, "go99.0.0"), fakeGo(t, "go: downloading go"+want)
	path := func(first string) []string { return []string{"PATH=" + first + ":" + os.Getenv("PATH")} }
	for _, tc := range []struct {
		name  string
		first string   // first go on PATH
		dirs  []string // go_dir's fixed directories
		want  string   // "": none
	}{
		{"old on PATH, new in /usr/local/go", old, []string{exact, newer}, exact},
		{"new enough on PATH", newer, []string{exact}, newer},
		{"old on PATH and in the first dir", old, []string{old, newer}, newer},
		{"no version in go env's answer", broken, []string{exact}, exact},
		{"none new enough", old, []string{old, broken}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := goToolchainSh(t, path(tc.first), `go_dir "$@"`, tc.dirs...)
			if tc.want == "" {
				if ok || got != "" {
					t.Errorf("go_dir = %q, exit 0; want a failure printing nothing", got)
				}
				return
			}
			if !ok || got != tc.want {
				t.Errorf("go_dir = %q (exit 0: %v), want %q", got, ok, tc.want)
			}
		})
	}
}

// setup.sh fetches go.mod's toolchain from the proxy go itself would ask
// first (GOPROXY, read as cmd/go/internal/modfetch/proxy.go's proxyList
// reads it), not always from proxy.golang.org: a machine may reach only
// its company's proxy.
func TestGoProxyFromGOPROXY(t *testing.T) {
	for _, tc := range []struct {
		goproxy []string // GOPROXY=...; none: unset
		want    string   // "": go_proxy fails
	}{
		{nil, "https://proxy.golang.org"},
		{[]string{"GOPROXY="}, "https://proxy.golang.org"},
		{[]string{"GOPROXY=https://proxy.golang.org,direct"}, "https://proxy.golang.org"},
		{[]string{"GOPROXY=https://goproxy.corp.example/go/,direct"}, "https://goproxy.corp.example/go"},
		{[]string{"GOPROXY= , https://a.example|https://b.example"}, "https://a.example"},
		{[]string{"GOPROXY=goproxy.corp.example"}, "https://goproxy.corp.example"},
		{[]string{"GOPROXY=file:///srv/goproxy"}, "file:///srv/goproxy"},
		{[]string{"GOPROXY=https://u:p@goproxy.corp.example"}, "https://u:p@goproxy.corp.example"},
		{[]string{"GOPROXY=direct"}, ""},
		{[]string{"GOPROXY=off"}, ""},
		// go ignores what follows direct or off.
		{[]string{"GOPROXY=direct,https://goproxy.corp.example"}, ""},
		{[]string{"GOPROXY=off|https://goproxy.corp.example"}, ""},
	} {
		got, ok := goToolchainSh(t, tc.goproxy, "go_proxy")
		if tc.want == "" {
			if ok || got != "" {
				t.Errorf("%v: go_proxy = %q, exit 0; want a failure printing nothing", tc.goproxy, got)
			}
			continue
		}
		if !ok || got != tc.want {
			t.Errorf("%v: go_proxy = %q (exit 0: %v), want %q", tc.goproxy, got, ok, tc.want)
		}
	}
	// What setup.sh prints keeps a proxy's credentials out of logs.
	if got, _ := goToolchainSh(t, nil, `redact_url "$1"`, "https://u:p@goproxy.corp.example/golang.org/toolchain/@v/v0.0.1-go1.zip"); got != "https://***@goproxy.corp.example/golang.org/toolchain/@v/v0.0.1-go1.zip" {
		t.Errorf("redact_url = %q", got)
	}
}
