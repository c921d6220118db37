package flanneld

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"time"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/internal/daemon"
	"github.com/cnibench/cnibench/internal/netns"
)

// etcdClient speaks etcd's v3 JSON gateway (POST /v3/kv/...) from inside
// a node namespace: etcd listens only on a node's underlay address, which
// the host cannot reach. Sockets keep the namespace they were created in,
// so dialling inside netns.Do is enough.
type etcdClient struct {
	url  string
	http *http.Client
}

func newEtcdClient(ns, url string) *etcdClient {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			var conn net.Conn
			err := netns.Do(ns, func() error {
				var err error
				var d net.Dialer
				conn, err = d.DialContext(ctx, network, addr)
				return err
			})
			return conn, err
		},
		DisableKeepAlives: true,
	}
	return &etcdClient{url: url, http: &http.Client{Transport: tr, Timeout: 5 * time.Second}}
}

func (c *etcdClient) post(ctx context.Context, path string, req, resp any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	res, err := c.http.Do(r)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("etcd %s: %s: %s", path, res.Status, bytes.TrimSpace(b))
	}
	if resp == nil {
		return nil
	}
	return json.Unmarshal(b, resp)
}

// put writes key=value. Equivalent to: etcdctl put KEY VALUE
func (c *etcdClient) put(ctx context.Context, key, value string) error {
	return c.post(ctx, "/v3/kv/put", map[string]string{
		"key":   base64.StdEncoding.EncodeToString([]byte(key)),
		"value": base64.StdEncoding.EncodeToString([]byte(value)),
	}, nil)
}

// countPrefix counts keys under prefix.
// Equivalent to: etcdctl get --prefix --count-only PREFIX
func (c *etcdClient) countPrefix(ctx context.Context, prefix string) (int, error) {
	end := []byte(prefix)
	end[len(end)-1]++
	var resp struct {
		Count string `json:"count"`
	}
	err := c.post(ctx, "/v3/kv/range", map[string]any{
		"key":        base64.StdEncoding.EncodeToString([]byte(prefix)),
		"range_end":  base64.StdEncoding.EncodeToString(end),
		"count_only": true,
	}, &resp)
	if err != nil {
		return 0, err
	}
	if resp.Count == "" {
		return 0, nil
	}
	return strconv.Atoi(resp.Count)
}

// healthy reports whether etcd answers /health with "true".
func (c *etcdClient) healthy(ctx context.Context) bool {
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url+"/health", nil)
	if err != nil {
		return false
	}
	res, err := c.http.Do(r)
	if err != nil {
		return false
	}
	defer res.Body.Close()
	var h struct {
		Health string `json:"health"`
	}
	_ = json.NewDecoder(res.Body).Decode(&h)
	return res.StatusCode == http.StatusOK && h.Health == "true"
}

// startEtcd runs the cluster's one etcd on node n, listening on its
// underlay address, waits until it answers and writes the flannel
// network config flanneld reads.
func (d *Datapath) startEtcd(ctx context.Context, etcd string, n datapath.Node) error {
	url := fmt.Sprintf("http://%s", net.JoinHostPort(n.UnderlayIP.String(), strconv.Itoa(etcdPort)))
	peer := "http://127.0.0.1:2380"
	e, err := daemon.Start(n.Netns, n.Name, d.dir, []string{etcd,
		"--name=cnibench", "--data-dir=" + filepath.Join(d.dir, "etcd"),
		"--listen-client-urls=" + url, "--advertise-client-urls=" + url,
		"--listen-peer-urls=" + peer, "--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=cnibench=" + peer, "--initial-cluster-state=new",
		"--logger=zap", "--log-level=warn"})
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.etcd, d.etcdURL = e, url
	d.mu.Unlock()
	c := newEtcdClient(n.Netns, url)
	for !c.healthy(ctx) {
		if ok, _ := e.Exited(); ok {
			return e.ErrExited()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("etcd on %s not healthy after %s; its log ends:\n%s", n.Name, startTimeout, e.Tail(8))
		case <-time.After(100 * time.Millisecond):
		}
	}
	cfg := fmt.Sprintf(`{"Network":%q,"Backend":{"Type":%q}}`, Network, d.backend)
	if d.backend == "udp" {
		cfg = fmt.Sprintf(`{"Network":%q,"Backend":{"Type":"udp","Port":%d}}`, Network, udpPort)
	}
	if err := c.put(ctx, EtcdPrefix+"/config", cfg); err != nil {
		return fmt.Errorf("write flannel network config to etcd: %w", err)
	}
	return nil
}

// etcdNetns is the namespace of the node that runs etcd, the only one
// its client can reach it from.
func (d *Datapath) etcdNetns(nodes []datapath.Node) string {
	for _, n := range nodes {
		if d.etcd != nil && n.Name == d.etcd.Node() {
			return n.Netns
		}
	}
	return nodes[0].Netns
}
