package cniexec

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/containernetworking/cni/pkg/invoke"
	"github.com/containernetworking/cni/pkg/types"
	types100 "github.com/containernetworking/cni/pkg/types/100"
	"github.com/containernetworking/cni/pkg/version"
)

// FuzzPluginError: a plugin that fails prints a CNI error on stdout (the
// spec's {"cniVersion","code","msg","details"}), or anything at all, and
// may complain on stderr. The error names the plugin; it is the CNI
// error the plugin printed (code or msg set), for errors.As, and
// otherwise keeps the exit status; what stderr said is never lost.
func FuzzPluginError(f *testing.F) {
	for _, s := range [][2]string{
		{`{"cniVersion":"1.0.0","code":11,"msg":"try again later","details":"fake failure"}`, "fake plugin complains"},
		{`{"cniVersion":"1.0.0","code":7,"msg":"invalid network config","details":"no subnet"}`, ""},
		{`{"code":0,"msg":""}`, ""},
		{`null`, "panic: runtime error"},
		{`{"cniVersion":"1.0.0","ips":[{"address":"10.1.2.3/24"}]}`, ""},
		{`{"code":"11"}`, "\n"},
		{"plain text\n", ""},
		{"", ""},
	} {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	exit := errors.New("exit status 1")
	f.Fuzz(func(t *testing.T, stdout, stderr []byte) {
		err := pluginError("/opt/cni/bin/bridge", exit, stdout, stderr)
		if err == nil || !strings.HasPrefix(err.Error(), "bridge: ") {
			t.Fatalf("pluginError = %v, want it to name the plugin", err)
		}
		if s := strings.TrimSpace(string(stderr)); s != "" && !strings.Contains(err.Error(), s) {
			t.Errorf("stderr %q is not in %q", s, err)
		}
		var printed types.Error
		cni := json.Unmarshal(stdout, &printed) == nil && (printed.Code != 0 || printed.Msg != "")
		var got *types.Error
		switch {
		case errors.As(err, &got) != cni:
			t.Errorf("stdout %q: a CNI error is %v, errors.As found one: %v (%v)", stdout, cni, !cni, err)
		case cni && *got != printed:
			t.Errorf("stdout %q: CNI error %+v, want %+v", stdout, *got, printed)
		case !cni && !errors.Is(err, exit):
			t.Errorf("stdout %q: the exit status is lost: %v", stdout, err)
		}
	})
}

// fixedExec answers every plugin call with one stdout, as a plugin
// would print it; libcni decodes it (invoke.ExecPluginWithResult).
type fixedExec struct {
	version.PluginDecoder
	stdout []byte
}

func (e *fixedExec) ExecPlugin(context.Context, string, []byte, []string) ([]byte, error) {
	return e.stdout, nil
}

func (e *fixedExec) FindInPath(plugin string, _ []string) (string, error) { return plugin, nil }

// FuzzResult: what an ADD gave the pod is read from the plugin's stdout
// (libcni decodes it for the configuration's version, or the version the
// result names, and result converts it to 1.0.0). Nothing a plugin
// prints panics; a result listing an IPv4-mapped IPv6 address is
// refused, never read as IPv4; a result without an IPv4 address is an
// error, never a pod without an address; one with an address goes on to
// look for the host-side veth (here in a namespace that does not exist:
// an error too).
func FuzzResult(f *testing.F) {
	for _, s := range []string{
		`{"cniVersion":"1.0.0","interfaces":[{"name":"cni0","mac":"aa:bb:cc:dd:ee:ff"},{"name":"veth1234","mac":"aa:bb:cc:dd:ee:01"},{"name":"eth0","sandbox":"/var/run/netns/p"}],` +
			`"ips":[{"interface":2,"address":"10.244.1.5/24","gateway":"10.244.1.1"}],"routes":[{"dst":"0.0.0.0/0"}],"dns":{}}`,
		`{"cniVersion":"0.4.0","interfaces":[{"name":"eth0","sandbox":"/p"}],"ips":[{"version":"4","interface":0,"address":"10.1.2.3/24"}]}`,
		`{"cniVersion":"0.3.1","ips":[{"version":"6","interface":5,"address":"fd00::5/64"}]}`,
		`{"cniVersion":"0.2.0","ip4":{"ip":"10.1.2.3/24"}}`,
		`{"ips":[{"address":"::ffff:10.1.2.3/120"}]}`,
		`{"cniVersion":"1.0.0","ips":[{"interface":-1,"address":"10.1.2.3/24"}]}`,
		`{"cniVersion":"2.0.0"}`, `{}`, `null`, `[]`, ``, `garbage`,
	} {
		f.Add([]byte(s))
	}
	conf := []byte(fakeConf)
	n := &Node{Name: "node0", Netns: filepath.Join(f.TempDir(), "no-such-netns")}
	f.Fuzz(func(t *testing.T, stdout []byte) {
		res, err := invoke.ExecPluginWithResult(context.Background(), "fakeplug", conf, &invoke.Args{Command: "ADD"}, &fixedExec{stdout: stdout})
		if err != nil {
			return
		}
		_, err = n.result(res, "fakeplug")
		if err == nil {
			t.Fatalf("stdout %q: a result in a namespace that does not exist", stdout)
		}
		conv, cerr := types100.NewResultFromResult(res)
		if cerr != nil {
			if !strings.Contains(err.Error(), "read result") {
				t.Errorf("stdout %q: no 1.0.0 result (%v), but result says %v", stdout, cerr, err)
			}
			return
		}
		hasIPv4, mapped := false, false
		for _, ipc := range conv.IPs {
			// ParseCIDR gives an address written in IPv6 notation
			// a 16-byte mask, a dotted quad a 4-byte one.
			v4 := ipc.Address.IP.To4() != nil
			mapped = mapped || (v4 && len(ipc.Address.Mask) == net.IPv6len)
			hasIPv4 = hasIPv4 || (v4 && len(ipc.Address.Mask) == net.IPv4len)
		}
		if refused := strings.Contains(err.Error(), "IPv4-mapped"); refused != mapped {
			t.Fatalf("stdout %q: mapped address %v, but result says %v", stdout, mapped, err)
		}
		if mapped {
			return
		}
		if noAddr := strings.Contains(err.Error(), "no IPv4 address"); noAddr == hasIPv4 {
			t.Errorf("stdout %q: IPv4 address %v, but result says %v", stdout, hasIPv4, err)
		}
	})
}
