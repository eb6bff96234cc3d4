//go:build e2e

package testenv_test

// The Kafka version matrix: the version-sensitive end-to-end checks on the Kafka versions
// besides the main one (testenv.KafkaDefault, which runs the whole suite). Per version: the
// bytes the console decodes (offset syncs, checkpoints, heartbeats, Connect offsets) in
// dedicated and Connect mode, translation against real checkpoints, and lag while MM2 is held
// behind a producer. The helpers are the main suite's, run with another testenv.KafkaDist.
//
//	go test -tags e2e -count=1 -run TestKafkaMatrix -v ./testenv/

import (
	"testing"

	"github.com/drconsole/drconsole/testenv"
)

func TestKafkaMatrix(t *testing.T) {
	for _, d := range []testenv.KafkaDist{testenv.Kafka3_9, testenv.Kafka4_4} {
		t.Run(d.String(), func(t *testing.T) {
			// The variants the main version's runs leave out where they can: dedicated with
			// default-source, translation with default-target.
			t.Run("dedicated-"+variants[1].name, func(t *testing.T) { runScenario(t, d, dedicated, variants[1]) })
			t.Run("connect-"+variants[0].name, func(t *testing.T) { runScenario(t, d, connectCluster, variants[0]) })
			t.Run("translate-"+xlVariants[2].name, func(t *testing.T) { xlScenario(t, d, xlVariants[2]) })
			t.Run("lag", func(t *testing.T) { consoleLagMatchesMM2(t, d) })
		})
	}
}
