//go:build !linux

package server

import "time"

// processCPU is unknown here: /varz reports cpu 0.
func processCPU() time.Duration { return 0 }

// systemMemory is unknown here: /jsz reports max_memory 0.
func systemMemory() int64 { return 0 }

// diskAvailable is unknown here: /jsz reports max_storage 0.
func diskAvailable(string) int64 { return 0 }
