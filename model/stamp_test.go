package model

import (
	"testing"
	"time"
)

func TestStampKeepsTheInstantAndTheZero(t *testing.T) {
	if StampOf(time.Time{}) != 0 || !Stamp(0).Time().IsZero() {
		t.Error("the zero time does not survive as a stamp")
	}
	at := time.Date(2026, 12, 7, 1, 2, 3, 456789, time.FixedZone("x", 3600))
	if got := StampOf(at).Time(); !got.Equal(at) {
		t.Errorf("%s came back as %s", at, got)
	}
}
