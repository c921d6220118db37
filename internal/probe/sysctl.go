package probe

import (
	"errors"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/suggest"
)

// sysctlPrefix marks a sysctl as a feature: "sysctl:net.core.busy_poll".
const sysctlPrefix = "sysctl:"

// Sysctl is the feature a tuning's sysctl needs: that this kernel has it.
// A network sysctl is looked for in the initial namespace, which shows
// the global ones (net.core.busy_poll) and its own copy of each
// per-namespace one (net.ipv4.tcp_rmem).
func Sysctl(name string) string { return sysctlPrefix + name }

// probeSysctl checks that the sysctl named by the feature exists.
// Equivalent to: sysctl net.core.busy_poll
func probeSysctl(feature string) Result {
	name := strings.TrimPrefix(feature, sysctlPrefix)
	r := Result{Name: feature, Kind: KindKernel}
	file := study.SysctlPath(name)
	if strings.Contains(name, "/") || strings.Contains(name, "..") {
		r.Detail = name + " is not a sysctl name"
		return r
	}
	var near []string
	err := netns.Do(netns.InitRef("/proc"), func() error {
		_, err := os.Stat(file)
		if errors.Is(err, os.ErrNotExist) {
			// Its neighbours, for a name that is one slip away.
			ents, _ := os.ReadDir(path.Dir(file))
			parent := name[:strings.LastIndex(name, ".")+1]
			for _, e := range ents {
				near = append(near, parent+e.Name())
			}
		}
		return err
	})
	switch {
	case err == nil:
		r.OK, r.Detail = true, file
	case errors.Is(err, os.ErrNotExist):
		r.Detail = strings.TrimSpace(suggest.Hint(name, near) + "this kernel has no " + file +
			" (misspelt, or built without its feature)")
	default:
		r.Detail = "checking " + file + " failed: " + err.Error()
	}
	return r
}

// IsKernel reports whether name is a kernel feature cnibench probes: one
// of KernelFeatures, or a Sysctl.
func IsKernel(name string) bool {
	return slices.Contains(KernelFeatures(), name) || strings.HasPrefix(name, sysctlPrefix)
}
