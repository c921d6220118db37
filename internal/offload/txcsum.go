package offload

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/netns"
)

// TxChecksumOff turns tx checksumming off on dev in network namespace
// ns, as Felix does on its tunnel devices where it finds the kernel's
// checksum offload broken (Calico v3.29.7 felix/ethtool/ethtool.go,
// EthtoolTXOff): the legacy ethtool ioctl, ETHTOOL_GTXCSUM, then
// ETHTOOL_STXCSUM 0 only if it was on. The kernel then drops TSO from
// the device too, which cannot segment what it may not checksum
// (netdev_fix_features). The ioctl rather than Set's ethtool program
// because a datapath's node set-up, which calls it, has no node to run
// a program on, and needs no ethtool for it. changed reports whether
// tx checksumming was on. Equivalent to:
//
//	ip netns exec NS ethtool -K DEV tx off
func TxChecksumOff(ns, dev string) (changed bool, err error) {
	err = netns.Do(ns, func() error {
		// SIOCETHTOOL finds dev in the socket's namespace.
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("socket for ethtool ioctl in %s: %w", ns, err)
		}
		defer unix.Close(fd)
		on, err := ethtoolValue(fd, dev, unix.ETHTOOL_GTXCSUM, 0)
		if err != nil {
			return fmt.Errorf("read tx checksumming of %s in %s (ETHTOOL_GTXCSUM): %w", dev, ns, err)
		}
		if on == 0 {
			return nil
		}
		if _, err := ethtoolValue(fd, dev, unix.ETHTOOL_STXCSUM, 0); err != nil {
			return fmt.Errorf("ethtool -K %s tx off in %s (ETHTOOL_STXCSUM): %w", dev, ns, err)
		}
		changed = true
		return nil
	})
	return changed, err
}

// ethtoolValueArg is struct ethtool_value (include/uapi/linux/ethtool.h).
type ethtoolValueArg struct{ cmd, data uint32 }

// ifreqData is struct ifreq with ifr_data set, what SIOCETHTOOL takes
// (x/sys/unix keeps its own unexported).
type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [24 - unsafe.Sizeof(unsafe.Pointer(nil))]byte
}

// ethtoolValue runs one ethtool command that takes and returns a struct
// ethtool_value, returning its data.
func ethtoolValue(fd int, dev string, cmd, data uint32) (uint32, error) {
	if len(dev) >= unix.IFNAMSIZ {
		return 0, fmt.Errorf("device name %q is longer than %d bytes", dev, unix.IFNAMSIZ-1)
	}
	v := &ethtoolValueArg{cmd: cmd, data: data}
	ifr := &ifreqData{data: unsafe.Pointer(v)}
	copy(ifr.name[:], dev)
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(ifr)))
	runtime.KeepAlive(ifr)
	if errno != 0 {
		return 0, errno
	}
	return v.data, nil
}
