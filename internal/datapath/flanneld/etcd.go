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
	"strconv"
	"time"

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
