package probe

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// PktgenDir is where the kernel's packet generator is driven from once
// its module is loaded (Documentation/networking/pktgen.rst).
const PktgenDir = "/proc/net/pktgen"

// ErrNoPktgen is wrapped by Pktgen when this kernel has no packet
// generator.
var ErrNoPktgen = errors.New("this kernel has no pktgen")

// Pktgen reports whether the kernel's packet generator can be used: its
// control directory exists (module loaded or built in), or a pktgen
// module is there to load. It does not load the module: probing changes
// nothing on the host. Equivalent to:
//
//	test -d /proc/net/pktgen || modprobe -n pktgen
func Pktgen() error {
	return pktgen(PktgenDir, func() error { return modprobeDryRun("pktgen") })
}

func pktgen(dir string, dryRun func() error) error {
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return nil
	}
	if err := dryRun(); err != nil {
		return fmt.Errorf("%w: %s does not exist and no pktgen module can be loaded (%s; kernel %s needs CONFIG_NET_PKTGEN)",
			ErrNoPktgen, dir, err, kernelRelease())
	}
	return nil
}

func kernelRelease() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "(unknown release)"
	}
	return strings.TrimSpace(string(b))
}
