package cniexec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/containernetworking/cni/pkg/types"

	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/netns"
)

// The test binary doubles as a CNI plugin: linked into a plugin
// directory as "fakeplug" or "loopback", it logs how it was called (one
// JSON line in $CNIEXEC_FAKE_LOG) and answers like a plugin.
const (
	fakeLogEnv  = "CNIEXEC_FAKE_LOG"
	fakeFailEnv = "CNIEXEC_FAKE_FAIL"
	// fakeMeetEnv names a directory where each plugin's ADD marks its
	// start and waits for the other's: it fails unless both run at once.
	fakeMeetEnv = "CNIEXEC_FAKE_MEET"
)

func TestMain(m *testing.M) {
	switch filepath.Base(os.Args[0]) {
	case "fakeplug", "loopback":
		os.Exit(fakePlugin())
	}
	os.Exit(m.Run())
}

// call is what the fake plugin saw.
type call struct {
	Argv  []string          `json:"argv"`
	Env   map[string]string `json:"env"`
	Netns string            `json:"netns"` // readlink /proc/self/ns/net
	Stdin json.RawMessage   `json:"stdin"`
}

func fakePlugin() int {
	c := call{Argv: os.Args, Env: map[string]string{}}
	for _, kv := range os.Environ() {
		if k, v, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "CNI_") {
			c.Env[k] = v
		}
	}
	c.Netns, _ = os.Readlink("/proc/self/ns/net")
	stdin, _ := os.ReadFile("/dev/stdin")
	c.Stdin = stdin
	line, _ := json.Marshal(c)
	f, err := os.OpenFile(os.Getenv(fakeLogEnv), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		fmt.Printf(`{"code":999,"msg":"fake plugin cannot log: %v"}`, err)
		return 1
	}
	f.Write(append(line, '\n'))
	f.Close()
	name := filepath.Base(os.Args[0])
	if c.Env["CNI_COMMAND"] != "ADD" {
		return 0
	}
	if dir := os.Getenv(fakeMeetEnv); dir != "" && !meet(dir, name) {
		fmt.Printf(`{"cniVersion":"1.0.0","code":999,"msg":"%s ran alone: the other network's ADD did not start within 10 s"}`, name)
		return 1
	}
	if name == "fakeplug" && os.Getenv(fakeFailEnv) != "" {
		fmt.Print(`{"cniVersion":"1.0.0","code":11,"msg":"try again later","details":"fake failure"}`)
		fmt.Fprint(os.Stderr, "fake plugin complains")
		return 1
	}
	addr := "10.1.2.3/24"
	if name == "loopback" {
		addr = "127.0.0.1/8"
	}
	fmt.Printf(`{"cniVersion":"1.0.0","interfaces":[{"name":%q,"sandbox":%q}],"ips":[{"interface":0,"address":%q}]}`,
		c.Env["CNI_IFNAME"], c.Env["CNI_NETNS"], addr)
	return 0
}

// meet marks name's start in dir and waits for both plugins' marks.
func meet(dir, name string) bool {
	if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
		return false
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		marks, _ := filepath.Glob(filepath.Join(dir, "*"))
		if len(marks) == 2 {
			return true
		}
	}
	return false
}

const fakeConf = `{"cniVersion":"1.0.0","name":"fakenet","plugins":[{"type":"fakeplug","mtu":1450,"ipam":{"type":"host-local","ranges":[[{"subnet":"10.1.2.0/24"}]]}}]}`

