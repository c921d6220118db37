package advise

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cnibench/cnibench/internal/advise/inspect"
)

// udevMatch is the value of a udev rule's NAME== or KERNEL== that
// matches exactly the devices names, one alternative each. Linux takes
// almost any byte in a name (dev_valid_name: not "/", ":" or
// whitespace, under 16 bytes), udev(7) does not: a value holding "*",
// "?" or "[" is a glob (udev-rules.c: string_is_glob, then fnmatch
// without FNM_NOESCAPE), where "\*" is a literal star; any other value
// is compared as it is, backslashes and all. So where a name has a glob
// character or a backslash the whole value becomes a glob with those
// escaped (a backslash as "[\\]": "\\" before the value's closing quote
// would read as udev's escaped quote, the one escape a quoted value
// has). "|" separates alternatives and cannot be escaped; quotes end
// the value, and RUN's command line is split by udev with quotes
// removed (strv_split_full, EXTRACT_UNQUOTE), so $name would reach the
// command altered: those names get no rule.
func udevMatch(names []string) (string, error) {
	glob := false
	for _, n := range names {
		if n == "" || len(n) > 15 || strings.ContainsAny(n, "/: \t\n\v\f\r") {
			return "", fmt.Errorf("%q is no interface name", n)
		}
		if strings.ContainsAny(n, `|"'`) {
			return "", fmt.Errorf("interface %q: a udev rule cannot match a name holding | or a quote exactly", n)
		}
		glob = glob || strings.ContainsAny(n, `*?[\`)
	}
	out := make([]string, len(names))
	for i, n := range names {
		if glob {
			n = globEscaper.Replace(n)
		}
		out[i] = n
	}
	return strings.Join(out, "|"), nil
}

var globEscaper = strings.NewReplacer(`\`, `[\\]`, `*`, `\*`, `?`, `\?`, `[`, `\[`)

// udevShellWord is s as a word of a "/bin/sh -c '...'" script in a
// udev RUN value: double-quoted for the shell (inside, "\", "$" and "`"
// are escaped), "$" and "%" doubled for udev's own substitution, the
// quotes written \" inside the rule's quoted value. s holds no quote
// (udevMatch refuses those names).
func udevShellWord(s string) string {
	s = strings.NewReplacer(`\`, `\\`, `$`, `\$`, "`", "\\`").Replace(s)
	s = strings.NewReplacer(`$`, `$$`, `%`, `%%`).Replace(s)
	return `\"` + s + `\"`
}

// udevNIC is {udev_nic}: {nic} for a udev match.
func udevNIC(in *inspect.Inspection) (string, error) {
	ns, err := nicDevs(in)
	if err != nil {
		return "", err
	}
	names := make([]string, len(ns))
	for i, n := range ns {
		names[i] = n.Name
	}
	return udevMatch(names)
}

// udevTunnel is {udev_tunnel}: {tunnel} for a udev match.
func udevTunnel(in *inspect.Inspection) (string, error) {
	t := primaryTunnel(in)
	if t == nil {
		return "", errors.New("no tunnel device")
	}
	return udevMatch([]string{t.Name})
}
