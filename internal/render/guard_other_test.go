//go:build !linux

package render_test

func limitProcess(uint64, uint64) error { return nil }

const canLimitProcess = false