func TestWithDataDir(t *testing.T) {
	b, err := WithDataDir([]byte(fakeConf), "/run/cnibench/state/r/n/networks")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"cniVersion":"1.0.0","name":"fakenet","plugins":[{"ipam":{"dataDir":"/run/cnibench/state/r/n/networks","ranges":[[{"subnet":"10.1.2.0/24"}]],"type":"host-local"},"mtu":1450,"type":"fakeplug"}]}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	other := `{"cniVersion":"1.0.0","name":"x","plugins":[{"type":"bridge","ipam":{"type":"static"}},{"type":"portmap"}]}`
	if b, err := WithDataDir([]byte(other), "/d"); err != nil || strings.Contains(string(b), "dataDir") {
		t.Errorf("non-host-local IPAM: %s, %v", b, err)
	}
	own := `{"cniVersion":"1.0.0","name":"x","plugins":[{"type":"bridge","ipam":{"type":"host-local","dataDir":"/var/lib/cni/networks"}}]}`
	if _, err := WithDataDir([]byte(own), "/d"); err == nil || !strings.Contains(err.Error(), "/var/lib/cni/networks") {
		t.Errorf("a configuration with its own dataDir: %v, want it refused", err)
	}
	for _, bad := range []string{`{`, `{"name":"x"}`, `{"plugins":[1]}`} {
		if _, err := WithDataDir([]byte(bad), "/d"); err == nil {
			t.Errorf("WithDataDir(%s) succeeded", bad)
		}
	}
}

// fakeNode makes a node and a pod namespace and a plugin directory with
// the fake plugins; everything goes when the test ends.
func fakeNode(t *testing.T) (*Node, Pod, string) {
	t.Helper()
	kerneltest.RequireRoot(t)
	run := kerneltest.RunID()
	node, pod := "cnb-"+run+"-node", "cnb-"+run+"-pod"
	for _, ns := range []string{node, pod} {
		if err := netns.Add(ns); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := netns.Delete(ns); err != nil {
				t.Error(err)
			}
		})
	}
	bin := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"fakeplug", "loopback"} {
		if err := os.Symlink(self, filepath.Join(bin, p)); err != nil {
			t.Fatal(err)
		}
	}
	log := filepath.Join(t.TempDir(), "calls.jsonl")
	t.Setenv(fakeLogEnv, log)
	n := &Node{Name: "server", Netns: node, Dir: filepath.Join(t.TempDir(), "server"), Path: []string{t.TempDir(), bin}}
	return n, Pod{ID: pod, Netns: pod, IfName: "eth0"}, log
}

