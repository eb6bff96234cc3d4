package model

import "testing"

func TestLagMethodSaysWhatThePagesShowed(t *testing.T) {
	for m, want := range map[LagMethod]string{
		PositionUnknown:                   "",
		PositionEstimate:                  "sync + DR end offset",
		PositionConnect.WithMarkers():     "connect offsets + markers",
		PositionSaved:                     "saved before restart",
		PositionClusterLink.WithMarkers(): "cluster link REST + markers",
		PositionRestartCopied:             "source log restarted: counted as far as DR received records since",
		LagMethod(positionMarkers - 1):    "unknown method",
	} {
		if got := m.String(); got != want {
			t.Errorf("%d: %q, want %q", m, got, want)
		}
	}
	if PositionConnect.WithMarkers().Base() != PositionConnect {
		t.Error("Base does not undo WithMarkers")
	}
}
