package model

// AbortedBatch is one batch of an aborted transaction's data records.
type AbortedBatch struct {
	First, Last int64 // offsets of the batch's first and last record
	Records     int64
}

// AbortedAfter counts the records of batches at or after upstream offset
// from: what a consumer translated from there reads in DR although the
// primary's readers never saw it.
func AbortedAfter(bs []AbortedBatch, from int64) int64 {
	var n int64
	for _, b := range bs {
		if b.Last >= from {
			n += min(b.Records, b.Last-max(b.First, from)+1)
		}
	}
	return n
}
