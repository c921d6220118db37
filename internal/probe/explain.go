package probe

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// failed words a failed attempt for a human: what was tried, what the
// kernel answered, and what that most likely means. module is the kernel
// module providing the feature. A bare errno is never shown.
//
//	failed("creating an ipip device", "ipip", EOPNOTSUPP)
//	= "creating an ipip device failed: operation not supported (kernel lacks the ipip module)"
func failed(what, module string, err error) string {
	return what + " failed: " + reason(module, err)
}

func reason(module string, err error) string {
	var errno unix.Errno
	if !errors.As(err, &errno) {
		return err.Error()
	}
	// Keep the whole message: the netlink library appends the kernel's
	// extended ack ("operation not supported: Unknown device type").
	text := err.Error()
	if !strings.Contains(text, errno.Error()) {
		text += ": " + errno.Error()
	}
	lacks := fmt.Sprintf("kernel lacks the %s module", module)
	var hint string
	switch errno {
	case unix.EOPNOTSUPP, unix.ENODEV, unix.ENXIO, unix.EPROTONOSUPPORT, unix.EAFNOSUPPORT, unix.ENOPROTOOPT:
		hint = lacks
	case unix.ENOENT:
		hint = "unknown kind: " + lacks
	case unix.EINVAL:
		hint = "the kernel rejected the request; most likely it " + strings.TrimPrefix(lacks, "kernel ")
	case unix.ENOSYS:
		hint = "this kernel was built without it"
	case unix.EPERM, unix.EACCES:
		hint = "a privilege issue, not a missing feature: run as root (needs CAP_NET_ADMIN)"
	case unix.EEXIST:
		hint = "a device of that name already exists"
	case unix.EBUSY:
		hint = "the device or resource is busy"
	case unix.ENOMEM, unix.ENOBUFS:
		hint = "the kernel is out of memory"
	default:
		return text
	}
	return text + " (" + hint + ")"
}
