package postgres

import (
	"context"

	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcpgram/mcpgram/store"
)

// GetOAuthGrant returns the grant of server for userID, or
// store.ErrNotFound.
func (db *DB) GetOAuthGrant(ctx context.Context, server, userID string) (store.OAuthGrant, error) {
	g := store.OAuthGrant{Server: server, UserID: userID}
	var updated int64
	err := db.row(ctx, `SELECT sealed, version, updated_at FROM oauth_grants WHERE server = $1 AND user_id = $2`,
		[]any{text(server), text(userID)}, &g.Sealed, &g.Version, &updated)
	if err != nil {
		return store.OAuthGrant{}, fmt.Errorf("get sign-in to %q: %w", server, notFound(err))
	}
	g.UpdatedAt = fromMillis(updated)
	return g, nil
}

// PutOAuthGrant stores a new sign-in, replacing any, and returns its
// version. Run again after a lost answer it counts one version more,
// which only makes a waiting refresh read the grant again.
func (db *DB) PutOAuthGrant(ctx context.Context, server, userID string, sealed []byte) (int64, error) {
	var v int64
	err := db.do(ctx, idempotent, func(int) error {
		return db.pool.QueryRow(ctx, `INSERT INTO oauth_grants (server, user_id, sealed, version, updated_at, signed_in_at) VALUES ($1, $2, $3, 1, $4, $4)
			ON CONFLICT (server, user_id) DO UPDATE SET sealed = excluded.sealed, version = oauth_grants.version + 1,
				refresh_until = NULL, updated_at = excluded.updated_at, signed_in_at = excluded.signed_in_at
			RETURNING version`, text(server), text(userID), sealed, millis(time.Now())).Scan(&v)
	})
	if err != nil {
		return 0, fmt.Errorf("store sign-in to %q: %w", server, err)
	}
	return v, nil
}

// ClaimOAuthRefresh claims the refresh of the grant at version until
// until. Of two claims at once, the second UPDATE waits for the first's
// row and then finds the claim held. Not run again after a lost answer:
// a claim that went in unknown to its caller only delays the refresh
// until it ends.
func (db *DB) ClaimOAuthRefresh(ctx context.Context, server, userID string, version int64, until time.Time) (bool, error) {
	tag, err := db.exec(ctx, once, `UPDATE oauth_grants SET refresh_until = $1
		WHERE server = $2 AND user_id = $3 AND version = $4 AND (refresh_until IS NULL OR refresh_until <= $5)`,
		millis(until), text(server), text(userID), version, millis(time.Now()))
	if err != nil {
		return false, fmt.Errorf("claim the refresh of the sign-in to %q: %w", server, err)
	}
	return tag.RowsAffected() == 1, nil
}

// UpdateOAuthGrant replaces the grant at version. Not run again after a
// lost answer: it would find its own version moved on.
func (db *DB) UpdateOAuthGrant(ctx context.Context, server, userID string, version int64, sealed []byte) (int64, error) {
	var v int64
	var exists bool
	err := db.do(ctx, once, func(int) error {
		return db.pool.QueryRow(ctx, `WITH done AS (
				UPDATE oauth_grants SET sealed = $1, version = version + 1, refresh_until = NULL, updated_at = $2
				WHERE server = $3 AND user_id = $4 AND version = $5 RETURNING version)
			SELECT coalesce((SELECT version FROM done), 0),
				EXISTS (SELECT 1 FROM oauth_grants WHERE server = $3 AND user_id = $4)`,
			sealed, millis(time.Now()), text(server), text(userID), version).Scan(&v, &exists)
	})
	switch {
	case err != nil:
	case v > 0:
		return v, nil
	case !exists:
		err = store.ErrNotFound
	default:
		err = store.ErrChanged
	}
	return 0, fmt.Errorf("update sign-in to %q: %w", server, err)
}

// DeleteOAuthGrant forgets the grant, if any.
func (db *DB) DeleteOAuthGrant(ctx context.Context, server, userID string) error {
	if _, err := db.exec(ctx, idempotent, `DELETE FROM oauth_grants WHERE server = $1 AND user_id = $2`, text(server), text(userID)); err != nil {
		return fmt.Errorf("delete sign-in to %q: %w", server, err)
	}
	return nil
}

