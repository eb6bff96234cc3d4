package storage

import (
	"context"
	"database/sql"
	"strings"
)

// rowsPerInsert rows go into one multi-row INSERT: each statement
// execution costs a cgo call and database/sql's bookkeeping (a result, a
// connection grab, the arguments' conversion slice), so fewer executions
// per batch roughly double the insert rate and allocate a fraction.
// 128 rows of up to 9 columns stay far below SQLite's 32,766 parameters.
const rowsPerInsert = 128

// insertRows inserts n rows: head is "INSERT ... (columns) VALUES", each
// row has cols values, and add appends row i's to args. The full chunks
// share one prepared statement; the last, shorter one is prepared once.
func insertRows(ctx context.Context, tx *sql.Tx, head string, cols, n int, add func(args []any, i int) []any) error {
	return upsertRows(ctx, tx, head, "", cols, n, add)
}

// upsertRows is insertRows with tail after the values, an ON CONFLICT
// clause: SQLite applies it to each row in turn, as if inserted one by one.
func upsertRows(ctx context.Context, tx *sql.Tx, head, tail string, cols, n int, add func(args []any, i int) []any) error {
	row := "(" + strings.TrimSuffix(strings.Repeat("?,", cols), ",") + "),"
	var full *sql.Stmt
	args := make([]any, 0, min(n, rowsPerInsert)*cols)
	for from := 0; from < n; from += rowsPerInsert {
		to := min(n, from+rowsPerInsert)
		args = args[:0]
		for i := from; i < to; i++ {
			args = add(args, i)
		}
		q := func() string { return head + " " + strings.TrimSuffix(strings.Repeat(row, to-from), ",") + " " + tail }
		var err error
		if to-from == rowsPerInsert {
			if full == nil {
				if full, err = tx.PrepareContext(ctx, q()); err != nil {
					return err
				}
				defer full.Close()
			}
			_, err = full.ExecContext(ctx, args...)
		} else {
			_, err = tx.ExecContext(ctx, q(), args...)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
