package probe

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// privileges reports root and the two capabilities cnibench needs:
// CAP_NET_ADMIN for devices, addresses, routes and qdiscs, CAP_SYS_ADMIN
// for creating and entering network namespaces and mounting sysfs.
func privileges() []Result {
	root := Result{Name: Root, Kind: KindPrivilege, OK: os.Geteuid() == 0}
	if !root.OK {
		root.Detail = fmt.Sprintf("running as uid %d; cnibench creates namespaces and devices: run it as root (sudo)", os.Geteuid())
	}
	eff, err := effectiveCaps()
	out := []Result{root}
	for _, c := range []struct {
		name string
		bit  uint
		why  string
	}{
		{CapNetAdmin, unix.CAP_NET_ADMIN, "needed to create devices and qdiscs"},
		{CapSysAdmin, unix.CAP_SYS_ADMIN, "needed to create network namespaces"},
	} {
		r := Result{Name: c.name, Kind: KindPrivilege}
		switch {
		case err != nil:
			r.Detail = "cannot read the capabilities of this process: " + err.Error()
		case eff&(1<<c.bit) != 0:
			r.OK = true
		default:
			r.Detail = "not in the effective capability set (" + c.why + "); run as root or grant it"
		}
		out = append(out, r)
	}
	return out
}

// effectiveCaps reads CapEff from /proc/self/status.
func effectiveCaps() (uint64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "CapEff:"); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no CapEff line in /proc/self/status")
}
