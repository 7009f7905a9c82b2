package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/mcpgram/mcpgram/store"
)

const (
	getGrantSQL = `SELECT sealed, version, updated_at FROM oauth_grants WHERE server = ? AND user_id = ?`
	putGrantSQL = `INSERT INTO oauth_grants (server, user_id, sealed, version, updated_at, signed_in_at) VALUES (?, ?, ?, 1, ?, ?)
		ON CONFLICT (server, user_id) DO UPDATE SET sealed = excluded.sealed, version = oauth_grants.version + 1,
			refresh_until = NULL, updated_at = excluded.updated_at, signed_in_at = excluded.signed_in_at
		RETURNING version`
	claimGrantSQL = `UPDATE oauth_grants SET refresh_until = ?
		WHERE server = ? AND user_id = ? AND version = ? AND (refresh_until IS NULL OR refresh_until <= ?)`
	updateGrantSQL = `UPDATE oauth_grants SET sealed = ?, version = version + 1, refresh_until = NULL, updated_at = ?
		WHERE server = ? AND user_id = ? AND version = ? RETURNING version`
	grantExistsSQL = `SELECT 1 FROM oauth_grants WHERE server = ? AND user_id = ?`
	listGrantsSQL  = `SELECT server, signed_in_at, updated_at FROM oauth_grants WHERE user_id = ? ORDER BY server`
)

// GetOAuthGrant returns the grant of server for userID, or
// store.ErrNotFound.
func (db *DB) GetOAuthGrant(ctx context.Context, server, userID string) (store.OAuthGrant, error) {
	g := store.OAuthGrant{Server: server, UserID: userID}
	var updated int64
	err := db.readRow(ctx, getGrantSQL, server, userID).Scan(&g.Sealed, &g.Version, &updated)
	if err != nil {
		return store.OAuthGrant{}, fmt.Errorf("get sign-in to %q: %w", server, notFound(err))
	}
	g.UpdatedAt = fromMillis(updated)
	return g, nil
}

// PutOAuthGrant stores a new sign-in, replacing any, and returns its
// version.
func (db *DB) PutOAuthGrant(ctx context.Context, server, userID string, sealed []byte) (int64, error) {
	var v int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		now := millis(db.now())
		return db.txRow(ctx, tx, putGrantSQL, server, userID, sealed, now, now).Scan(&v)
	})
	if err != nil {
		return 0, fmt.Errorf("store sign-in to %q: %w", server, err)
	}
	return v, nil
}

// ClaimOAuthRefresh claims the refresh of the grant at version until
// until; the one writer makes the check and the claim one step.
func (db *DB) ClaimOAuthRefresh(ctx context.Context, server, userID string, version int64, until time.Time) (bool, error) {
	var n int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		res, err := db.txExec(ctx, tx, claimGrantSQL, millis(until), server, userID, version, millis(db.now()))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return false, fmt.Errorf("claim the refresh of the sign-in to %q: %w", server, err)
	}
	return n == 1, nil
}

// UpdateOAuthGrant replaces the grant at version.
func (db *DB) UpdateOAuthGrant(ctx context.Context, server, userID string, version int64, sealed []byte) (int64, error) {
	var v int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		err := db.txRow(ctx, tx, updateGrantSQL, sealed, millis(db.now()), server, userID, version).Scan(&v)
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		var one int
		if err := db.txRow(ctx, tx, grantExistsSQL, server, userID).Scan(&one); errors.Is(err, sql.ErrNoRows) {
			return store.ErrNotFound
		} else if err != nil {
			return err
		}
		return store.ErrChanged
	})
	if err != nil {
		return 0, fmt.Errorf("update sign-in to %q: %w", server, err)
	}
	return v, nil
}

// DeleteOAuthGrant forgets the grant, if any.
func (db *DB) DeleteOAuthGrant(ctx context.Context, server, userID string) error {
	_, err := db.writeExec(ctx, `DELETE FROM oauth_grants WHERE server = ? AND user_id = ?`, server, userID)
	if err != nil {
		return fmt.Errorf("delete sign-in to %q: %w", server, err)
	}
	return nil
}

// TakeOAuthGrant forgets the grant and returns it, in one statement of
// the one writer: of two takes, one gets it.
func (db *DB) TakeOAuthGrant(ctx context.Context, server, userID string) (store.OAuthGrant, error) {
	g := store.OAuthGrant{Server: server, UserID: userID}
	var updated int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		return db.txRow(ctx, tx, `DELETE FROM oauth_grants WHERE server = ? AND user_id = ? RETURNING sealed, version, updated_at`,
			server, userID).Scan(&g.Sealed, &g.Version, &updated)
	})
	if err != nil {
		return store.OAuthGrant{}, fmt.Errorf("take sign-in to %q: %w", server, notFound(err))
	}
	g.UpdatedAt = fromMillis(updated)
	return g, nil
}