// TakeOAuthGrant forgets the grant and returns it, in one statement: of
// two takes, the second DELETE waits for the first's row and finds it
// gone. Not run again after a lost answer: the grant would be gone.
func (db *DB) TakeOAuthGrant(ctx context.Context, server, userID string) (store.OAuthGrant, error) {
	g := store.OAuthGrant{Server: server, UserID: userID}
	var updated int64
	err := db.do(ctx, once, func(int) error {
		return db.pool.QueryRow(ctx, `DELETE FROM oauth_grants WHERE server = $1 AND user_id = $2 RETURNING sealed, version, updated_at`,
			text(server), text(userID)).Scan(&g.Sealed, &g.Version, &updated)
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
	var out []store.OAuthGrantInfo
	err := db.do(ctx, reads, func(int) error {
		rows, err := db.pool.Query(ctx, `SELECT server, signed_in_at, updated_at FROM oauth_grants WHERE user_id = $1 ORDER BY server COLLATE "C"`,
			text(userID))
		if err == nil {
			out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.OAuthGrantInfo, error) {
				g := store.OAuthGrantInfo{UserID: userID}
				var signedIn, updated int64
				err := r.Scan(&g.Server, &signedIn, &updated)
				g.SignedInAt, g.UpdatedAt = fromMillis(signedIn), fromMillis(updated)
				return g, err
			})
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list sign-ins: %w", err)
	}
	if out == nil {
		out = []store.OAuthGrantInfo{}
	}
	return out, nil
}

// GetOAuthClient returns a registered client, or store.ErrNotFound.
func (db *DB) GetOAuthClient(ctx context.Context, server, issuer, redirectURI string) ([]byte, error) {
	var sealed []byte
	err := db.row(ctx, `SELECT sealed FROM oauth_clients WHERE server = $1 AND issuer = $2 AND redirect_uri = $3`,
		[]any{text(server), text(issuer), text(redirectURI)}, &sealed)
	if err != nil {
		return nil, fmt.Errorf("get client of %q: %w", server, notFound(err))
	}
	return sealed, nil
}

// PutOAuthClient stores a registered client, replacing any.
func (db *DB) PutOAuthClient(ctx context.Context, server, issuer, redirectURI string, sealed []byte) error {
	_, err := db.exec(ctx, idempotent, `INSERT INTO oauth_clients (server, issuer, redirect_uri, sealed, created_at) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (server, issuer, redirect_uri) DO UPDATE SET sealed = excluded.sealed, created_at = excluded.created_at`,
		text(server), text(issuer), text(redirectURI), sealed, millis(time.Now()))
	if err != nil {
		return fmt.Errorf("store client of %q: %w", server, err)
	}
	return nil
}

// PutOAuthFlow stores a sign-in under way and forgets expired ones.
func (db *DB) PutOAuthFlow(ctx context.Context, f store.OAuthFlow) error {
	err := db.tx(ctx, idempotent, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM oauth_flows WHERE expires_at <= $1`, millis(time.Now())); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO oauth_flows (state, server, user_id, sealed, expires_at) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (state) DO NOTHING`,
			text(f.State), text(f.Server), text(f.UserID), f.Sealed, millis(f.ExpiresAt))
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
	err := notFound(db.row(ctx, `SELECT server, user_id, sealed, expires_at FROM oauth_flows WHERE state = $1`,
		[]any{text(state)}, &f.Server, &f.UserID, &f.Sealed, &expires))
	if err == nil && expires <= millis(time.Now()) {
		err = store.ErrNotFound
	}
	if err != nil {
		return store.OAuthFlow{}, fmt.Errorf("get sign-in flow: %w", err)
	}
	f.ExpiresAt = fromMillis(expires)
	return f, nil
}

// TakeOAuthFlow returns the flow named state and forgets it, in one
// statement: of two takes, one gets it. Not run again after a lost answer:
// the flow would be gone.
func (db *DB) TakeOAuthFlow(ctx context.Context, state string) (store.OAuthFlow, error) {
	f := store.OAuthFlow{State: state}
	var expires int64
	err := db.do(ctx, once, func(int) error {
		return db.pool.QueryRow(ctx, `DELETE FROM oauth_flows WHERE state = $1 RETURNING server, user_id, sealed, expires_at`,
			text(state)).Scan(&f.Server, &f.UserID, &f.Sealed, &expires)
	})
	err = notFound(err)
	if err == nil && expires <= millis(time.Now()) {
		err = store.ErrNotFound
	}
	if err != nil {
		return store.OAuthFlow{}, fmt.Errorf("take sign-in flow: %w", err)
	}
	f.ExpiresAt = fromMillis(expires)
	return f, nil
}
