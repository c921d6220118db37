package study

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// FuzzParse feeds arbitrary text to the study parser: it must never panic,
// and every rejection must be one line.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.yaml")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err == nil {
			f.Add(b)
		}
	}
	if b, ok := BuiltinSource("rps-rfs"); ok {
		f.Add(b)
	}
	// Type errors, which are located by line, tag and value.
	f.Add([]byte("spec:\n  replicas: [1, \"a\\nb\"]\n  workloads:\n    - {name: t, tool: iperf3, parallel: [1], pin: 5}\n"))
	f.Add([]byte("spec: {tunings: [{name: t, sysctls: {a: {b: 1}}}], trials: {min: x}}\n"))
	// Floats where whole numbers are wanted: a fraction, a whole float,
	// an exponent far past any float's.
	f.Add([]byte("spec: {replicas: [1.5, 2.0, -.inf, 1e-99999999999999999999], trials: {min: 2.5, max: 2e1}, noise: {repeats: 0.5}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.yaml", data, Options{}, testCatalog)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("multi-line error: %q", err)
			}
			return
		}
		if len(s.Cells()) == 0 {
			t.Errorf("valid study with no cells")
		}
	})
}

// FuzzSetAndProfile applies random --set overrides and a random profile
// to valid built-in studies: it must never panic, every rejection must be
// one line naming the file, and whatever is accepted must validate, stay
// within the bounds, and survive a round trip through Marshal.
func FuzzSetAndProfile(f *testing.F) {
	f.Add(uint8(0), "trials=3", "replicas=[1,2]", "")
	f.Add(uint8(0), "replicas=[1.5, 4.0]", "noise.repeats=0.5", "{trials: {min: 2.5, max: 2e1}}")
	f.Add(uint8(1), "metadata.name=../../etc/x", "", "{trials: 2}")
	f.Add(uint8(0), "duration=2562047h", "warmup=1s", "{duration: 4s}")
	f.Add(uint8(0), "tunings=[baseline, {name: r, rps: {cpus: all}, rfs: {sockFlowEntries: 1073741824, flowCnt: 1}}]", "", "")
	f.Add(uint8(1), "workloads=[{name: h, tool: ab, size: 99999999999999999999G}]", "", "{replicas: [1, 1]}")
	f.Add(uint8(2), "reference=[{replicas: -1, metric: bitrate, value: 1}]", "nodes.server.cpus=0-4095", "{workloads: [{tool: sockperf}]}")
	f.Add(uint8(0), "spec=1", "profiles=[1]", "[1]")
	f.Add(uint8(0), `tunings=[baseline, {name: s, pods: true, sysctls: {net.core.busy_read: "1\t2", net..x: 1, net.a/b: 2}}]`, "", "")
	f.Add(uint8(1), "tunings=[baseline, {name: c, side: both, rps: {cpus: all-but-softirq-core}}, {name: d, side: Client}]", "", "")
	// Named entries, plain names spelled out.
	f.Add(uint8(0), "tunings.rps.pod=true", "datapaths.calico-vxlan.mtu={x: 1}", "")
	f.Add(uint8(3), "workloads.udp.sender=pktgen", "impairments.loss-low.x=1", "{tunings: [baseline, rps]}")
	builtins := Builtins()
	f.Fuzz(func(t *testing.T, which uint8, set1, set2, profile string) {
		name := builtins[int(which)%len(builtins)]
		src, _ := BuiltinSource(name)
		opt := Options{}
		for _, s := range []string{set1, set2} {
			if s != "" {
				opt.Set = append(opt.Set, s)
			}
		}
		if profile != "" {
			// The profile is part of the study text, so it is placed in
			// the tree as a file would carry it.
			var doc yaml.Node
			if err := yaml.Unmarshal(src, &doc); err != nil {
				t.Fatal(err)
			}
			if err := applySet(doc.Content[0], "profiles.fuzz="+profile); err != nil {
				return
			}
			b, err := yaml.Marshal(&doc)
			if err != nil {
				return
			}
			src, opt.Profile = b, "fuzz"
		}
		s, err := Parse("builtin:"+name, src, opt, testCatalog)
		if err != nil {
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("multi-line error: %q", msg)
			}
			if !strings.HasPrefix(msg, "builtin:"+name) {
				t.Errorf("error does not name the study: %q", msg)
			}
			return
		}
		if errs := s.Validate(testCatalog); len(errs) > 0 {
			t.Fatalf("accepted study does not validate: %v", errs[0])
		}
		if !ValidName(s.Metadata.Name) {
			t.Errorf("accepted name %q", s.Metadata.Name)
		}
		if n := len(s.Cells()); n == 0 || n > MaxCells {
			t.Errorf("accepted %d cells", n)
		}
		for _, tn := range s.Spec.Tunings {
			if tn.RFS != nil && (tn.RFS.FlowCnt > MaxRFSEntries || tn.RFS.SockFlowEntries > MaxRFSEntries) {
				t.Errorf("accepted RFS %+v", *tn.RFS)
			}
		}
		if d := s.Spec.Duration.Duration; d <= 0 || d > MaxDuration || s.Spec.Cooldown.Duration > MaxDuration {
			t.Errorf("accepted duration %s cooldown %s", d, s.Spec.Cooldown.Duration)
		}
		b, err := s.Marshal()
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		if _, err := Parse("resolved.yaml", b, Options{}, testCatalog); err != nil {
			t.Errorf("resolved study does not parse again: %v\n%s", err, b)
		}
	})
}
