package app

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/agent"
)

// The agent's subcommands share its persistent flags, and serve answers
// a session on stdin/stdout.
func TestAgentCommand(t *testing.T) {
	var names []string
	for _, c := range newAgentCmd().Commands() {
		names = append(names, c.Name())
	}
	want := []string{"daemon", "exec", "nginx", "pause", "replay", "serve"}
	if !slices.Equal(names, want) {
		t.Fatalf("agent subcommands %v, want %v", names, want)
	}

	dir := filepath.Join(t.TempDir(), "journals")
	cmd := newAgentCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetIn(strings.NewReader(`{"op":"ping","run":"t1"}` + "\n" + `{"op":"info","run":"t1"}` + "\n"))
	cmd.SetArgs([]string{"serve", "--run", "t1", "--journal-dir", dir})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("serve answered %d lines, want 2:\n%s", len(lines), out.String())
	}
	var info agent.Response
	if err := json.Unmarshal([]byte(lines[1]), &info); err != nil || info.Error != "" || info.Info == nil || info.Info.Kernel == "" {
		t.Errorf("info answer %s (%v)", lines[1], err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("a session that changed nothing left its journal directory %s: %v", dir, err)
	}

	cmd = newAgentCmd()
	out.Reset()
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"replay", "--journal-dir", dir})
	if err := cmd.Execute(); err != nil || out.String() != "nothing left by dead sessions\n" {
		t.Errorf("replay of an empty journal directory: %q, %v", out.String(), err)
	}
}
