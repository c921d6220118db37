package app

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/cnibench/cnibench/internal/study"
)

// durationFlag is a duration flag that keeps the text it was given, so a
// refusal quotes the user ("--budget -1h"), not Go's rendering of the
// value ("-1h0m0s").
type durationFlag struct {
	d    *time.Duration
	text string
}

// durationVar defines the flag as pflag's DurationVar does.
func durationVar(fs *pflag.FlagSet, p *time.Duration, name string, value time.Duration, usage string) {
	*p = value
	fs.Var(&durationFlag{d: p}, name, usage)
}

func (f *durationFlag) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*f.d, f.text = d, s
	return nil
}

func (f *durationFlag) String() string {
	if f.text != "" {
		return f.text
	}
	return shortDuration(*f.d)
}

func (f *durationFlag) Type() string { return "duration" }

// flagText is the text a flag was given (its default's when it was not).
func flagText(fs *pflag.FlagSet, name string) string { return fs.Lookup(name).Value.String() }

// shortDuration is study.ShortDuration, and "0" for none, which --help
// then leaves out, as pflag does for its own zero durations.
func shortDuration(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	return study.ShortDuration(d)
}
