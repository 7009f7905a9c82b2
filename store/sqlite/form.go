package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/mcpgram/mcpgram/store"
)

const (
	formColumns   = `id, chat_id, user_id, payload, version, created_at, expires_at, resolved_at, resolution`
	insertFormSQL = `INSERT INTO forms (chat_id, user_id, payload, created_at, expires_at) VALUES (?, ?, ?, ?, ?)`
	getFormSQL    = `SELECT ` + formColumns + ` FROM forms WHERE id = ?`
	openFormsSQL  = `SELECT ` + formColumns + ` FROM forms WHERE chat_id = ? AND resolved_at IS NULL ORDER BY id`
	saveFormSQL   = `UPDATE forms SET payload = ?, version = version + 1,
		resolved_at = CASE WHEN ? = '' THEN NULL ELSE ? END, resolution = NULLIF(?, '')
		WHERE id = ? AND version = ? AND resolved_at IS NULL`
	formStateSQL = `SELECT version, resolved_at IS NOT NULL FROM forms WHERE id = ?`
)

// CreateForm stores f, open, and returns its id.
func (db *DB) CreateForm(ctx context.Context, f store.Form) (int64, error) {
	now := db.now()
	created := f.CreatedAt
	if created.IsZero() {
		created = now
	}
	var id int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		if err := db.ensureChat(ctx, tx, f.ChatID, now); err != nil {
			return err
		}
		res, err := db.txExec(ctx, tx, insertFormSQL, f.ChatID, f.UserID, f.Payload, millis(created), millis(f.ExpiresAt))
		if err != nil {
			return err
		}
		id, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("create form for chat %q: %w", f.ChatID, err)
	}
	return id, nil
}

func scanForm(s scanner) (store.Form, error) {
	var f store.Form
	var resolved sql.NullInt64
	var resolution sql.NullString
	var created, expires int64
	if err := s.Scan(&f.ID, &f.ChatID, &f.UserID, &f.Payload, &f.Version, &created, &expires, &resolved, &resolution); err != nil {
		return store.Form{}, err
	}
	f.CreatedAt, f.ExpiresAt = fromMillis(created), fromMillis(expires)
	f.ResolvedAt, f.Resolution = fromNullMillis(resolved), resolution.String
	return f, nil
}

// GetForm returns the form with the given id, open or not, or
// store.ErrNotFound.
func (db *DB) GetForm(ctx context.Context, id int64) (store.Form, error) {
	f, err := scanForm(db.readRow(ctx, getFormSQL, id))
	if err != nil {
		return store.Form{}, fmt.Errorf("get form %d: %w", id, notFound(err))
	}
	return f, nil
}

// SaveForm replaces the payload of the open form id at version, resolving
// it too with a resolution. The write transaction makes the check and the
// update one step: of two saves of one version, the second finds the
// version moved on.
func (db *DB) SaveForm(ctx context.Context, id, version int64, payload, resolution string) error {
	now := millis(db.now())
	err := db.write(ctx, func(tx *sql.Tx) error {
		res, err := db.txExec(ctx, tx, saveFormSQL, payload, resolution, now, resolution, id, version)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return err
		}
		var cur int64
		var resolved bool
		switch err := db.txRow(ctx, tx, formStateSQL, id).Scan(&cur, &resolved); {
		case errors.Is(err, sql.ErrNoRows):
			return store.ErrNotFound
		case err != nil:
			return err
		case resolved:
			return store.ErrResolved
		}
		return store.ErrChanged
	})
	if err != nil {
		return fmt.Errorf("save form %d: %w", id, err)
	}
	return nil
}

// OpenForms returns the chat's open forms, oldest first.
func (db *DB) OpenForms(ctx context.Context, chatID string) ([]store.Form, error) {
	rows, err := db.readRows(ctx, openFormsSQL, chatID)
	if err != nil {
		return nil, fmt.Errorf("open forms of chat %q: %w", chatID, err)
	}
	defer func() { _ = rows.Close() }()
	var out []store.Form
	for rows.Next() {
		f, err := scanForm(rows)
		if err != nil {
			return nil, fmt.Errorf("open forms of chat %q: %w", chatID, err)
		}
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("open forms of chat %q: %w", chatID, err)
	}
	return out, nil
}
