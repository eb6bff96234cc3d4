package storage

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/drconsole/drconsole/model"
)

// ResolveIncarnation returns the incarnation of (cluster, topic, topicID),
// registering it when first seen (created is then true). The first
// incarnation seen under a name adopts the rows stored before incarnations
// were tracked (incarnation 0) only when the topic's log still covers them:
// ends (end offset per partition, nil when unknown) at or past every stored
// resume position. Otherwise it starts afresh, which at worst re-reads.
func (s *Store) ResolveIncarnation(ctx context.Context, flow, cluster, topic, topicID string, ends map[int32]int64) (inc model.Incarnation, created bool, err error) {
	id, err := s.flowID(ctx, flow)
	if err != nil {
		return model.Incarnation{}, false, err
	}
	inc = model.Incarnation{Cluster: cluster, Topic: topic, TopicID: topicID}
	err = s.tx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT incarnation, first_seen_ms, note FROM topic_incarnations
			WHERE flow_id=? AND cluster=? AND topic=? AND topic_id=?`, id, cluster, topic, topicID).
			Scan(&inc.Incarnation, &inc.FirstSeenMs, &inc.Note)
		if err == nil {
			return nil
		}
		if err != sql.ErrNoRows {
			return err
		}
		created = true
		inc.FirstSeenMs = time.Now().UnixMilli()
		var seenName int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM topic_incarnations WHERE flow_id=? AND topic=?`,
			id, topic).Scan(&seenName); err != nil {
			return err
		}
		legacy := map[int32]int64{}
		if seenName == 0 {
			rows, err := tx.QueryContext(ctx, `SELECT partition, next_offset FROM ingest_positions
				WHERE flow_id=? AND topic=? AND incarnation=0`, id, topic)
			if err != nil {
				return err
			}
			for rows.Next() {
				var p int32
				var next int64
				if err := rows.Scan(&p, &next); err != nil {
					rows.Close()
					return err
				}
				legacy[p] = next
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
		switch {
		case len(legacy) > 0 && covers(ends, legacy):
			inc.Incarnation, inc.Note = 0, "adopted the history stored before topic ids were tracked"
		default:
			var maxInc sql.NullInt64
			if err := tx.QueryRowContext(ctx, `SELECT max(incarnation) FROM topic_incarnations WHERE flow_id=?`,
				id).Scan(&maxInc); err != nil {
				return err
			}
			inc.Incarnation = max(maxInc.Int64, 0) + 1
			switch {
			case seenName > 0:
				inc.Note = "the topic was recreated (new topic id): its log restarted"
			case len(legacy) > 0:
				inc.Note = "the stored positions lie past this topic's end: it was recreated while the console was not watching"
			default:
				inc.Note = model.IncarnationFirstSeen
			}
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO topic_incarnations (flow_id, cluster, topic, topic_id, incarnation, first_seen_ms, note)
			VALUES (?,?,?,?,?,?,?)`, id, cluster, topic, topicID, inc.Incarnation, inc.FirstSeenMs, inc.Note)
		return err
	})
	if err != nil {
		return model.Incarnation{}, false, fmt.Errorf("storage: incarnation of %s on %s: %w", topic, cluster, err)
	}
	return inc, created, nil
}

// Incarnations lists a flow's internal topic incarnations, oldest first.
func (s *Store) Incarnations(ctx context.Context, flow string) ([]model.Incarnation, error) {
	id, err := s.flowID(ctx, flow)
	if err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx, `SELECT cluster, topic, topic_id, incarnation, first_seen_ms, note
		FROM topic_incarnations WHERE flow_id=? ORDER BY first_seen_ms, incarnation`, id)
	if err != nil {
		return nil, fmt.Errorf("storage: reading incarnations: %w", err)
	}
	defer rows.Close()
	var out []model.Incarnation
	for rows.Next() {
		var x model.Incarnation
		if err := rows.Scan(&x.Cluster, &x.Topic, &x.TopicID, &x.Incarnation, &x.FirstSeenMs, &x.Note); err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, rows.Err()
}

// covers reports whether every stored position is at or below its
// partition's end offset.
func covers(ends, positions map[int32]int64) bool {
	if ends == nil {
		return false
	}
	for p, next := range positions {
		if end, ok := ends[p]; !ok || next > end {
			return false
		}
	}
	return true
}
