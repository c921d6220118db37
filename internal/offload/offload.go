// Package offload turns a network device's offload features on or off
// with ethtool inside a node, as `ethtool -K DEV FEATURE on|off` does (the
// seed-004 "Flannel-off" case disables VXLAN tunnel segmentation offload).
package offload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cnibench/cnibench/internal/engine"
)

// Starter runs a program on a node; engine.Node is one.
type Starter interface {
	Start(ctx context.Context, argv []string) (engine.Process, error)
}

// Set asks ethtool to turn one feature of dev on or off. One feature per
// call, so that a feature the device cannot change is told apart from one
// it does not know. ethtool exits 0 when the feature already has the
// requested value, even when it is fixed; it also exits 0 when some bit
// changed, so a group's bits the kernel kept (TSO's with checksumming off)
// are found in its "Actual changes" and refused unless the device fixes them.
func Set(ctx context.Context, n Starter, dev, feature string, on bool) error {
	argv := []string{"ethtool", "-K", dev, feature, state(on)}
	p, err := n.Start(ctx, argv)
	if err != nil {
		return fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	stdout, stderr, err := p.Wait()
	if err == nil {
		requested := requestedLines(string(stdout) + string(stderr))
		if len(requested) == 0 {
			return nil
		}
		if _, kept := byDevice(requested, show(ctx, n, dev)); len(kept) > 0 {
			return fmt.Errorf("%s: %s", strings.Join(argv, " "), keptText(kept))
		}
		return nil
	}
	var ee *engine.ExitError
	if errors.As(err, &ee) {
		var shown []byte
		if bytes.Contains(ee.Stderr, couldNotChange) || bytes.Contains(ee.Stdout, couldNotChange) {
			shown = show(ctx, n, dev)
		}
		return fmt.Errorf("%s: %s", strings.Join(argv, " "), Explain(ee.Stderr, ee.Stdout, shown))
	}
	return fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
}

// couldNotChange is what ethtool -K prints when none of the requested
// feature bits took (netlink/features.c, nothing_changed).
var couldNotChange = []byte("Could not change any device features")

// Explain turns ethtool -K's complaint into one line: "not a feature" for
// an unknown name; for "Could not change any device features", which
// ethtool prints whenever none of the requested bits took, what shown
// (`ethtool -k DEV` read after the failure, nil when unread) says of the
// features -K listed as "[requested on|off]": "fixed on this device" when
// each is "[fixed]" there, else that the kernel or driver kept it (TSO
// and GSO need scatter-gather, a driver may refuse), quoting the lines.
func Explain(stderr, stdout, shown []byte) string {
	all := string(bytes.TrimSpace(append(append([]byte{}, stderr...), stdout...)))
	switch {
	case strings.Contains(all, "bit name not found"):
		return "not a feature ethtool knows"
	case strings.Contains(all, string(couldNotChange)):
		return explainUnchanged(all, shown)
	case all == "":
		return "ethtool failed without a message"
	}
	return strings.Join(strings.Fields(all), " ")
}

func explainUnchanged(out string, shown []byte) string {
	requested := requestedLines(out)
	if len(requested) == 0 {
		return "ethtool could not change it"
	}
	if shown == nil {
		return "ethtool could not change it: " + strings.Join(requested, "; ")
	}
	fixed, kept := byDevice(requested, shown)
	if len(kept) > 0 {
		return keptText(kept)
	}
	return "fixed on this device (ethtool -k: " + strings.Join(fixed, "; ") + ")"
}

// requestedLines are ethtool -K's "Actual changes" lines for bits that did
// not take the requested value ("name: off [requested on]").
func requestedLines(out string) []string {
	var requested []string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); strings.Contains(l, "[requested ") {
			requested = append(requested, strings.Join(strings.Fields(l), " "))
		}
	}
	return requested
}

// byDevice splits the requested bits into those `ethtool -k` (shown) marks
// "[fixed]", as its lines, and those the kernel or driver kept although
// the device does not fix them (a group's fixed bits, as tx-checksum-ipv4
// in tx-checksumming, are the device's to keep). Unread -k output (nil)
// cannot tell them apart: every bit counts as kept.
func byDevice(requested []string, shown []byte) (fixed, kept []string) {
	fixedLine := map[string]string{}
	for _, l := range strings.Split(string(shown), "\n") {
		l = strings.Join(strings.Fields(l), " ")
		if name, _, ok := strings.Cut(l, ":"); ok && strings.Contains(l, "[fixed]") {
			fixedLine[name] = l
		}
	}
	for _, r := range requested {
		name, _, _ := strings.Cut(r, ":")
		if l, ok := fixedLine[name]; ok {
			fixed = append(fixed, l)
		} else {
			kept = append(kept, r)
		}
	}
	return fixed, kept
}

// keptText says which bits the kernel or driver kept, quoting ethtool.
func keptText(kept []string) string {
	state := "off"
	for _, r := range kept {
		if _, v, _ := strings.Cut(r, ":"); strings.HasPrefix(strings.TrimSpace(v), "on") {
			state = "on"
		}
	}
	return "the kernel or driver kept it " + state + " (it may depend on another feature): " + strings.Join(kept, "; ")
}

func state(on bool) string {
	if on {
		return "on"
	}
	return "off"
}
