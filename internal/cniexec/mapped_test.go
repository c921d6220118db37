package cniexec

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/containernetworking/cni/pkg/invoke"
)

// TestResultRefusesMappedIPv4: net.IP.To4 reads ::ffff:10.1.2.3 as
// 10.1.2.3, so a plugin reporting an IPv4-mapped address had the pod
// taken for 10.1.2.3. Such a result is refused, in every result version
// and wherever the address is listed, naming the plugin and the address
// as written. A dotted quad is still read (it goes on to the host veth:
// here an error, the node's namespace does not exist).
func TestResultRefusesMappedIPv4(t *testing.T) {
	n := &Node{Name: "node0", Netns: filepath.Join(t.TempDir(), "no-such-netns")}
	read := func(stdout string) error {
		t.Helper()
		res, err := invoke.ExecPluginWithResult(context.Background(), "fakeplug", []byte(fakeConf), &invoke.Args{Command: "ADD"}, &fixedExec{stdout: []byte(stdout)})
		if err != nil {
			t.Fatalf("%s: %v", stdout, err)
		}
		_, err = n.result(res, "fakeplug")
		return err
	}
	for _, stdout := range []string{
		`{"cniVersion":"1.0.0","ips":[{"address":"::ffff:10.1.2.3/120"}]}`,
		`{"cniVersion":"1.0.0","ips":[{"address":"::FFFF:a01:203/120"}]}`,
		`{"cniVersion":"1.0.0","ips":[{"address":"10.1.2.4/24"},{"address":"::ffff:10.1.2.3/120"}]}`,
		`{"cniVersion":"0.4.0","ips":[{"version":"4","address":"::ffff:10.1.2.3/120"}]}`,
		`{"cniVersion":"0.2.0","ip4":{"ip":"::ffff:10.1.2.3/120"}}`,
	} {
		err := read(stdout)
		if err == nil || !strings.Contains(err.Error(), "plugin fakeplug gave the pod the IPv4-mapped IPv6 address ::ffff:10.1.2.3/120") {
			t.Errorf("%s: %v, want the mapped address refused", stdout, err)
		}
	}
	for _, stdout := range []string{
		`{"cniVersion":"1.0.0","ips":[{"address":"10.1.2.3/24"}]}`,
		`{"cniVersion":"1.0.0","ips":[{"address":"fd00::5/64"},{"address":"10.1.2.3/24"}]}`,
	} {
		if err := read(stdout); err == nil || strings.Contains(err.Error(), "mapped") || strings.Contains(err.Error(), "no IPv4 address") {
			t.Errorf("%s: %v, want the address read and the namespace missing", stdout, err)
		}
	}
}
