package study

import (
	"strings"
	"testing"
)

// A sysctl's value written as a YAML boolean is refused at its line in
// the file, with the number the kernel takes: it arrived as the word
// "false", which the kernel refused (EINVAL) at the first trial, after
// the nodes were built and the baseline trials ran.
func TestSysctlBooleanRefusedAtLine(t *testing.T) {
	for value, want := range map[string]string{"false": "0", "on": "1", "No": "0", "TRUE": "1"} {
		data := withDefaults("  tunings:\n    - baseline\n    - name: ts\n      sysctls:\n        net.ipv4.tcp_timestamps: " + value + "\n")
		_, err := Parse("f.yaml", []byte(data), Options{}, testCatalog)
		prefix := `f.yaml:10: spec.tunings[1].sysctls.net.ipv4.tcp_timestamps: net.ipv4.tcp_timestamps: "` + value + `" is a YAML boolean`
		if err == nil || !strings.HasPrefix(err.Error(), prefix) || !strings.HasSuffix(err.Error(), "write "+want) {
			t.Errorf("%s: got %v, want %s...write %s", value, err, prefix, want)
		}
	}
	// Numbers and words the kernel takes are fine.
	data := withDefaults("  tunings: [baseline, {name: ts, sysctls: {net.ipv4.tcp_timestamps: 0, net.ipv4.tcp_congestion_control: bbr}}]\n")
	if _, err := Parse("f.yaml", []byte(data), Options{}, testCatalog); err != nil {
		t.Error(err)
	}
}