// ListOAuthGrants returns the grants of userID, by server name, without
// what they seal.
func (db *DB) ListOAuthGrants(ctx context.Context, userID string) ([]store.OAuthGrantInfo, error) {
	rows, err := db.readRows(ctx, listGrantsSQL, userID)
	if err != nil {
		return nil, fmt.Errorf("list sign-ins: %w", err)
	}
	defer func() { _ = rows.Close() }()
	out := []store.OAuthGrantInfo{}
	for rows.Next() {
		g := store.OAuthGrantInfo{UserID: userID}
		var signedIn, updated int64
		if err := rows.Scan(&g.Server, &signedIn, &updated); err != nil {
			return nil, fmt.Errorf("list sign-ins: %w", err)
		}
		g.SignedInAt, g.UpdatedAt = fromMillis(signedIn), fromMillis(updated)
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list sign-ins: %w", err)
	}
	return out, nil
}

// GetOAuthClient returns a registered client, or store.ErrNotFound.
func (db *DB) GetOAuthClient(ctx context.Context, server, issuer, redirectURI string) ([]byte, error) {
	var sealed []byte
	err := db.readRow(ctx, `SELECT sealed FROM oauth_clients WHERE server = ? AND issuer = ? AND redirect_uri = ?`,
		server, issuer, redirectURI).Scan(&sealed)
	if err != nil {
		return nil, fmt.Errorf("get client of %q: %w", server, notFound(err))
	}
	return sealed, nil
}

// PutOAuthClient stores a registered client, replacing any.
func (db *DB) PutOAuthClient(ctx context.Context, server, issuer, redirectURI string, sealed []byte) error {
	_, err := db.writeExec(ctx, `INSERT INTO oauth_clients (server, issuer, redirect_uri, sealed, created_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (server, issuer, redirect_uri) DO UPDATE SET sealed = excluded.sealed, created_at = excluded.created_at`,
		server, issuer, redirectURI, sealed, millis(db.now()))
	if err != nil {
		return fmt.Errorf("store client of %q: %w", server, err)
	}
	return nil
}

// PutOAuthFlow stores a sign-in under way and forgets expired ones.
func (db *DB) PutOAuthFlow(ctx context.Context, f store.OAuthFlow) error {
	err := db.write(ctx, func(tx *sql.Tx) error {
		if _, err := db.txExec(ctx, tx, `DELETE FROM oauth_flows WHERE expires_at <= ?`, millis(db.now())); err != nil {
			return err
		}
		_, err := db.txExec(ctx, tx, `INSERT INTO oauth_flows (state, server, user_id, sealed, expires_at) VALUES (?, ?, ?, ?, ?)`,
			f.State, f.Server, f.UserID, f.Sealed, millis(f.ExpiresAt))
		return err
	})
	if err != nil {
		return fmt.Errorf("store sign-in flow for %q: %w", f.Server, err)
	}
	return nil
}

// GetOAuthFlow returns the flow named state, leaving it.
func (db *DB) GetOAuthFlow(ctx context.Context, state string) (store.OAuthFlow, error) {
	f := store.OAuthFlow{State: state}
	var expires int64
	err := db.readRow(ctx, `SELECT server, user_id, sealed, expires_at FROM oauth_flows WHERE state = ?`, state).
		Scan(&f.Server, &f.UserID, &f.Sealed, &expires)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && expires <= millis(db.now())) {
		err = store.ErrNotFound
	}
	if err != nil {
		return store.OAuthFlow{}, fmt.Errorf("get sign-in flow: %w", err)
	}
	f.ExpiresAt = fromMillis(expires)
	return f, nil
}

// TakeOAuthFlow returns the flow named state and forgets it, in one step:
// of two takes, one gets it.
func (db *DB) TakeOAuthFlow(ctx context.Context, state string) (store.OAuthFlow, error) {
	f := store.OAuthFlow{State: state}
	var expires int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		return db.txRow(ctx, tx, `DELETE FROM oauth_flows WHERE state = ? RETURNING server, user_id, sealed, expires_at`, state).
			Scan(&f.Server, &f.UserID, &f.Sealed, &expires)
	})
	err = notFound(err)
	if err == nil && expires <= millis(db.now()) {
		err = store.ErrNotFound
	}
	if err != nil {
		return store.OAuthFlow{}, fmt.Errorf("take sign-in flow: %w", err)
	}
	f.ExpiresAt = fromMillis(expires)
	return f, nil
}
