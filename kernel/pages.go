package main

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// thpSetting is where Linux says when a process's memory gets transparent huge pages.
const thpSetting = "/sys/kernel/mm/transparent_hugepage/enabled"

// slowFault is the cost of a first touch of a 4 KiB page above which doctor suggests huge pages
// for every process. A cell's compile and link get them from setup's huge-page tools
// (kernel/internal/thptools); "always" also gives them to the go command of a notebook's first
// cell, GoNB, goimports and the cells' programs. Measured on a 2-core AMD EPYC Zen 5 guest with
// 14–16 µs faults (2026-11-29, go run ./kernel bench --cells): warm cells 0.86 / 0.83 s with the
// stock tools, 0.60 / 0.58 s with the huge-page ones, 0.56 s with those and "always"; first cells
// 1.8 s, 1.8 s and 1.5 s.
const slowFault = 4 * time.Microsecond

// memoryCheck reports what a first touch of a page costs here and the huge-page setting, with
// advice where cells would link faster with huge pages.
func memoryCheck() check {
	c := check{Name: "memory", Optional: true}
	cost, err := pageFaultCost()
	if err != nil {
		c.Value = "page faults not measured: " + err.Error()
		return c
	}
	mode := thpMode()
	c.Value = fmt.Sprintf("a first touch of a 4 KiB page costs %.1f µs; transparent huge pages: %s", float64(cost.Nanoseconds())/1e3, mode)
	c.Problem = thpAdvice(cost, mode)
	return c
}

// thpAdvice is doctor's advice for a page-fault cost and a huge-page mode ("always", "madvise",
// "never", or a description when unknown), or "" when there is none to give.
func thpAdvice(cost time.Duration, mode string) string {
	if cost < slowFault || mode == "always" || strings.Contains(mode, "unknown") {
		return ""
	}
	return fmt.Sprintf("optional: page faults are slow here (in a virtual machine, often) and every cell builds and links a program; "+
		"warm cells compile and link on huge pages (setup's thp tools), and huge pages for every process took a notebook's first cell "+
		"from 1.8 s to 1.5 s on one such machine: echo always | sudo tee %s (the host's setting, containers' too; see docs/notebooks.md)", thpSetting)
}

// thpMode is the bracketed word of thpSetting ("always [madvise] never" → "madvise").
func thpMode() string {
	b, err := os.ReadFile(thpSetting)
	if err != nil {
		return "unknown (" + thpSetting + " not readable)"
	}
	s := string(b)
	i, j := strings.Index(s, "["), strings.Index(s, "]")
	if i < 0 || j < i {
		return "unknown (" + strings.TrimSpace(s) + ")"
	}
	return s[i+1 : j]
}
