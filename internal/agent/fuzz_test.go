package agent

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzServeRequests feeds arbitrary lines to a session (as the exec
// stream would) against a node held in memory. Every line gets exactly
// one well-formed answer, and nothing panics. Ops that would reach the
// real machine (devices, iptables, perf, samplers, the node's CNI files)
// are rewritten to ping: the decoding, not those helpers, is under test.
func FuzzServeRequests(f *testing.F) {
	f.Add([]byte(`{"id":1,"op":"write","netns":"","fs":"sysfs","path":"class/net/eth1/queues/rx-0/rps_cpus","value":"3"}` + "\n" + `{"id":2,"op":"read","fs":"sysfs","path":"class/net/eth1/queues/rx-0/rps_cpus"}`))
	f.Add([]byte(`{"id":3,"op":"write","fs":"proc","path":"/proc/sys/../../etc/passwd","value":"x"}`))
	f.Add([]byte("{\"id\":4,\"op\":\"list\",\"netns\":\"pod:ns/srv-0\",\"fs\":\"sysfs\",\"path\":\"class/net\"}\n{not json\n\n"))
	f.Add([]byte(`{"id":5,"op":"revert"}`))
	safe := map[string]bool{OpPing: true, OpRead: true, OpWrite: true, OpList: true, OpRevert: true, OpMissing: true}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > 4096 {
			return
		}
		var lines [][]byte
		for _, l := range bytes.Split(in, []byte("\n")) {
			var req Request
			if json.Unmarshal(l, &req) == nil && !safe[req.Op] {
				l = []byte(`{"op":"ping"}`)
			}
			lines = append(lines, l)
		}
		fs := testNode()
		srv := NewServer(Config{Run: "fz", FS: fs, Pods: fakePods{"ns/srv-0": "podns1"}, JournalDir: t.TempDir()})
		var out bytes.Buffer
		_ = srv.Serve(bytes.NewReader(bytes.Join(lines, []byte("\n"))), &out)
		want := 0
		for _, l := range lines {
			if len(strings.TrimSpace(string(l))) > 0 {
				want++
			}
		}
		got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if out.Len() == 0 {
			got = nil
		}
		if len(got) != want {
			t.Fatalf("%d answers to %d requests", len(got), want)
		}
		for _, g := range got {
			var resp Response
			if err := json.Unmarshal([]byte(g), &resp); err != nil {
				t.Fatalf("malformed answer %q: %v", g, err)
			}
		}
		// The session reverted what it wrote when its input ended.
		fresh := testNode()
		for k, v := range fresh.vals {
			if fs.vals[k] != v {
				t.Fatalf("%s is %q after the session, was %q", k, fs.vals[k], v)
			}
		}
	})
}
