package iperf3

import (
	"math"
	"path/filepath"
	"testing"
)

func seed(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seeds: %v", err)
	}
	for _, name := range files {
		f.Add(readTestdata(f, filepath.Base(name)))
	}
}

func FuzzParseServer(f *testing.F) {
	seed(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseServer(data)
		if err != nil {
			return
		}
		if !(s.MeasuredSeconds > 0) || math.IsNaN(s.Bitrate) || math.IsInf(s.Bitrate, 0) {
			t.Fatalf("accepted a report with window %v s and bitrate %v", s.MeasuredSeconds, s.Bitrate)
		}
	})
}

func FuzzParseClient(f *testing.F) {
	seed(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseClient(data)
		if err != nil {
			return
		}
		if math.IsNaN(c.SenderBitrate) || math.IsInf(c.SenderBitrate, 0) {
			t.Fatalf("accepted sender bitrate %v", c.SenderBitrate)
		}
	})
}
