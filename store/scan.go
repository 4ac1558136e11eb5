package store

import (
	"context"
	"database/sql"
)

// rowScanner is what a scan function reads one row from: a *sql.Row or
// *sql.Rows (an alias, so the scanX functions written for either fit).
type rowScanner = interface{ Scan(...any) error }

// queryAll runs q and reads every row with scan: the store's one
// query, scan and append loop.
func queryAll[T any](ctx context.Context, s *Store, scan func(rowScanner) (T, error), q string, args ...any) ([]T, error) {
	rows, err := s.query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return collect(rows, scan)
}

// collect reads every row of rows with scan, and closes rows.
func collect[T any](rows *sql.Rows, scan func(rowScanner) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// scanString reads a row of one text column.
func scanString(r rowScanner) (string, error) {
	var v string
	err := r.Scan(&v)
	return v, err
}
