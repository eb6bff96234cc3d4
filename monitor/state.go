package monitor

import (
	"context"
	"sync"
	"time"

	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// MirrorState is the newest MM2 bookkeeping of one flow, kept in memory for
// the lag refresh and fed by ingestion. It starts from what SQLite holds, so
// the console knows the last state even if a cluster is gone at start-up.
type MirrorState struct {
	// Syncs is the flow's whole sync history.
	Syncs *mm2.SyncIndex

	mu        sync.RWMutex
	connect   map[model.TP]model.ConnectOffset
	heartbeat *model.Heartbeat
	ingest    map[string]*model.IngestStats
}

// NewMirrorState returns an empty state.
func NewMirrorState() *MirrorState {
	return &MirrorState{Syncs: mm2.NewSyncIndex(), connect: map[model.TP]model.ConnectOffset{}, ingest: map[string]*model.IngestStats{}}
}

// Load fills the state from the database.
func (s *MirrorState) Load(ctx context.Context, store *storage.Store, flow string) error {
	if err := LoadSyncIndex(ctx, s.Syncs, store, flow); err != nil {
		return err
	}
	cos, err := store.ConnectOffsets(ctx, flow)
	if err != nil {
		return err
	}
	hbs, err := store.Heartbeats(ctx, flow)
	if err != nil {
		return err
	}
	s.apply(storage.Batch{ConnectOffsets: cos, Heartbeats: hbs})
	return nil
}

// LoadSyncIndex adds every stored sync of flow to x.
func LoadSyncIndex(ctx context.Context, x *mm2.SyncIndex, store *storage.Store, flow string) error {
	return x.AddFrom(func(add func(model.OffsetSync) error) error { return store.EachSync(ctx, flow, add) })
}

// apply merges a stored batch into the state.
func (s *MirrorState) apply(b storage.Batch) {
	s.Syncs.Add(b.Syncs)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range b.ConnectOffsets {
		tp := model.TP{Topic: c.Topic, Partition: c.Partition}
		if old, ok := s.connect[tp]; !ok || (model.SyncKey{Incarnation: old.Incarnation, LogOffset: old.LogOffset}).Before(model.SyncKey{Incarnation: c.Incarnation, LogOffset: c.LogOffset}) {
			s.connect[tp] = c
		}
	}
	for _, h := range b.Heartbeats {
		if s.heartbeat == nil || h.EmittedMs > s.heartbeat.EmittedMs {
			h := h
			s.heartbeat = &h
		}
	}
}

func (s *MirrorState) noteIngest(topic string, records, decodeErrors int64, lastErr string, lastRecordAt time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.ingest[topic]
	if st == nil {
		st = &model.IngestStats{Topic: topic}
		s.ingest[topic] = st
	}
	st.Records += records
	st.DecodeErrors += decodeErrors
	if lastErr != "" {
		st.LastError = lastErr
	}
	if lastRecordAt.After(st.LastRecordAt) {
		st.LastRecordAt = lastRecordAt
	}
	st.LastReadAt = time.Now()
}

// positions is a copy of what a refresh needs of the state besides MM2's
// per-partition positions, which it looks up (newestSync, connectOffset):
// copying those whole maps each refresh was ~30 MB of garbage a refresh at
// 100k partitions, twice (the lag read and the loss judge).
type positions struct {
	heartbeat *model.Heartbeat
	ingest    []model.IngestStats
}

// newestSync is MM2's newest offset sync of tp.
func (s *MirrorState) newestSync(tp model.TP) (model.OffsetSync, bool) { return s.Syncs.Newest(tp) }

// connectOffset is MM2's newest Connect position of tp.
func (s *MirrorState) connectOffset(tp model.TP) (model.ConnectOffset, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	c, ok := s.connect[tp]
	return c, ok
}

func (s *MirrorState) snapshot() positions {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var p positions
	if s.heartbeat != nil {
		h := *s.heartbeat
		p.heartbeat = &h
	}
	for _, st := range s.ingest {
		p.ingest = append(p.ingest, *st)
	}
	return p
}