func readCalls(t *testing.T, log string) []call {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var out []call
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var c call
		if err := json.Unmarshal([]byte(l), &c); err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// TestAddDelAsARuntime checks how the plugins are called: in the node's
// namespace, argument vector = the plugin's path alone, the CNI_*
// environment a runtime sets, the configuration with the node's IPAM
// directory on stdin, loopback with the pod network on ADD and last on DEL, and the ADD's
// result as prevResult on DEL.
func TestAddDelAsARuntime(t *testing.T) {
	n, pod, log := fakeNode(t)
	res, err := n.Add(context.Background(), pod, []byte(fakeConf))
	if err != nil {
		t.Fatal(err)
	}
	if res.IP.String() != "10.1.2.3" || res.HostVeth != "" {
		t.Errorf("result %+v, want IP 10.1.2.3 and no host veth", res)
	}
	cache, _ := filepath.Glob(filepath.Join(n.Dir, CacheDir, "results", "*"))
	if len(cache) != 2 {
		t.Errorf("cached results %v, want loopback's and fakenet's", cache)
	}
	if err := n.Del(context.Background(), pod, []byte(fakeConf)); err != nil {
		t.Fatal(err)
	}
	if cache, _ := filepath.Glob(filepath.Join(n.Dir, CacheDir, "results", "*")); len(cache) != 0 {
		t.Errorf("cached results left after DEL: %v", cache)
	}
	var nodeNS string
	if err := netns.Do(n.Netns, func() (err error) { nodeNS, err = os.Readlink("/proc/thread-self/ns/net"); return err }); err != nil {
		t.Fatal(err)
	}
	calls := readCalls(t, log)
	// The two ADDs run at once (TestAddRunsBothNetworksAtOnce): in either order.
	if len(calls) == 4 && filepath.Base(calls[0].Argv[0]) == "fakeplug" {
		calls[0], calls[1] = calls[1], calls[0]
	}
	var got []string
	for _, c := range calls {
		got = append(got, filepath.Base(c.Argv[0])+" "+c.Env["CNI_COMMAND"]+" "+c.Env["CNI_IFNAME"])
	}
	if want := []string{"loopback ADD lo", "fakeplug ADD eth0", "fakeplug DEL eth0", "loopback DEL lo"}; !slices.Equal(got, want) {
		t.Fatalf("calls %v, want %v", got, want)
	}
	for i, c := range calls {
		if len(c.Argv) != 1 || filepath.Dir(c.Argv[0]) != n.Path[1] {
			t.Errorf("call %d: argv %v, want the plugin's path in %s alone", i, c.Argv, n.Path[1])
		}
		if c.Netns != nodeNS {
			t.Errorf("call %d ran in %s, the node's namespace is %s", i, c.Netns, nodeNS)
		}
		want := map[string]string{
			"CNI_CONTAINERID": pod.ID, "CNI_NETNS": netns.Path(pod.Netns), "CNI_PATH": strings.Join(n.Path, ":"),
			"CNI_ARGS": "IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=" + pod.ID + ";K8S_POD_INFRA_CONTAINER_ID=" + pod.ID,
		}
		for k, v := range want {
			if c.Env[k] != v {
				t.Errorf("call %d: %s=%q, want %q", i, k, c.Env[k], v)
			}
		}
	}
	var add, del struct {
		CNIVersion string          `json:"cniVersion"`
		Name       string          `json:"name"`
		MTU        int             `json:"mtu"`
		PrevResult json.RawMessage `json:"prevResult"`
		IPAM       struct {
			DataDir string `json:"dataDir"`
		} `json:"ipam"`
	}
	if err := json.Unmarshal(calls[1].Stdin, &add); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(calls[2].Stdin, &del); err != nil {
		t.Fatal(err)
	}
	if add.CNIVersion != "1.0.0" || add.Name != "fakenet" || add.MTU != 1450 || add.IPAM.DataDir != filepath.Join(n.Dir, NetworksDir) {
		t.Errorf("ADD stdin %s: want cniVersion 1.0.0, name fakenet, mtu 1450, ipam.dataDir %s", calls[1].Stdin, filepath.Join(n.Dir, NetworksDir))
	}
	if !strings.Contains(string(del.PrevResult), "10.1.2.3/24") {
		t.Errorf("DEL stdin %s: want the ADD's result as prevResult", calls[2].Stdin)
	}
}

// As containerd by default (go-cni's Setup), the loopback network and the
// pod's are set up at the same time: each fake plugin waits for the
// other to start, which fails when they run one after the other.
func TestAddRunsBothNetworksAtOnce(t *testing.T) {
	n, pod, _ := fakeNode(t)
	t.Setenv(fakeMeetEnv, t.TempDir())
	var steps []string
	pod.Done = func(step string) { steps = append(steps, step) }
	if _, err := n.Add(context.Background(), pod, []byte(fakeConf)); err != nil {
		t.Fatal(err)
	}
	if err := n.Del(context.Background(), pod, []byte(fakeConf)); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(steps, []string{"cni fakeplug"}) {
		t.Errorf("steps %q, want one, the pod network's, ending when both are up", steps)
	}
}

// TestAddErrors: a plugin's CNI error comes back whole (errors.As finds
// the *types.Error) with its stderr; a missing plugin is named.
func TestAddErrors(t *testing.T) {
	n, pod, _ := fakeNode(t)
	t.Setenv(fakeFailEnv, "1")
	_, err := n.Add(context.Background(), pod, []byte(fakeConf))
	var te *types.Error
	if !errors.As(err, &te) || te.Code != 11 || !strings.Contains(err.Error(), "fake plugin complains") || !strings.Contains(err.Error(), "node server") {
		t.Errorf("Add = %v, want the plugin's error 11 with its stderr and the node", err)
	}
	if err := n.Del(context.Background(), pod, []byte(fakeConf)); err != nil {
		t.Errorf("Del after a failed Add: %v", err)
	}
	missing := strings.Replace(fakeConf, "fakeplug", "nosuchplugin", 1)
	if _, err := n.Add(context.Background(), pod, []byte(missing)); err == nil || !strings.Contains(err.Error(), "nosuchplugin") {
		t.Errorf("Add with a missing plugin = %v", err)
	}
}
