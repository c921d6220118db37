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

// The kernel reads a sysctl's numbers as C does (base 0: "050" is 40,
// "0x10" 16) and gives them back in decimal, which the tuning's
// read-back found changed: every trial of the tuning failed. Such a
// value is refused with the decimal to write; 0 and decimal numbers,
// several in one value too, are fine.
func TestSysctlLeadingZeroRefused(t *testing.T) {
	for value, want := range map[string]string{"050": `"050": the kernel reads a number with a leading 0 in another base than ten (050 is 40) and gives it back in decimal; write 40`,
		`"4096 087380 6291456"`: "(087380 is no octal number", "0x10": "(0x10 is 16)"} {
		data := withDefaults("  tunings:\n    - baseline\n    - name: ts\n      sysctls:\n        net.ipv4.tcp_rmem: " + value + "\n")
		_, err := Parse("f.yaml", []byte(data), Options{}, testCatalog)
		if err == nil || !strings.Contains(err.Error(), "f.yaml:10: spec.tunings[1].sysctls.net.ipv4.tcp_rmem") || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %s", value, err, want)
		}
	}
	// A CPU mask is hex, leading 0s and the kernel's comma form too.
	data := withDefaults("  tunings: [baseline, {name: ts, sysctls: {net.ipv4.tcp_rmem: \"4096 87380 6291456\", net.ipv4.tcp_sack: 0, net.core.busy_read: -0, " +
		"net.core.flow_limit_cpu_bitmap: \"0f\", net.core.rps_default_mask: \"00000000,00000010\"}}]\n")
	if _, err := Parse("f.yaml", []byte(data), Options{}, testCatalog); err != nil {
		t.Error(err)
	}
}

// A qdisc or congestion control is named as the kernel names it: the
// preflight probe looks it up by that name (probe.SysctlValue, whose
// feature marks a namespace write with "@netns"), so "bbr@netns" was
// probed as bbr and passed, and every trial's write of the literal value
// failed. Such a value is refused at its line.
func TestSysctlModuleValueIsAName(t *testing.T) {
	for name, value := range map[string]string{
		"net.ipv4.tcp_congestion_control": "bbr@netns",
		"net.core.default_qdisc":          "fq codel",
	} {
		data := withDefaults("  tunings:\n    - baseline\n    - name: cc\n      sysctls:\n        " + name + ": " + value + "\n")
		_, err := Parse("f.yaml", []byte(data), Options{}, testCatalog)
		if err == nil || !strings.HasPrefix(err.Error(), "f.yaml:10: spec.tunings[1].sysctls."+name+": ") || !strings.Contains(err.Error(), "want lower-case letters, digits and '_'") {
			t.Errorf("%s: %s: %v", name, value, err)
		}
	}
	data := withDefaults("  tunings: [baseline, {name: q, sysctls: {net.core.default_qdisc: fq_codel, net.ipv4.tcp_congestion_control: dctcp}}]\n")
	if _, err := Parse("f.yaml", []byte(data), Options{}, testCatalog); err != nil {
		t.Error(err)
	}
}

// A sysctl number with a unit or a fraction ("16M", "0.5", one word of
// several too) is refused at its line, naming the word: the kernel reads
// plain integers, and every trial's write failed (EINVAL). Integers,
// vectors of them, masks and names are fine.
func TestSysctlPlainNumbers(t *testing.T) {
	for value, want := range map[string]string{
		`"16M"`:             `"16M": 16M has a unit`,
		`"4096 131072 16M"`: `"4096 131072 16M": 16M has a unit`,
		`"4096 87380 6MiB"`: `6MiB has a unit`,
		"0.5":               `"0.5": 0.5 is not a whole number`,
		`"4096 87380 1e6"`:  `1e6 is not a whole number`,
		`"4096 87380 6.5M"`: `6.5M has a unit`,
		`"10ms"`:            `10ms has a unit`,
	} {
		data := withDefaults("  tunings:\n    - baseline\n    - name: ts\n      sysctls:\n        net.ipv4.tcp_rmem: " + value + "\n")
		_, err := Parse("f.yaml", []byte(data), Options{}, testCatalog)
		prefix := "f.yaml:10: spec.tunings[1].sysctls.net.ipv4.tcp_rmem: net.ipv4.tcp_rmem: "
		if err == nil || !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "write the number plainly") {
			t.Errorf("%s: got %v, want %s...%s", value, err, prefix, want)
		}
	}
	data := withDefaults("  tunings: [baseline, {name: ts, sysctls: {net.ipv4.tcp_rmem: \"4096 131072 16777216\", net.core.busy_read: 50, " +
		"net.ipv4.ip_local_port_range: \"32768\t60999\", net.ipv4.tcp_congestion_control: bbr, net.core.rps_default_mask: \"0f\", " +
		"net.core.netdev_max_backlog: -1}}]\n")
	if _, err := Parse("f.yaml", []byte(data), Options{}, testCatalog); err != nil {
		t.Error(err)
	}
}
