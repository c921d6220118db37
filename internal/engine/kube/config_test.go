package kube

import (
	"strings"
	"testing"
	"time"
)

// An unset timeout is the default; a negative one is refused, not
// silently turned into the default.
func TestTimeoutPositive(t *testing.T) {
	if c := (Config{}).WithDefaults(); c.Timeout != DefaultTimeout || c.Validate() != nil {
		t.Errorf("unset: %v, %v; want %v and valid", c.Timeout, c.Validate(), DefaultTimeout)
	}
	c := Config{Timeout: -time.Second}.WithDefaults()
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "--pod-timeout -1s: want a positive duration") {
		t.Errorf("Timeout -1s: %v (kept %v)", err, c.Timeout)
	}
	c.Timeout = 0
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "--pod-timeout 0s") {
		t.Errorf("Timeout 0 after the defaults: %v", err)
	}
}
