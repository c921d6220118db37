package study

import (
	"bytes"
	"strings"
	"testing"
)

// A top-level x- key holds a block that anchors reuse (or notes) and is
// ignored: the study resolves as if the block were written where it is
// used. Only the top level: an x- key inside spec is still a typo's
// refusal, and so is any other unknown key beside an x- one.
func TestExtensionKeys(t *testing.T) {
	plain := strings.Replace(knobStudy, "  tunings: [baseline]\n", "  tunings: [baseline, {name: rps, rps: {cpus: all}, side: both}]\n", 1)
	withX := "x-rps: &rps {rps: {cpus: all}, side: both}\nx-notes: tried on the lab's two nodes\n" +
		strings.Replace(knobStudy, "  tunings: [baseline]\n", "  tunings: [baseline, {<<: *rps, name: rps}]\n", 1)
	a, err := Parse("x.yaml", []byte(withX), Options{}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse("plain.yaml", []byte(plain), Options{}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	ya, _ := a.Marshal()
	yb, _ := b.Marshal()
	if !bytes.Equal(ya, yb) {
		t.Errorf("with an x- block the study resolves to\n%s\nwritten out to\n%s", ya, yb)
	}
	// Without any alias the x- key is ignored too.
	if _, err := Parse("x.yaml", []byte("x-notes: [a, b]\n"+knobStudy), Options{}, testCatalog); err != nil {
		t.Errorf("an x- key without aliases: %v", err)
	}
	for _, tc := range []struct{ src, want string }{
		{strings.Replace(withX, "  replicas: [1]\n", "  x-mine: 1\n  replicas: [1]\n", 1), `x.yaml:18: spec.x-mine: unknown field "x-mine" (not part of the cnibench/v1alpha1 study format)`},
		{strings.Replace(withX, "kind: Study\n", "kind: Study\nextra: 1\n", 1), `x.yaml:5: extra: unknown field "extra" of the study's top level (known: apiVersion, kind, metadata, spec, profiles, and x-... keys of your own)`},
	} {
		_, err := Parse("x.yaml", []byte(tc.src), Options{}, testCatalog)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %s", err, tc.want)
		}
	}
}
