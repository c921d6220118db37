package calicopod

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/offload"
)

// Felix (Calico v3.29.7, which cnibench follows) turns tx checksum
// offload off on its tunnel devices, vxlan.calico and tunl0, on a kernel
// whose checksum offload it takes to be broken for packets with an
// SNATted source:
//
//   - felix/environment/feature_detect_linux.go:135:
//     ChecksumOffloadBroken: kerV.Compare(v5Dot7Dot0) <= 0 (v5Dot7Dot0,
//     line 54: "contains a fix for checksum offloading");
//   - felix/dataplane/linux/int_dataplane.go:645 and :926 hand it to the
//     VXLAN and IP-in-IP managers, which run ethtool.EthtoolTXOff on the
//     device before setting it up (vxlan_mgr.go:740-745, ipip_mgr.go:
//     134-139) and fail the device's set-up if that fails.
//
// Turning tx checksumming off makes the kernel drop TSO from the device
// too, so on such a kernel every packet a pod sends through the tunnel
// is segmented and checksummed in software before encapsulation. Calico
// v3.25.0 to v3.27.x set the flag on every kernel ("Was supposed to be
// fixed in v5.7 but still seems to be broken", feature_detect_linux.go
// :131 in v3.26.0 and v3.27.0); v3.28.0 brought the version test back.

// checksumFixed is the kernel Felix takes to have fixed checksum offload
// once a release is above it (v5Dot7Dot0).
var checksumFixed = []int{5, 7, 0}

// felixKernelVersion is what Felix reads of a kernel's version
// (felix/environment/versionparse.go:29, kernelVersionRegexp, there on
// /proc/version's "Linux version RELEASE"): three numbers and a fourth
// after a dash, if there is one.
var felixKernelVersion = regexp.MustCompile(`^(\d+)\.(\d+)\.(\d+)(?:-(\d+))?`)

// ChecksumOffloadBroken is Felix's verdict on a kernel release (uname
// -r): broken up to 5.7.0 itself. It compares as Felix's Version.Compare
// (versionparse.go:64) does, number by number with a longer version the
// larger where they agree, so 5.7.0-1-generic, read as 5.7.0-1, is past
// 5.7.0 while 5.4.0-150-generic and 4.18.0-553.el8 are not. A release
// Felix cannot read counts as the 3.10.0 its getKernelVersion falls back
// to (feature_detect_linux.go:273-285): broken.
func ChecksumOffloadBroken(release string) bool {
	m := felixKernelVersion.FindStringSubmatch(release)
	if m == nil {
		return true
	}
	var v []int
	for _, s := range m[1:] {
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			return true
		}
		v = append(v, n)
	}
	return slices.Compare(v, checksumFixed) <= 0
}

// The modes (datapath.Moded, env.json's datapaths.NAME.mode) of a
// Calico tunnel datapath: its tunnel devices' tx checksumming turned off
// as Felix turns it off, or left as the kernel made it. Both are Felix's
// own form on their kernels, so neither is a stand-in; both are named,
// so that compare can tell two runs' forms apart from a run made before
// the mode was recorded ("").
const (
	TxOffMode = "tunnel-tx-checksum-off"
	TxOnMode  = "tunnel-tx-checksum-on"
)

// FelixTxOff is held by the Calico datapaths with a tunnel device: their
// SetupNode calls Setup, which turns the tunnel's tx checksumming off
// where Felix would, and their BuiltMode says whether it did, for the
// run to record: the same study measures another path on a kernel up to
// 5.7.0 than on a later one.
type FelixTxOff struct {
	// Release is the kernel release Felix's rule is applied to; "" is
	// this kernel's (the emulated nodes share it). Tests set an old one.
	Release string
	mode    string
}

// Setup turns tx checksumming off on the node's tunnel device dev where
// ChecksumOffloadBroken says Felix would, before the device is brought
// up, as Felix orders it; a failure fails the node's set-up, as Felix's
// fails the device's.
func (f *FelixTxOff) Setup(n datapath.Node, dev string) error {
	f.mode = ""
	release := f.Release
	if release == "" {
		release = kernelRelease()
	}
	if !ChecksumOffloadBroken(release) {
		f.mode = TxOnMode
		return nil
	}
	if _, err := offload.TxChecksumOff(n.Netns, dev); err != nil {
		return fmt.Errorf("tx checksum offload off on %s of %s, as Felix does on kernel %q: %w", dev, n.Name, release, err)
	}
	f.mode = TxOffMode
	return nil
}

// BuiltMode implements datapath.Moded: TxOffMode or TxOnMode, by what
// Setup did; "" before it ran.
func (f *FelixTxOff) BuiltMode() (mode, standIn string) { return f.mode, "" }

// kernelRelease is this kernel's release (uname -r); "" where unreadable,
// which ChecksumOffloadBroken takes as Felix takes it.
func kernelRelease() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:])
}
