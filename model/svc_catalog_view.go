package model

import (
	"errors"
	"time"
)

// UsabilityTimeout bounds the usability judgement of one page: Kafka may
// be gone, and the page must still render.
const UsabilityTimeout = 10 * time.Second

// ErrOffsetsUnreadable is wrapped by Register when the savepoint was
// registered but its Kafka offsets could not be read.
var ErrOffsetsUnreadable = errors.New("offsets could not be read")
