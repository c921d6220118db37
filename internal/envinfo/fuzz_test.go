package envinfo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzVersion: a tool's version is the first line it prints (env.json
// records it). Whatever the tool prints, the version is one line
// without surrounding space, taken from the start of the output, and a
// tool whose first line says anything is not recorded as missing ("").
// Seeds are the first lines of the tools cnibench records.
func FuzzVersion(f *testing.F) {
	for _, s := range []string{
		"iperf 3.12 (cJSON 1.7.15)\nLinux host 6.1.0-25-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.106-3 x86_64\n",
		"This is ApacheBench, Version 2.3 <$Revision: 1903618 $>\nCopyright 1996 Adam Twiss, Zeus Technology Ltd\n",
		"nginx version: nginx/1.22.1\n",
		"BIRD version 2.0.12\n",
		"sockperf: == version #3.10-0.git0bc5dce8c3e3 == \r\n",
		"qperf 0.4.11\n",
		"\n\nlate\n", "  \t\n", "", "no newline", "\x00\xff\xfe\n",
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	out, tool := filepath.Join(dir, "out"), filepath.Join(dir, "cnbtool")
	if err := os.WriteFile(tool, []byte("#!/bin/sh\nexec cat '"+out+"'\n"), 0o755); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, printed []byte) {
		if err := os.WriteFile(out, printed, 0o600); err != nil {
			t.Fatal(err)
		}
		v := Version([]string{tool, "--version"})
		first, _, _ := strings.Cut(string(printed), "\n")
		if strings.ContainsRune(v, '\n') || v != strings.TrimSpace(v) || !strings.Contains(first, v) {
			t.Errorf("printed %q: version %q is not the first line", printed, v)
		}
		if v == "" && strings.TrimSpace(first) != "" {
			t.Errorf("printed %q: version empty, as for a missing tool", printed)
		}
	})
}

// FuzzParseCPUModel: /proc/cpuinfo names the CPU for env.json (and a
// resumed run is refused when it differs). Whatever the text, the model
// is one line without surrounding space; a text with neither a model
// name nor a CPU part names none; and a model name put first is the one
// recorded.
func FuzzParseCPUModel(f *testing.F) {
	for _, s := range []string{xeonCPUInfo, altraCPUInfo, rk3399CPUInfo, rpiCPUInfo, "", ":", "model name:\n", "CPU part: x\r\n", "\x00\xff:\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, info string) {
		m := parseCPUModel(strings.NewReader(info))
		if strings.ContainsAny(m, "\n") || m != strings.TrimSpace(m) {
			t.Errorf("cpuinfo %q: model %q is not one trimmed line", info, m)
		}
		if m != "" && !strings.Contains(info, "model name") && !strings.Contains(info, "CPU part") {
			t.Errorf("cpuinfo %q: model %q from nothing naming one", info, m)
		}
		if got := parseCPUModel(strings.NewReader("model name\t: Fuzz CPU\n" + info)); got != "Fuzz CPU" {
			t.Errorf("cpuinfo %q after a model name: model %q", info, got)
		}
	})
}
