package proc

import "sync"

// capped keeps the first max bytes written to it and counts the rest. It
// never fails a write, so the program is not killed by EPIPE because we
// stopped listening.
type capped struct {
	mu      sync.Mutex
	buf     []byte
	max     int
	dropped int64
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.max - len(c.buf)
	if room >= len(p) {
		c.buf = append(c.buf, p...)
	} else {
		if room > 0 {
			c.buf = append(c.buf, p[:room]...)
		}
		c.dropped += int64(len(p) - max(room, 0))
	}
	return len(p), nil
}

func (c *capped) bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]byte(nil), c.buf...)
}
