package probe

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/netns"
)

// tryTun creates a TUN device and lets it vanish by closing its file.
// Equivalent to: ip tuntap add dev cnbp-tun mode tun (not persistent).
//
// It runs inside the namespace (netns.Do) rather than through the netlink
// handle: a TUN device is created in the namespace of the thread that
// opens /dev/net/tun, whatever namespace a netlink handle points at.
func (s *scratch) tryTun() (bool, string) {
	var detail string
	err := netns.Do(s.ns, func() error {
		fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC, 0)
		if err != nil {
			detail = tunOpenFailed(err)
			return err
		}
		defer unix.Close(fd)
		ifr, err := unix.NewIfreq("cnbp-tun")
		if err != nil {
			detail = failed("creating a tun device", "tun", err)
			return err
		}
		ifr.SetUint16(unix.IFF_TUN | unix.IFF_NO_PI)
		if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
			detail = failed("creating a tun device", "tun", err)
			return err
		}
		return nil
	})
	if err != nil && detail == "" {
		detail = "not probed: " + err.Error()
	}
	return err == nil, detail
}

func tunOpenFailed(err error) string {
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "/dev/net/tun does not exist (kernel lacks the tun module, or the device node is missing: mknod /dev/net/tun c 10 200)"
	case errors.Is(err, unix.ENODEV), errors.Is(err, unix.ENXIO):
		return "opening /dev/net/tun failed: no such device (kernel lacks the tun module)"
	}
	return failed("opening /dev/net/tun", "tun", err)
}
