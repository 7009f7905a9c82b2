package oauthfake

import (
	"net/http"
	"slices"
)

// Token revocation (RFC 7009) at URL()+"/revoke", listed in the
// authorization server's metadata as revocation_endpoint unless
// RevokeFault is NoEndpoint.

// A RevokeFault is how the revocation endpoint misbehaves.
type RevokeFault int

// The faults of the revocation endpoint.
const (
	// RevokeWorks: it revokes what it is sent, and answers 200.
	RevokeWorks RevokeFault = iota
	// NoEndpoint: the metadata lists no revocation endpoint.
	NoEndpoint
	// RevokeErrors: it answers 503 with an OAuth error, revoking nothing.
	RevokeErrors
	// RevokeHangs: it answers nothing until the client gives up.
	RevokeHangs
	// RevokeGarbage: it answers 500 with a page that is no JSON.
	RevokeGarbage
)

// A Revocation is one token a client asked to revoke, as it asked.
type Revocation struct {
	Token, Hint, ClientID string
	// Known says the token was one this server gave.
	Known bool
}

type revocations struct {
	fault RevokeFault
	done  []Revocation
	tried int
}

// SetRevokeFault makes the revocation endpoint misbehave as f.
func (s *Server) SetRevokeFault(f RevokeFault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rev.fault = f
}

// Revoked returns the revocations done so far, in order.
func (s *Server) Revoked() []Revocation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.rev.done)
}

// RevokeRequests counts the requests the revocation endpoint received,
// whether or not it answered them.
func (s *Server) RevokeRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rev.tried
}

// withRevocation adds the revocation endpoint to the metadata m.
func (s *Server) withRevocation(m map[string]any) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rev.fault != NoEndpoint {
		m["revocation_endpoint"] = s.URL() + "/revoke"
	}
	return m
}

// revoke ends the token it is sent, access or refresh, as RFC 7009 has
// it: a public client names itself by client_id; an unknown token is no
// error.
func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.PostForm.Get("token") == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	f := r.PostForm
	s.mu.Lock()
	s.rev.tried++
	fault := s.rev.fault
	if fault != RevokeWorks {
		s.mu.Unlock()
		switch fault {
		case RevokeHangs:
			<-r.Context().Done()
		case RevokeGarbage:
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte("<html><body>\x00\xff oops {not json</body></html>"))
		default:
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "temporarily_unavailable", "error_description": "try later"})
		}
		return
	}
	defer s.mu.Unlock()
	if _, ok := s.clients[f.Get("client_id")]; !ok {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	tok := f.Get("token")
	_, access := s.access[tok]
	_, refresh := s.refresh[tok]
	delete(s.access, tok)
	delete(s.refresh, tok)
	s.rev.done = append(s.rev.done, Revocation{Token: tok, Hint: f.Get("token_type_hint"), ClientID: f.Get("client_id"), Known: access || refresh})
	w.WriteHeader(http.StatusOK)
}
