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
// requested value, even when it is fixed.
func Set(ctx context.Context, n Starter, dev, feature string, on bool) error {
	argv := []string{"ethtool", "-K", dev, feature, state(on)}
	p, err := n.Start(ctx, argv)
	if err != nil {
		return fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	_, _, err = p.Wait()
	if err == nil {
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
	var requested []string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); strings.Contains(l, "[requested ") {
			requested = append(requested, strings.Join(strings.Fields(l), " "))
		}
	}
	if len(requested) == 0 {
		return "ethtool could not change it"
	}
	if shown == nil {
		return "ethtool could not change it: " + strings.Join(requested, "; ")
	}
	fixed := map[string]string{}
	for _, l := range strings.Split(string(shown), "\n") {
		l = strings.Join(strings.Fields(l), " ")
		if name, _, ok := strings.Cut(l, ":"); ok && strings.Contains(l, "[fixed]") {
			fixed[name] = l
		}
	}
	var fixedLines, kept []string
	state := "off"
	for _, r := range requested {
		name, v, _ := strings.Cut(r, ":")
		if l, ok := fixed[name]; ok {
			fixedLines = append(fixedLines, l)
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(v), "on") {
			state = "on"
		}
		kept = append(kept, r)
	}
	if len(kept) == 0 {
		return "fixed on this device (ethtool -k: " + strings.Join(fixedLines, "; ") + ")"
	}
	return "the kernel or driver kept it " + state + " (it may depend on another feature): " + strings.Join(kept, "; ")
}

func state(on bool) string {
	if on {
		return "on"
	}
	return "off"
}
