package main

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestTHPAdvice(t *testing.T) {
	for _, tc := range []struct {
		cost   time.Duration
		mode   string
		advice bool
	}{
		{13 * time.Microsecond, "madvise", true},
		{13 * time.Microsecond, "never", true},
		{13 * time.Microsecond, "always", false},
		{1 * time.Microsecond, "madvise", false},
		{13 * time.Microsecond, "unknown (" + thpSetting + " not readable)", false},
	} {
		got := thpAdvice(tc.cost, tc.mode)
		if (got != "") != tc.advice {
			t.Errorf("thpAdvice(%v, %q) = %q, want advice: %v", tc.cost, tc.mode, got, tc.advice)
		}
		if got != "" && !strings.Contains(got, "echo always") {
			t.Errorf("thpAdvice(%v, %q) = %q: does not say what to run", tc.cost, tc.mode, got)
		}
	}
}

func TestMemoryCheck(t *testing.T) {
	c := memoryCheck()
	if runtime.GOOS != "linux" {
		if !strings.Contains(c.Value, "not measured") {
			t.Fatalf("memoryCheck on %s: %q", runtime.GOOS, c.Value)
		}
		return
	}
	if !strings.Contains(c.Value, " µs; transparent huge pages: ") || !c.Optional {
		t.Fatalf("memoryCheck: %+v", c)
	}
	cost, err := pageFaultCost()
	if err != nil || cost <= 0 || cost > time.Millisecond {
		t.Fatalf("pageFaultCost() = %v, %v", cost, err)
	}
}
