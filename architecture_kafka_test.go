package main

import (
	"slices"
	"strings"
	"testing"
)

// franzGoRooms may import franz-go in non-test files: kafka reads, the
// effect door writes, and the simulated or measured worlds (demo, scale,
// testenv) run Kafka stand-ins of their own.
var franzGoRooms = []string{
	"kafka", "kafka/kafkatest", "runbook/internal/effect", "demo", "scale", "testenv",
}

// TestKafkaRoom: one room per outside system. Everything else reaches
// Kafka through package kafka's functions, so a read is written once.
func TestKafkaRoom(t *testing.T) {
	for _, p := range listPackages(t) {
		room := rel(p.ImportPath)
		if slices.Contains(franzGoRooms, room) {
			continue
		}
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, "github.com/twmb/franz-go") {
				t.Errorf("%s imports %s; reads belong in package kafka, writes in runbook/internal/effect", room, imp)
			}
		}
	}
}
