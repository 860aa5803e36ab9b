//go:build !linux

package main

import (
	"errors"
	"time"
)

func pageFaultCost() (time.Duration, error) { return 0, errors.New("measured on Linux only") }
